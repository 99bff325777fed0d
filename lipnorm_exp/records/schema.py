"""The shape of a run record, declared once: `Record`, `Summary`, `EpochRow`.

A record is one JSON object per run ([`lipnorm_exp.records.store`][lipnorm_exp.records.store]). Its
shape is the typed declarations here, and the type checker holds every writer
(`lipnorm_exp.training`) and reader to them: a misspelt key fails ``mypy``. The key lists the store
checks ([`lipnorm_exp.records.store.record_problem`][lipnorm_exp.records.store.record_problem]) and
the report's columns show (`RECORD_FIELDS`, `RECORD_KEYS`, `SUMMARY_KINDS`, ...) are read from the
declarations; the names of single keys (`RUN_ID`, `VAL_ACC`, ...) are literal types
of those keys, so a reader that spells a key by its name is checked too.

Schema versions: a record without `SCHEMA_VERSION_KEY` was written before records were
versioned and reads as version 1 (`FIRST_SCHEMA_VERSION`); version 2 adds the version
itself and `NUMERICS` ([`lipnorm_exp.records.numerics`][lipnorm_exp.records.numerics]). Both
versions are read alike.
"""

from collections.abc import Mapping
from enum import Enum
from typing import (
    Annotated,
    Any,
    Final,
    Literal,
    Required,
    TypedDict,
    cast,
    get_args,
    get_type_hints,
)

#: the schema version written into every new record
SCHEMA_VERSION = 2
#: the schema version of a record that names none (one written before records were versioned)
FIRST_SCHEMA_VERSION = 1

#: how a run ended: ``completed`` and ``diverged`` are results, ``failed`` (an error) and
#: ``interrupted`` (a stop request) are not
Status = Literal["completed", "diverged", "failed", "interrupted"]
COMPLETED: Final[Status] = "completed"
DIVERGED: Final[Status] = "diverged"
FAILED: Final[Status] = "failed"
INTERRUPTED: Final[Status] = "interrupted"
#: every status a record can hold
STATUSES: tuple[Status, ...] = get_args(Status)
#: statuses that are a result: a re-launched sweep does not run them again (``force=true`` does)
FINISHED: tuple[Status, ...] = (COMPLETED, DIVERGED)


class Kind(Enum):
    """What a summary entry holds."""

    #: the name of the task's metric (``accuracy``, ``rocauc``, ...)
    NAME = "a name"
    #: a fraction in [0, 1]; ``null`` only where no epoch was scored
    ACCURACY = "a number in [0, 1]"
    #: an epoch number or a count of epochs; ``null`` where there is none
    EPOCHS = "an integer >= 0"


class Scores(TypedDict):
    """The loss and metric of every split after an epoch (`lipnorm_exp.training.epoch.score`).

    A loss is NaN (``null`` on disk) where its split holds no node; the metric (``*_acc``: an
    accuracy, a ROC-AUC, ...) is a fraction in [0, 1].
    """

    train_loss: float
    train_acc: float
    val_loss: float
    val_acc: float
    test_loss: float
    test_acc: float


class EpochRow(Scores, total=False):
    """One row of a record's ``history``: one epoch of the run.

    Written by `lipnorm_exp.training.state.RunState.end_epoch`: ``epoch`` and
    ``train_step_loss``, the [`Scores`][lipnorm_exp.records.schema.Scores], then the other keys in
    their order here. Every row holds its number, its mean training loss, the
    [`Scores`][lipnorm_exp.records.schema.Scores] and its seconds; ``lr`` only under a learning-rate
    schedule, the gradient norms only with ``train.track_gradients``, the Lipschitz estimates only
    with ``train.estimate_lipschitz`` on the epochs they are due. A value that was not finite is
    ``null`` on disk.
    """

    #: 1-based epoch number
    epoch: Required[int]
    #: mean loss of the epoch's optimiser steps
    train_step_loss: Required[float]
    #: the learning rate the epoch trained with
    lr: float
    #: the epoch's wall-clock seconds (the one column two runs that computed the same may differ in)
    time_s: float
    #: per graph layer: L2 norm of the attention parameters' gradient, of the layer's
    grad_attn: list[float]
    grad_layer: list[float]
    #: per graph layer: its Lipschitz estimate
    lipschitz: list[float]


