"""Run records on disk: one JSON file per run, named by its hash, written atomically.

A record is written to a temporary file in the same folder and renamed into place, so
parallel workers never collide and a kill never leaves half a record. :func:`iter_records`
is the one reader of a folder of records; :func:`add_tags` is the one change made to a
finished record.
"""

import json
import os
import tempfile
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from lipnorm_exp.lock import folder_lock

COMPLETED = "completed"
DIVERGED = "diverged"
FAILED = "failed"
#: every status a record can hold
STATUSES = (COMPLETED, DIVERGED, FAILED)
#: statuses that are a result: a re-launched sweep does not run them again (``force=true`` does)
FINISHED = (COMPLETED, DIVERGED)
#: keys without which a JSON object is not a run record
RECORD_KEYS = ("run_id", "status", "config")
#: the lock name under which a folder's records have their tags rewritten
TAGS_LOCK = "tags"


def record_path(results_dir: str | Path, run_id: str) -> Path:
    """Where the record of ``run_id`` lives."""
    return Path(results_dir) / f"{run_id}.json"


def read_record(results_dir: str | Path, run_id: str) -> dict[str, Any] | None:
    """The record of ``run_id``, or ``None`` if there is none (or it cannot be parsed)."""
    path = record_path(results_dir, run_id)
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def write_record(results_dir: str | Path, record: dict[str, Any]) -> Path:
    """Write ``record`` as ``<results_dir>/<run_id>.json`` via temp file + rename."""
    path = record_path(results_dir, record["run_id"])
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o644)  # mkstemp makes it private; a record is for everyone to read
        with os.fdopen(fd, "w") as handle:
            json.dump(record, handle, indent=1, allow_nan=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def iter_records(folder: str | Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """``(path, record)`` for every ``*.json`` record under ``folder``, searched recursively.

    Paths come in sorted order. A file that is not JSON, or not an object holding
    :data:`RECORD_KEYS`, is passed over with a warning; a missing folder holds no records.
    """
    for path in sorted(Path(folder).glob("**/*.json")):
        try:
            record = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            warnings.warn(f"{path}: not readable as JSON ({error}); skipped", stacklevel=2)
            continue
        if not isinstance(record, dict) or any(key not in record for key in RECORD_KEYS):
            warnings.warn(
                f"{path}: not a run record (needs {', '.join(RECORD_KEYS)}); skipped", stacklevel=2
            )
            continue
        yield path, record


def _new_tags(record: dict[str, Any], tags: Iterable[str]) -> list[str]:
    present = record["config"].get("tags") or []
    return [tag for tag in dict.fromkeys(tags) if tag not in present]


def add_tags(
    results_dir: str | Path, record: dict[str, Any], tags: Iterable[str]
) -> dict[str, Any]:
    """Add to ``record`` (as stored under ``results_dir``) the ``tags`` its ``config.tags`` lacks.

    When some tag is new, the stored record is read again and rewritten (atomically, by
    :func:`write_record`) under the folder's :data:`TAGS_LOCK`, so workers adding tags to one
    record at once keep each other's. Tags already there keep their order; new ones follow in
    the order given.

    Returns:
        The record as it is now (``record`` itself when no tag is new or it is stored no more).
    """
    if not _new_tags(record, tags):
        return record
    with folder_lock(results_dir, TAGS_LOCK):
        stored = read_record(results_dir, record["run_id"])
        if stored is None:
            return record
        new = _new_tags(stored, tags)
        if new:
            stored["config"]["tags"] = [*(stored["config"].get("tags") or []), *new]
            write_record(results_dir, stored)
        return stored


__all__ = [
    "COMPLETED",
    "DIVERGED",
    "FAILED",
    "FINISHED",
    "RECORD_KEYS",
    "STATUSES",
    "add_tags",
    "iter_records",
    "read_record",
    "record_path",
    "write_record",
]
