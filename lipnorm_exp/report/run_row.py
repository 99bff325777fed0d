"""The report's row of one run, declared once: `RunRow`, its columns and the name of each.

[`record_row`][lipnorm_exp.report.frame.record_row] makes one `RunRow` of each record, and the
report's frame ([`load_records`][lipnorm_exp.report.frame.load_records]) holds one row per run
with its columns, in their order (`COLUMNS`). The column lists are read from the declaration:
`COLUMNS`, `NUMERIC_COLUMNS` (the frame holds them as floats) and `CONFIG_KEYS` (the config key
each config column is read from, and its value where a record lacks it). The names of single
columns (`SEED`, `LABEL`, ...; those that are a record's keys are
[`lipnorm_exp.records.schema`][lipnorm_exp.records.schema]'s) are literal types of those keys: the
report reads a column of its frames by its name, so a misspelt column fails ``mypy`` where it is
spelt.
"""

from dataclasses import dataclass
from types import UnionType
from typing import (
    Annotated,
    Any,
    Final,
    TypedDict,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

from lipnorm_exp.records.identity import ADDED_KEYS
from lipnorm_exp.records.schema import (
    BEST_EPOCH,
    BEST_TRAIN_ACC,
    BEST_VAL_ACC,
    CONFIG,
    DIVERGED_AT_EPOCH,
    EPOCHS_RUN,
    ERROR,
    FINAL_TRAIN_ACC,
    FINISHED_AT,
    GIT_COMMIT,
    HISTORY,
    MACHINE,
    METRIC,
    NUMERICS,
    RUN_ID,
    STATUS,
    TEST_ACC_AT_BEST_VAL,
    TRAIN_ACC_AT_BEST_VAL,
    EpochRow,
    Status,
    Summary,
)


@dataclass(frozen=True)
class ConfigKey:
    """Where a config column is read from: a run's config at ``dotted``.

    Args:
        dotted (str): the config key, ``dataset.name``.
        default (Any): the column's value where the config lacks the key (``None``: no value).
    """

    dotted: str
    default: Any = None


class RecordColumns(TypedDict):
    """A record's own first columns: which run, its file, how and when it ended."""

    run_id: str
    status: Status
    #: what ended a run that did not complete
    error: str | None
    #: the record's file
    path: str
    finished_at: str | None


class ConfigColumns(TypedDict):
    """The config keys the report splits and shows runs by, each column's `ConfigKey`."""

    seed: Annotated[int, ConfigKey("seed")]
    scale: Annotated[str, ConfigKey("scale")]
    dataset: Annotated[str, ConfigKey("dataset.name")]
    missing_rate: Annotated[float, ConfigKey("dataset.missing_rate", 0.0)]
    #: the depth of TREES' trees; ``None`` for another dataset
    tree_depth: Annotated[int | None, ConfigKey("dataset.depth")]
    passes_per_epoch: Annotated[int, ConfigKey("dataset.passes_per_epoch", 1)]
    model: Annotated[str, ConfigKey("model.name")]
    #: the graph layers
    depth: Annotated[int, ConfigKey("model.depth")]
    hidden: Annotated[int, ConfigKey("model.hidden")]
    heads: Annotated[int | None, ConfigKey("model.heads")]
    concat: Annotated[bool | None, ConfigKey("model.concat")]
    dropout: Annotated[float, ConfigKey("model.dropout")]
    residual: Annotated[bool, ConfigKey("model.residual", False)]
    norm: Annotated[str, ConfigKey("norm.name")]
    variant: Annotated[str | None, ConfigKey("norm.variant")]
    lr: Annotated[float, ConfigKey("train.lr")]
    epochs: Annotated[int, ConfigKey("train.epochs")]
    protocol: Annotated[str, ConfigKey("protocol.name", "standard")]
    ablation: Annotated[str | None, ConfigKey("ablation.name")]
    ablation_factor: Annotated[str | None, ConfigKey("ablation.factor")]
    #: the epoch the protocol reports (records made before protocols named one: ``best_val``)
    reported_epoch: Annotated[
        str, ConfigKey("protocol.reported_epoch", ADDED_KEYS[("protocol", "reported_epoch")])
    ]
    #: the protocol's std convention (records made before protocols named one: 1)
    std_ddof: Annotated[int, ConfigKey("protocol.std_ddof", ADDED_KEYS[("protocol", "std_ddof")])]


class LastEpoch(TypedDict):
    """The validation and test accuracy of a run's last epoch, where it trained its full budget.

    ``None`` for any other run ([`final_epoch`][lipnorm_exp.report.frame.final_epoch]).
    """

    final_val_acc: float | None
    final_test_acc: float | None


class RunRow(RecordColumns, ConfigColumns, Summary, LastEpoch):
    """One run of the report: its record in the columns of the report's frame, in this order.

    The `RecordColumns`; the `ConfigColumns`; the summary's keys
    ([`Summary`][lipnorm_exp.records.schema.Summary], ``None`` where a record has none); the
    `LastEpoch`; then the columns below.
    """

    #: the model label ([`model_label`][lipnorm_exp.records.labels.model_label])
    label: str
    #: everything that defines the run except its seed
    #: ([`setting_key`][lipnorm_exp.records.setting_key]): records equal in ``setting`` are
    #: seeds of one hyper-parameter setting
    setting: str
    #: the presets the run serves (``config.tags``)
    tags: list[str]
    #: the machine it ran on ([`machine_label`][lipnorm_exp.report.frame.machine_label])
    machine: str
    git_commit: str | None
    numerics: int | None
    #: the record's epochs, as it holds them
    history: list[EpochRow]
    #: the whole config
    config: dict[str, Any]


# the name of each column that is not a record's key (those are the record schema's, above)
PATH: Final = "path"
SEED: Final = "seed"
SCALE: Final = "scale"
DATASET: Final = "dataset"
MISSING_RATE: Final = "missing_rate"
TREE_DEPTH: Final = "tree_depth"
PASSES_PER_EPOCH: Final = "passes_per_epoch"
MODEL: Final = "model"
DEPTH: Final = "depth"
HIDDEN: Final = "hidden"
HEADS: Final = "heads"
CONCAT: Final = "concat"
DROPOUT: Final = "dropout"
RESIDUAL: Final = "residual"
NORM: Final = "norm"
VARIANT: Final = "variant"
LR: Final = "lr"
EPOCHS: Final = "epochs"
PROTOCOL: Final = "protocol"
ABLATION: Final = "ablation"
ABLATION_FACTOR: Final = "ablation_factor"
REPORTED_EPOCH: Final = "reported_epoch"
STD_DDOF: Final = "std_ddof"
FINAL_VAL_ACC: Final = "final_val_acc"
FINAL_TEST_ACC: Final = "final_test_acc"
LABEL: Final = "label"
SETTING: Final = "setting"
TAGS: Final = "tags"


def _holds_numbers(hint: Any) -> bool:
    """Whether a column of type ``hint`` holds numbers: ints or floats (or ``None``), no bool."""
    union = get_origin(hint) in (Union, UnionType)
    kinds = set(get_args(hint) if union else (hint,)) - {type(None)}
    return kinds <= {int, float}


#: every column, in the order of the frame
COLUMNS: tuple[str, ...] = tuple(get_type_hints(RunRow))
#: the columns of numbers, which the frame holds as floats (``NaN`` where a record has none)
NUMERIC_COLUMNS: tuple[str, ...] = tuple(
    column for column, hint in get_type_hints(RunRow).items() if _holds_numbers(hint)
)
#: each config column and where it is read from, in the order of the frame
CONFIG_KEYS: dict[str, ConfigKey] = {
    column: hint.__metadata__[0]
    for column, hint in get_type_hints(ConfigColumns, include_extras=True).items()
}


__all__ = [
    "ABLATION",
    "ABLATION_FACTOR",
    "BEST_EPOCH",
    "BEST_TRAIN_ACC",
    "BEST_VAL_ACC",
    "COLUMNS",
    "CONCAT",
    "CONFIG",
    "CONFIG_KEYS",
    "DATASET",
    "DEPTH",
    "DIVERGED_AT_EPOCH",
    "DROPOUT",
    "EPOCHS",
    "EPOCHS_RUN",
    "ERROR",
    "FINAL_TEST_ACC",
    "FINAL_TRAIN_ACC",
    "FINAL_VAL_ACC",
    "FINISHED_AT",
    "GIT_COMMIT",
    "HEADS",
    "HIDDEN",
    "HISTORY",
    "LABEL",
    "LR",
    "MACHINE",
    "METRIC",
    "MISSING_RATE",
    "MODEL",
    "NORM",
    "NUMERICS",
    "NUMERIC_COLUMNS",
    "PASSES_PER_EPOCH",
    "PATH",
    "PROTOCOL",
    "REPORTED_EPOCH",
    "RESIDUAL",
    "RUN_ID",
    "SCALE",
    "SEED",
    "SETTING",
    "STATUS",
    "STD_DDOF",
    "TAGS",
    "TEST_ACC_AT_BEST_VAL",
    "TRAIN_ACC_AT_BEST_VAL",
    "TREE_DEPTH",
    "VARIANT",
    "ConfigColumns",
    "ConfigKey",
    "LastEpoch",
    "RecordColumns",
    "RunRow",
]
