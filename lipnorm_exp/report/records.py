"""Run records → one flat pandas DataFrame, the report's only input.

Every ``*.json`` file under the runs folder (searched recursively) that holds a record (an
object with ``run_id``, ``status`` and ``config``) becomes one row; other JSON files are
passed over with a warning. Folder names are never read: what a run is comes from its
config. Two files with the same ``run_id`` (copies of one run) count once, the one that
finished last.

Columns: ``run_id``, ``status``, ``error``, ``path``; the config keys of
:data:`CONFIG_COLUMNS`; the summary metrics of :data:`SUMMARY_COLUMNS` (``NaN`` where
absent); ``label`` (:func:`~lipnorm_exp.report.labels.model_label`); ``setting``, a
canonical text of everything that defines the run except its seed, so that records equal
in ``setting`` are seeds of one hyper-parameter setting; and ``history``, the per-epoch
list of dicts, kept as an object column.
"""

import json
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from lipnorm_exp.report.labels import model_label

#: column → dotted config key
CONFIG_COLUMNS = {
    "seed": "seed",
    "scale": "scale",
    "dataset": "dataset.name",
    "missing_rate": "dataset.missing_rate",
    "tree_depth": "dataset.depth",
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
}

#: values of config keys that a record may leave out
CONFIG_DEFAULTS = {"missing_rate": 0.0, "residual": False}

SUMMARY_COLUMNS = (
    "metric",
    "best_epoch",
    "best_val_acc",
    "test_acc_at_best_val",
    "train_acc_at_best_val",
    "best_train_acc",
    "final_train_acc",
    "epochs_run",
    "diverged_at_epoch",
)

NUMERIC_COLUMNS = (
    "seed",
    "missing_rate",
    "tree_depth",
    "depth",
    "hidden",
    "heads",
    "dropout",
    "lr",
    "epochs",
    *(column for column in SUMMARY_COLUMNS if column != "metric"),
)

#: config sections that define what a run computes (the root holds the seed and bookkeeping)
SETTING_SECTIONS = ("dataset", "model", "norm", "train")
#: keys inside those sections that change how a run is shown or stored, not its result
NON_SETTING_KEYS = (
    "dataset.download",
    "train.progress",
    "train.track_gradients",
    "train.estimate_lipschitz",
    "train.lipschitz_every",
)

RECORD_KEYS = ("run_id", "status", "config")

COLUMNS = (
    "run_id",
    "status",
    "error",
    "path",
    "finished_at",
    *CONFIG_COLUMNS,
    *SUMMARY_COLUMNS,
    "label",
    "setting",
    "history",
)


def config_value(config: Mapping[str, Any], dotted: str, default: Any = None) -> Any:
    """``config["a"]["b"]`` for ``"a.b"``, or ``default`` where a level is missing."""
    value: Any = config
    for key in dotted.split("."):
        if not isinstance(value, Mapping) or key not in value:
            return default
        value = value[key]
    return value


def setting_key(config: Mapping[str, Any]) -> str:
    """Canonical JSON of the :data:`SETTING_SECTIONS` without :data:`NON_SETTING_KEYS`."""
    sections = {name: dict(config.get(name) or {}) for name in SETTING_SECTIONS}
    for dotted in NON_SETTING_KEYS:
        section, key = dotted.split(".")
        sections[section].pop(key, None)
    return json.dumps(sections, sort_keys=True, separators=(",", ":"), default=str)


def record_row(record: Mapping[str, Any], path: Path | str = "") -> dict[str, Any]:
    """One DataFrame row (a dict keyed by :data:`COLUMNS`) from one record."""
    config = record["config"]
    summary = record.get("summary") or {}
    row = {
        "run_id": record["run_id"],
        "status": record["status"],
        "error": record.get("error"),
        "path": str(path),
        "finished_at": record.get("finished_at"),
    }
    for column, dotted in CONFIG_COLUMNS.items():
        row[column] = config_value(config, dotted, CONFIG_DEFAULTS.get(column))
    for column in SUMMARY_COLUMNS:
        row[column] = summary.get(column)
    row["label"] = model_label(config)
    row["setting"] = setting_key(config)
    row["history"] = record.get("history") or []
    return row


def _read(path: Path) -> Mapping[str, Any] | None:
    try:
        record = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        warnings.warn(f"{path}: not readable as JSON ({error}); skipped", stacklevel=3)
        return None
    if not isinstance(record, Mapping) or any(key not in record for key in RECORD_KEYS):
        warnings.warn(
            f"{path}: not a run record (needs {', '.join(RECORD_KEYS)}); skipped", stacklevel=3
        )
        return None
    return record


def records_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The DataFrame of :func:`record_row` rows, numeric columns as floats, copies dropped."""
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    for column in NUMERIC_COLUMNS:
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    frame["residual"] = frame["residual"].astype(bool)
    frame = frame.sort_values("finished_at", na_position="first", kind="stable")
    frame = frame.drop_duplicates("run_id", keep="last")
    return frame.sort_values("path", kind="stable").reset_index(drop=True)


def load_records(runs_dir: str | Path) -> pd.DataFrame:
    """Every record under ``runs_dir`` (recursively) as one row; see the module docstring.

    Args:
        runs_dir (str or Path): the folder holding the records (a missing one holds none).

    Returns:
        pandas.DataFrame: one row per run, with the columns of :data:`COLUMNS`.
    """
    rows = []
    for path in sorted(Path(runs_dir).glob("**/*.json")):
        record = _read(path)
        if record is not None:
            rows.append(record_row(record, path))
    return records_frame(rows)


__all__ = ["COLUMNS", "config_value", "load_records", "record_row", "records_frame", "setting_key"]