class Summary(TypedDict):
    """A finished record's summary: its best epoch and what it scored (each key of its kind).

    Written by `lipnorm_exp.training.state.summarise`, keys in this order; the report's
    columns show them in it. A record that did not finish may hold none, or only some keys.
    """

    metric: Annotated[str, Kind.NAME]
    best_epoch: Annotated[int | None, Kind.EPOCHS]
    best_val_acc: Annotated[float | None, Kind.ACCURACY]
    test_acc_at_best_val: Annotated[float | None, Kind.ACCURACY]
    train_acc_at_best_val: Annotated[float | None, Kind.ACCURACY]
    best_train_acc: Annotated[float | None, Kind.ACCURACY]
    final_train_acc: Annotated[float | None, Kind.ACCURACY]
    epochs_run: Annotated[int, Kind.EPOCHS]
    #: the epoch whose loss or outputs were not finite; ``null`` unless the run diverged
    diverged_at_epoch: Annotated[int | None, Kind.EPOCHS]


class Machine(TypedDict, total=False):
    """The machine a run ran on (`lipnorm_exp.records.provenance.machine`).

    Records of 2024 name the first three keys only; ``slurm_job`` is there in a SLURM job only.
    """

    device: str
    cpus: int | None
    processor: str
    processor_model: str
    threads: int
    slurm_job: str


class Versions(TypedDict):
    """Versions of the software that made a record.

    Written by `lipnorm_exp.records.provenance.versions`.
    """

    python: str
    torch: str
    torch_geometric: str
    lipnorm_exp: str


class Timing(TypedDict):
    """How long a run took, in seconds, its earlier processes included (a resumed run)."""

    total_s: float
    setup_s: float
    #: over the epochs the last process trained; ``null`` where it trained none
    epoch_s_mean: float | None


class Batched(TypedDict):
    """Where a run was trained together with others: the seeds trained together."""

    seeds: list[int]


class Record(TypedDict, total=False):
    """A run record: one JSON object per run, keys in this order (the order a run writes them).

    ``run_id``, ``status`` and ``config`` are in every record; a finished one holds its
    ``summary`` and ``history`` too. Records of before the schema was versioned lack
    ``schema_version`` and ``numerics``, those of 2024 ``machine``.
    """

    schema_version: int
    #: [`lipnorm_exp.records.identity.run_id`][lipnorm_exp.records.identity.run_id] of the config:
    #: the name of the record's file
    run_id: Required[str]
    status: Required[Status]
    #: what ended a run that did not complete (``null`` for a completed one)
    error: str | None
    #: the whole resolved config
    config: Required[dict[str, Any]]
    #: the device a run trained on, as torch names it
    device: str
    machine: Machine
    versions: Versions
    git_commit: str | None
    #: the numerics version of the code that ran (`lipnorm_exp.records.numerics.
    #: NUMERICS_VERSION`); ``null`` or absent: made before numerics were versioned
    numerics: int | None
    started_at: str
    batched: Batched
    summary: Summary
    #: one row per epoch
    history: list[EpochRow]
    #: the epochs after which a resumed run's processes went on
    resumed_at: list[int]
    #: where a run stopped by an error or a stop request stopped, and where its next launch resumes
    stopped_after_epoch: int
    resumes_after_epoch: int | None
    timing: Timing
    finished_at: str


# the names of the keys, each the literal type of its key (mypy checks ``record[RUN_ID]``)
SCHEMA_VERSION_KEY: Final = "schema_version"
RUN_ID: Final = "run_id"
STATUS: Final = "status"
ERROR: Final = "error"
CONFIG: Final = "config"
DEVICE: Final = "device"
MACHINE: Final = "machine"
VERSIONS: Final = "versions"
GIT_COMMIT: Final = "git_commit"
NUMERICS: Final = "numerics"
STARTED_AT: Final = "started_at"
BATCHED: Final = "batched"
SUMMARY: Final = "summary"
HISTORY: Final = "history"
RESUMED_AT: Final = "resumed_at"
STOPPED_AFTER_EPOCH: Final = "stopped_after_epoch"
RESUMES_AFTER_EPOCH: Final = "resumes_after_epoch"
TIMING: Final = "timing"
FINISHED_AT: Final = "finished_at"

METRIC: Final = "metric"
BEST_EPOCH: Final = "best_epoch"
BEST_VAL_ACC: Final = "best_val_acc"
TEST_ACC_AT_BEST_VAL: Final = "test_acc_at_best_val"
TRAIN_ACC_AT_BEST_VAL: Final = "train_acc_at_best_val"
BEST_TRAIN_ACC: Final = "best_train_acc"
FINAL_TRAIN_ACC: Final = "final_train_acc"
EPOCHS_RUN: Final = "epochs_run"
DIVERGED_AT_EPOCH: Final = "diverged_at_epoch"

