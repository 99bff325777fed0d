"""Run records → one flat pandas DataFrame, the report's only input.

Records are read by [`lipnorm_exp.records.iter_records`][lipnorm_exp.records.iter_records] (every
``*.json`` record under the runs folder, searched recursively, each checked; a broken record is set
aside with a warning and counted in the frame's ``attrs["set_aside"]``, `SET_ASIDE`; other JSON
files are passed over with a warning).
Folder names are never read: what a run is comes from its config. Two files with the same
``run_id`` (copies of one run) count once, the one that finished last.

One row per run (`record_row`), its columns declared by `RunRow`
(``lipnorm_exp.report.run_row``): ``run_id``, ``status``, ``error``, ``path`` and
``finished_at``; the config keys of `CONFIG_KEYS` (``seed``, ``dataset``, ``depth``, ...; a
record that lacks ``protocol.reported_epoch`` or ``protocol.std_ddof`` reads ``best_val`` and 1);
the summary's keys (``NaN`` where absent); ``final_val_acc`` and ``final_test_acc`` (the last
epoch's, where the run trained its full budget: `final_epoch`); ``label`` (`model_label`);
``setting`` ([`lipnorm_exp.records.setting_key`][lipnorm_exp.records.setting_key]: everything that
defines the run except its seed, so that records equal in ``setting`` are seeds of one
hyper-parameter setting); ``tags`` (the presets the run serves); ``machine`` (`machine_label`),
``git_commit`` and ``numerics``; and, as object columns, ``history`` (the per-epoch list of dicts)
and ``config`` (the whole config). The numbers (`NUMERIC_COLUMNS`) are floats.
"""

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, cast

import pandas as pd

from lipnorm_exp.config.location import option_names
from lipnorm_exp.config.schema import SCALES
from lipnorm_exp.records import COMPLETED, iter_records, schema, setting_key
from lipnorm_exp.records.labels import model_label
from lipnorm_exp.records.schema import EPOCH, TEST_ACC, VAL_ACC, Record, Summary
from lipnorm_exp.report.run_row import (
    COLUMNS,
    CONFIG,
    CONFIG_KEYS,
    ERROR,
    FINAL_TEST_ACC,
    FINAL_VAL_ACC,
    FINISHED_AT,
    GIT_COMMIT,
    HISTORY,
    LABEL,
    MACHINE,
    NUMERIC_COLUMNS,
    NUMERICS,
    PATH,
    PROTOCOL,
    RESIDUAL,
    RUN_ID,
    SCALE,
    SETTING,
    STATUS,
    TAGS,
    ConfigColumns,
    LastEpoch,
    RunRow,
)

#: the frame's ``attrs`` key of the number of broken records set aside
SET_ASIDE: Final = "set_aside"


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


def final_epoch(record: Record) -> LastEpoch:
    """The validation and test accuracy of a run's last epoch, where it trained its full budget.

    A completed run whose ``epochs_run`` is its ``train.epochs`` and whose last ``history`` row
    is that epoch has them; any other run (diverged, stopped early, interrupted) has ``None``:
    its last epoch is not the one the protocol's budget ends on.
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
    return {FINAL_VAL_ACC: last.get(VAL_ACC), FINAL_TEST_ACC: last.get(TEST_ACC)}


def config_columns(config: Mapping[str, Any]) -> ConfigColumns:
    """A run's config columns: each one's key in ``config`` (`CONFIG_KEYS`), else its default."""
    values = {
        column: config_value(config, key.dotted, key.default) for column, key in CONFIG_KEYS.items()
    }
    return cast(ConfigColumns, values)


def summary_columns(record: Record) -> Summary:
    """A record's summary, every key of it (``None`` where the record lacks the key)."""
    summary: Mapping[str, Any] = record.get(schema.SUMMARY) or {}
    return cast(Summary, {key: summary.get(key) for key in schema.SUMMARY_KEYS})


def record_row(record: Record, path: Path | str = "") -> RunRow:
    """One DataFrame row (a `RunRow`) from one record."""
    config = record[schema.CONFIG]
    return {
        RUN_ID: record[schema.RUN_ID],
        STATUS: record[schema.STATUS],
        ERROR: record.get(schema.ERROR),
        PATH: str(path),
        FINISHED_AT: record.get(schema.FINISHED_AT),
        **config_columns(config),
        **summary_columns(record),
        **final_epoch(record),
        LABEL: model_label(config),
        SETTING: setting_key(config),
        TAGS: list(config.get("tags") or []),
        MACHINE: machine_label(record),
        GIT_COMMIT: record.get(schema.GIT_COMMIT),
        NUMERICS: record.get(schema.NUMERICS),
        HISTORY: record.get(schema.HISTORY) or [],
        CONFIG: config,
    }


def records_frame(rows: list[RunRow]) -> pd.DataFrame:
    """The DataFrame of `record_row` rows, numeric columns as floats, copies dropped."""
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    for column in NUMERIC_COLUMNS:
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    frame[RESIDUAL] = frame[RESIDUAL].astype(bool)
    frame = frame.sort_values(FINISHED_AT, na_position="first", kind="stable")
    frame = frame.drop_duplicates(RUN_ID, keep="last")
    return frame.sort_values(PATH, kind="stable").reset_index(drop=True)


def load_records(runs_dir: str | Path) -> pd.DataFrame:
    """Every record under ``runs_dir`` (recursively) as one row; see the module docstring.

    Args:
        runs_dir (str or Path): the folder holding the records (a missing one holds none).

    Returns:
        pandas.DataFrame: one row per run, with the columns of `COLUMNS`;
        ``attrs["set_aside"]`` (`SET_ASIDE`) is the number of broken records set aside.
    """
    records = iter_records(runs_dir)
    frame = known_options(records_frame([record_row(record, path) for path, record in records]))
    frame.attrs[SET_ASIDE] = len(records.set_aside)
    return frame


def known_options(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``frame`` whose ``scale`` and ``protocol`` name options the report knows.

    Those of `SCALES` and ``configs/protocol/``; each other record is left out with a warning
    naming it. A record's grid is composed from those names: a record made with a protocol this
    checkout lacks, or made by hand (``protocol.name=../x``), is not one the report can place.
    """
    allowed = {SCALE: SCALES, PROTOCOL: option_names("protocol")}
    unknown = pd.Series(False, index=frame.index)
    for column, names in allowed.items():
        named = frame[column].isna() | frame[column].isin(names)
        for path, value in zip(frame.loc[~named, PATH], frame.loc[~named, column], strict=True):
            warnings.warn(
                f"{path}: {column} {value!r} is not one of {', '.join(names)}; left out of the "
                "report",
                stacklevel=2,
            )
        unknown |= ~named
    return frame[~unknown].reset_index(drop=True)


__all__ = [
    "SET_ASIDE",
    "config_columns",
    "config_value",
    "final_epoch",
    "known_options",
    "load_records",
    "machine_label",
    "record_row",
    "records_frame",
    "summary_columns",
]
