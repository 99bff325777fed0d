"""Run records on disk: one JSON file per run, named by its hash, written atomically.

A record is written to a temporary file in the same folder and renamed into place
(:mod:`lipnorm_exp.atomic`), so parallel workers never collide and a kill never leaves half a
record; temporary files of killed writers are removed by :func:`~lipnorm_exp.atomic.
remove_stale_temps`. :func:`save_record` never lets an unfinished run replace a finished
record, :func:`take_record` sets a broken record aside, :func:`iter_records` is the one reader
of a folder of records and :func:`add_tags` the one change made to a finished record.
"""

import json
import logging
import os
import warnings
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from lipnorm_exp.atomic import replacing
from lipnorm_exp.lock import folder_lock

log = logging.getLogger(__name__)

COMPLETED = "completed"
DIVERGED = "diverged"
FAILED = "failed"
INTERRUPTED = "interrupted"
#: every status a record can hold
STATUSES = (COMPLETED, DIVERGED, FAILED, INTERRUPTED)
#: statuses that are a result: a re-launched sweep does not run them again (``force=true`` does)
FINISHED = (COMPLETED, DIVERGED)
#: keys without which a JSON object is not a run record
RECORD_KEYS = ("run_id", "status", "config")
#: the lock name under which a folder's records have their tags rewritten
TAGS_LOCK = "tags"
#: suffix of the record a forced re-run writes beside a finished one until it finishes too
RERUN_SUFFIX = ".rerun"
#: infix of a broken record's name once set aside (``<run_id>.json.broken-<UTC time>``)
SET_ASIDE = ".broken-"


class BadRecordError(ValueError):
    """A record file that is not a usable run record; the message says why."""


def record_path(results_dir: str | Path, run_id: str) -> Path:
    """Where the record of ``run_id`` lives."""
    return Path(results_dir) / f"{run_id}.json"


def record_problem(record: Any, run_id: str | None = None) -> str | None:
    """Why ``record`` (parsed JSON) is not a usable run record, or ``None`` when it is one.

    A record is an object holding :data:`RECORD_KEYS`, a known status and, when finished, a
    ``summary`` object; ``run_id``, where given, must be its own.
    """
    if not isinstance(record, dict):
        return f"not a JSON object but {type(record).__name__}"
    missing = [key for key in RECORD_KEYS if key not in record]
    if missing:
        return f"no {', '.join(missing)}"
    if record["status"] not in STATUSES:
        return f"unknown status {record['status']!r}"
    if record["status"] in FINISHED and not isinstance(record.get("summary"), dict):
        return f"a {record['status']} record without its summary"
    if run_id is not None and record["run_id"] != run_id:
        return f"the record of run {record['run_id']}"
    return None


def read_record(results_dir: str | Path, run_id: str) -> dict[str, Any] | None:
    """The record of ``run_id``, or ``None`` if there is none.

    Raises:
        BadRecordError: the file is there but unreadable, not JSON, or not a run record of
            ``run_id`` (:func:`record_problem`).
    """
    path = record_path(results_dir, run_id)
    if not os.path.lexists(path):
        return None
    try:
        record = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BadRecordError(f"{path}: not readable as JSON ({error})") from None
    problem = record_problem(record, run_id)
    if problem:
        raise BadRecordError(f"{path}: {problem}")
    return record


def set_aside(path: str | Path) -> Path:
    """Rename ``path`` (a file or a folder) to ``<name>.broken-<UTC time>``; returns the new path.

    The name no longer ends in ``.json``, so no reader of records sees it again; nothing is
    deleted.
    """
    path = Path(path)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    aside = path.with_name(f"{path.name}{SET_ASIDE}{stamp}")
    os.replace(path, aside)
    return aside


def take_record(results_dir: str | Path, run_id: str) -> dict[str, Any] | None:
    """:func:`read_record`, but a bad record is set aside, with a logged warning, and reads as none.

    So a run whose record was truncated, overwritten or replaced by something else is run
    again, and what was there is kept under another name.
    """
    try:
        return read_record(results_dir, run_id)
    except BadRecordError as error:
        try:
            aside = set_aside(record_path(results_dir, run_id))
        except FileNotFoundError:  # another worker set it aside first
            return None
        log.warning("%s; set aside as %s, the run is done again", error, aside.name)
        return None


def write_record(results_dir: str | Path, record: dict[str, Any], path: Path | None = None) -> Path:
    """Write ``record`` as ``<results_dir>/<run_id>.json`` (or at ``path``), atomically."""
    path = path or record_path(results_dir, record["run_id"])
    with replacing(path) as temporary:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.fchmod(descriptor, 0o644)  # whatever the umask: a record is for everyone to read
        with os.fdopen(descriptor, "w") as handle:
            json.dump(record, handle, indent=1, allow_nan=True)
            handle.flush()
            os.fsync(handle.fileno())
    return path


def _holds_a_result(results_dir: str | Path, run_id: str) -> bool:
    try:
        stored = read_record(results_dir, run_id)
    except BadRecordError:
        return False
    return stored is not None and stored["status"] in FINISHED


def save_record(results_dir: str | Path, record: dict[str, Any]) -> Path:
    """Store a run's record without ever losing a finished one; returns where it went.

    Where no finished record of the run is stored, ``record`` becomes ``<run_id>.json``.
    Where one is (a forced re-run), ``record`` is written beside it as
    ``<run_id>.json.rerun`` and replaces it only if it is finished itself; an interrupted or
    failed re-run stays beside the finished record, which is kept, with a warning.
    """
    target = record_path(results_dir, record["run_id"])
    if not _holds_a_result(results_dir, record["run_id"]):
        return write_record(results_dir, record, target)
    beside = write_record(results_dir, record, target.with_name(target.name + RERUN_SUFFIX))
    if record["status"] in FINISHED:
        os.replace(beside, target)
        return target
    log.warning(
        "run %s: the re-run ended %s; the finished record %s is kept, the re-run's is %s",
        record["run_id"],
        record["status"],
        target.name,
        beside.name,
    )
    return beside


def iter_records(folder: str | Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """``(path, record)`` for every ``*.json`` record under ``folder``, searched recursively.

    Paths come in sorted order. A file that is not JSON, or not a run record
    (:func:`record_problem`), is passed over with a warning; a missing folder holds no records.
    Files set aside (:func:`set_aside`) and the records of unfinished re-runs
    (:data:`RERUN_SUFFIX`) do not end in ``.json`` and are not read.
    """
    for path in sorted(Path(folder).glob("**/*.json")):
        try:
            record = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            warnings.warn(f"{path}: not readable as JSON ({error}); skipped", stacklevel=2)
            continue
        problem = record_problem(record)
        if problem:
            warnings.warn(f"{path}: not a run record ({problem}); skipped", stacklevel=2)
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
        stored = take_record(results_dir, record["run_id"])
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
    "INTERRUPTED",
    "RECORD_KEYS",
    "RERUN_SUFFIX",
    "SET_ASIDE",
    "STATUSES",
    "BadRecordError",
    "add_tags",
    "iter_records",
    "read_record",
    "record_path",
    "record_problem",
    "save_record",
    "set_aside",
    "take_record",
    "write_record",
]