EPOCH: Final = "epoch"
TRAIN_STEP_LOSS: Final = "train_step_loss"
TRAIN_ACC: Final = "train_acc"
VAL_LOSS: Final = "val_loss"
VAL_ACC: Final = "val_acc"
TEST_ACC: Final = "test_acc"
LR: Final = "lr"
#: an epoch's wall-clock seconds (the one column two runs that computed the same may differ in)
EPOCH_TIME_KEY: Final = "time_s"
GRAD_ATTN: Final = "grad_attn"
GRAD_LAYER: Final = "grad_layer"
LIPSCHITZ: Final = "lipschitz"

#: every top-level key a record may hold, in the order a run writes them
RECORD_FIELDS: tuple[str, ...] = tuple(Record.__annotations__)
#: keys without which a JSON object is not a run record
RECORD_KEYS: tuple[str, ...] = tuple(
    key for key in RECORD_FIELDS if key in Record.__required_keys__
)
#: every key of a finished record's summary and its kind, in the order a run writes them
SUMMARY_KINDS: dict[str, Kind] = {
    key: hint.__metadata__[0] for key, hint in get_type_hints(Summary, include_extras=True).items()
}
SUMMARY_KEYS = tuple(SUMMARY_KINDS)
#: summary keys that hold a fraction in [0, 1]
SUMMARY_ACCURACIES = tuple(key for key, kind in SUMMARY_KINDS.items() if kind is Kind.ACCURACY)
#: summary keys that hold an epoch number or a count of epochs
SUMMARY_EPOCHS = tuple(key for key, kind in SUMMARY_KINDS.items() if kind is Kind.EPOCHS)


def epoch_value(row: EpochRow, column: str) -> Any:
    """The value of ``row``'s ``column`` named at run time (a config's ``train.patience_metric``).

    A key known only at run time is not one the type checker can check: such a lookup goes
    through here, where its column is any key of [`EpochRow`][lipnorm_exp.records.schema.EpochRow].
    """
    return cast(Mapping[str, Any], row)[column]


def schema_version(record: Mapping[str, Any]) -> int:
    """The schema version ``record`` was written in (`FIRST_SCHEMA_VERSION` if unnamed)."""
    return record.get(SCHEMA_VERSION_KEY, FIRST_SCHEMA_VERSION)


def numerics_version(record: Mapping[str, Any]) -> int | None:
    """The numerics version of the code that made ``record``; ``None``: made before there were."""
    return record.get(NUMERICS)


__all__ = [
    "BATCHED",
    "BEST_EPOCH",
    "BEST_TRAIN_ACC",
    "BEST_VAL_ACC",
    "COMPLETED",
    "CONFIG",
    "DEVICE",
    "DIVERGED",
    "DIVERGED_AT_EPOCH",
    "EPOCH",
    "EPOCHS_RUN",
    "EPOCH_TIME_KEY",
    "ERROR",
    "FAILED",
    "FINAL_TRAIN_ACC",
    "FINISHED",
    "FINISHED_AT",
    "FIRST_SCHEMA_VERSION",
    "GIT_COMMIT",
    "GRAD_ATTN",
    "GRAD_LAYER",
    "HISTORY",
    "INTERRUPTED",
    "LIPSCHITZ",
    "LR",
    "MACHINE",
    "METRIC",
    "NUMERICS",
    "RECORD_FIELDS",
    "RECORD_KEYS",
    "RESUMED_AT",
    "RESUMES_AFTER_EPOCH",
    "RUN_ID",
    "SCHEMA_VERSION",
    "SCHEMA_VERSION_KEY",
    "STARTED_AT",
    "STATUS",
    "STATUSES",
    "STOPPED_AFTER_EPOCH",
    "SUMMARY",
    "SUMMARY_ACCURACIES",
    "SUMMARY_EPOCHS",
    "SUMMARY_KEYS",
    "SUMMARY_KINDS",
    "TEST_ACC",
    "TEST_ACC_AT_BEST_VAL",
    "TIMING",
    "TRAIN_ACC",
    "TRAIN_ACC_AT_BEST_VAL",
    "TRAIN_STEP_LOSS",
    "VAL_ACC",
    "VAL_LOSS",
    "VERSIONS",
    "Batched",
    "EpochRow",
    "Kind",
    "Machine",
    "Record",
    "Scores",
    "Status",
    "Summary",
    "Timing",
    "Versions",
    "epoch_value",
    "numerics_version",
    "schema_version",
]
