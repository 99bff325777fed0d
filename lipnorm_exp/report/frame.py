"""Run records → one flat pandas DataFrame, the report's only input.

Records are read by [`lipnorm_exp.records.iter_records`][lipnorm_exp.records.iter_records] (every
``*.json`` record under the runs folder, searched recursively, each checked; a broken record is set
aside with a warning and counted in the frame's ``attrs["set_aside"]``, other JSON files are passed
over with a warning).
Folder names are never read: what a run is comes from its config. Two files with the same
``run_id`` (copies of one run) count once, the one that finished last.

Columns: ``run_id``, ``status``, ``error``, ``path``; the config keys of
`CONFIG_COLUMNS`; the summary metrics of `SUMMARY_KEYS`
(``NaN`` where absent); ``final_val_acc`` and ``final_test_acc`` (the last epoch's, where the
run trained its full budget: `final_epoch`); ``reported_epoch`` and ``std_ddof`` (the
protocol's ``protocol.reported_epoch``, ``best_val`` where absent, and ``protocol.std_ddof``, 1
where absent); ``label`` (`model_label`); ``setting``
([`lipnorm_exp.records.setting_key`][lipnorm_exp.records.setting_key]: everything that defines the
run except its seed, so that records equal in ``setting`` are seeds of one hyper-parameter setting);
``tags`` (the presets the run serves); ``machine`` (`machine_label`); and, as object columns,
``history`` (the per-epoch list of dicts) and ``config`` (the whole config).
"""

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from lipnorm_exp.config.location import option_names
from lipnorm_exp.config.schema import SCALES
from lipnorm_exp.records import COMPLETED, iter_records, schema, setting_key
from lipnorm_exp.records.identity import ADDED_KEYS
from lipnorm_exp.records.labels import model_label
from lipnorm_exp.records.schema import EPOCH, TEST_ACC, VAL_ACC, Record

#: column → dotted config key
CONFIG_COLUMNS = {
    "seed": "seed",
    "scale": "scale",
    "dataset": "dataset.name",
    "missing_rate": "dataset.missing_rate",
    "tree_depth": "dataset.depth",
    "passes_per_epoch": "dataset.passes_per_epoch",
    "model": "model.name",
    "depth": "model.depth",
    "hidden": "model.hidden",
    "heads": "model.heads",
    "concat": "model.concat",
    "dropout": "model.dropout",
    "residual": "model.residual",
    "norm": "norm.name",
    "variant": "norm.variant",
    "lr": "train.lr",
    "epochs": "train.epochs",
    "protocol": "protocol.name",
    "ablation": "ablation.name",
    "ablation_factor": "ablation.factor",
    "reported_epoch": "protocol.reported_epoch",
    "std_ddof": "protocol.std_ddof",
}

#: values of config keys that a record may leave out
CONFIG_DEFAULTS = {
    "missing_rate": 0.0,
    "passes_per_epoch": 1,
    "residual": False,
    "protocol": "standard",
    # the reporting rule of records made before protocols named one
    "reported_epoch": ADDED_KEYS[("protocol", "reported_epoch")],
    "std_ddof": ADDED_KEYS[("protocol", "std_ddof")],
}

#: the columns of a run's last epoch (`final_epoch`): validation and test accuracy
FINAL_VAL_ACC = "final_val_acc"
FINAL_TEST_ACC = "final_test_acc"
#: the ``history`` keys they are read from
FINAL_KEYS = {FINAL_VAL_ACC: VAL_ACC, FINAL_TEST_ACC: TEST_ACC}

NUMERIC_COLUMNS = (
    "seed",
    "missing_rate",
    "tree_depth",
    "passes_per_epoch",
    "depth",
    "hidden",
    "heads",
    "dropout",
    "lr",
    "epochs",
    "std_ddof",
    *FINAL_KEYS,
    *(key for key, kind in schema.SUMMARY_KINDS.items() if kind is not schema.Kind.NAME),
)

COLUMNS = (
    schema.RUN_ID,
    schema.STATUS,
    schema.ERROR,
    "path",
    schema.FINISHED_AT,
    *CONFIG_COLUMNS,
    *schema.SUMMARY_KEYS,
    *FINAL_KEYS,
    "label",
    "setting",
    "tags",
    schema.MACHINE,
    schema.GIT_COMMIT,
    schema.NUMERICS,
    schema.HISTORY,
    schema.CONFIG,
)


def config_value(config: Mapping[str, Any], dotted: str, default: Any = None) -> Any:
    """``config["a"]["b"]`` for ``"a.b"``, or ``default`` where a level is missing."""
    value: Any = config
    for key in dotted.split("."):
        if not isinstance(value, Mapping) or key not in value:
            return default
        value = value[key]
    return value


def machine_label(record: Record) -> str:
    """The machine a run ran on: ``cpu, 2 CPUs (x86_64)``; older records name only a device."""
    machine = record.get(schema.MACHINE)
    if not machine:
        return str(record.get(schema.DEVICE) or "unknown")
    return f"{machine['device']}, {machine['cpus']} CPUs ({machine['processor']})"


def final_epoch(record: Record) -> dict[str, float | None]:
    """The validation and test accuracy of a run's last epoch, where it trained its full budget.

    A completed run whose ``epochs_run`` is its ``train.epochs`` and whose last ``history`` row
    is that epoch has them (`FINAL_KEYS`); any other run (diverged, stopped early,
    interrupted) has ``None``: its last epoch is not the one the protocol's budget ends on.
    """
    epochs = config_value(record[schema.CONFIG], "train.epochs")
    summary = record.get(schema.SUMMARY)
    history = record.get(schema.HISTORY) or []
    full = (
        record[schema.STATUS] == COMPLETED
        and epochs is not None
        and summary is not None
        and summary.get(schema.EPOCHS_RUN) == epochs
        and bool(history)
        and history[-1].get(EPOCH) == epochs
    )
    last: Mapping[str, Any] = history[-1] if full else {}
    return {column: last.get(key) for column, key in FINAL_KEYS.items()}


def record_row(record: Record, path: Path | str = "") -> dict[str, Any]:
    """One DataFrame row (a dict keyed by `COLUMNS`) from one record."""
    config = record[schema.CONFIG]
    summary: Mapping[str, Any] = record.get(schema.SUMMARY) or {}
    row: dict[str, Any] = {
        schema.RUN_ID: record[schema.RUN_ID],
        schema.STATUS: record[schema.STATUS],
        schema.ERROR: record.get(schema.ERROR),
        "path": str(path),
        schema.FINISHED_AT: record.get(schema.FINISHED_AT),
    }
    for column, dotted in CONFIG_COLUMNS.items():
        row[column] = config_value(config, dotted, CONFIG_DEFAULTS.get(column))
    for column in schema.SUMMARY_KEYS:
        row[column] = summary.get(column)
    row.update(final_epoch(record))
    row["label"] = model_label(config)
    row["setting"] = setting_key(config)
    row["tags"] = list(config.get("tags") or [])
    row[schema.MACHINE] = machine_label(record)
    row[schema.GIT_COMMIT] = record.get(schema.GIT_COMMIT)
    row[schema.NUMERICS] = record.get(schema.NUMERICS)
    row[schema.HISTORY] = record.get(schema.HISTORY) or []
    row[schema.CONFIG] = config
    return row


def records_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The DataFrame of `record_row` rows, numeric columns as floats, copies dropped."""
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    for column in NUMERIC_COLUMNS:
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    frame["residual"] = frame["residual"].astype(bool)
    frame = frame.sort_values(schema.FINISHED_AT, na_position="first", kind="stable")
    frame = frame.drop_duplicates(schema.RUN_ID, keep="last")
    return frame.sort_values("path", kind="stable").reset_index(drop=True)


def load_records(runs_dir: str | Path) -> pd.DataFrame:
    """Every record under ``runs_dir`` (recursively) as one row; see the module docstring.

    Args:
        runs_dir (str or Path): the folder holding the records (a missing one holds none).

    Returns:
        pandas.DataFrame: one row per run, with the columns of `COLUMNS`;
        ``attrs["set_aside"]`` is the number of broken records set aside.
    """
    records = iter_records(runs_dir)
    frame = known_options(records_frame([record_row(record, path) for path, record in records]))
    frame.attrs["set_aside"] = len(records.set_aside)
    return frame


def known_options(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``frame`` whose ``scale`` and ``protocol`` name options the report knows.

    Those of `SCALES` and ``configs/protocol/``; each other record is left out with a warning
    naming it. A record's grid is composed from those names: a record made with a protocol this
    checkout lacks, or made by hand (``protocol.name=../x``), is not one the report can place.
    """
    allowed = {"scale": SCALES, "protocol": option_names("protocol")}
    unknown = pd.Series(False, index=frame.index)
    for column, names in allowed.items():
        named = frame[column].isna() | frame[column].isin(names)
        for path, value in zip(frame.loc[~named, "path"], frame.loc[~named, column], strict=True):
            warnings.warn(
                f"{path}: {column} {value!r} is not one of {', '.join(names)}; left out of the "
                "report",
                stacklevel=2,
            )
        unknown |= ~named
    return frame[~unknown].reset_index(drop=True)


__all__ = [
    "COLUMNS",
    "FINAL_KEYS",
    "FINAL_TEST_ACC",
    "FINAL_VAL_ACC",
    "config_value",
    "final_epoch",
    "known_options",
    "load_records",
    "machine_label",
    "record_row",
    "records_frame",
]
