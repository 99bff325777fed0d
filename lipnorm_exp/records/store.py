"""Run records on disk: one JSON file per run, named by its hash, written atomically.

A record is written to a temporary file in the same folder and renamed into place
(`lipnorm_exp.util.atomic`), so parallel workers never collide and a kill never leaves half a
record; temporary files of killed writers are removed by `
remove_stale_temps`. [`save_record`][lipnorm_exp.records.store.save_record] never lets an unfinished
run replace a finished record, [`take_record`][lipnorm_exp.records.store.take_record] sets a broken
record aside, [`iter_records`][lipnorm_exp.records.store.iter_records] is the one reader of a folder
of records and [`add_tags`][lipnorm_exp.records.store.add_tags] the one change made to a finished
record. Every record read is checked by
[`record_problem`][lipnorm_exp.records.store.record_problem]; records are strict JSON, a non-finite
number being written as ``null`` (`strict_json`).
"""

import json
import logging
import math
import os
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, cast

from lipnorm_exp.records import schema
from lipnorm_exp.records.consistency import (
    consistency_problem,
    history_problem,
    identity_problem,
    scalar_problem,
    unknown_keys_problem,
)
from lipnorm_exp.records.schema import (
    COMPLETED,
    CONFIG,
    FINISHED,
    NUMERICS,
    RECORD_KEYS,
    RUN_ID,
    SCHEMA_VERSION_KEY,
    STATUS,
    STATUSES,
    SUMMARY,
    SUMMARY_KEYS,
    SUMMARY_KINDS,
    Kind,
    Record,
)
from lipnorm_exp.util.atomic import replacing
from lipnorm_exp.util.lock import folder_lock

log = logging.getLogger(__name__)

#: where a command run at the project's root finds its records (``paths.results_dir``'s default)
RUNS_FOLDER = Path("results", "runs")
#: config groups every record holds as a mapping (the others are mappings where present)
CONFIG_GROUPS = ("dataset", "model", "norm", "train")
#: config groups that name their option (``model.name``: ``gat``, ...)
NAMED_GROUPS = ("dataset", "model", "norm")
OPTIONAL_CONFIG_GROUPS = ("protocol", "ablation", "logger", "paths", "grid")
#: the lock name under which a folder's records have their tags rewritten
TAGS_LOCK = "tags"
#: suffix of the record a forced re-run writes beside a finished one until it finishes too
RERUN_SUFFIX = ".rerun"
#: infix of a broken record's name once set aside (``<run_id>.json.broken-<UTC time>``)
SET_ASIDE = ".broken-"
#: the name of a record file ([`run_id`][lipnorm_exp.records.identity.run_id] and ``.json``)
RECORD_NAME = re.compile(r"[0-9a-f]{16}\.json")


class BadRecordError(ValueError):
    """A record file that is not a usable run record; the message says why."""


def record_path(results_dir: str | Path, run_id: str) -> Path:
    """Where the record of ``run_id`` lives."""
    return Path(results_dir) / f"{run_id}.json"


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _holds(kind: Kind, value: Any) -> bool:
    """Whether ``value`` (not ``null``) is of ``kind``."""
    if kind is Kind.NAME:
        return isinstance(value, str)
    if kind is Kind.EPOCHS:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return _is_number(value) and 0.0 <= value <= 1.0  # NaN fails the comparison too


def _entry_problem(key: str, value: Any, status: str) -> str | None:
    """Why summary entry ``key`` of a ``status`` record is not ``value``'s kind, or ``None``.

    An epoch entry may be ``null``; an accuracy too, except in a completed record; a name never.
    """
    kind = SUMMARY_KINDS[key]
    nullable = kind is Kind.EPOCHS or (kind is Kind.ACCURACY and status != COMPLETED)
    if (value is None and nullable) or (value is not None and _holds(kind, value)):
        return None
    return f"{SUMMARY}.{key} is {value!r}, not {kind.value}" + (" or null" if nullable else "")


def summary_problem(status: str, summary: Any) -> str | None:
    """Why ``summary`` is not the summary of a record of ``status``, or ``None``.

    A finished record's summary holds every key of `
    SUMMARY_KEYS`, each of its kind (`SUMMARY_KINDS`); a
    ``completed`` one's accuracies are numbers in [0, 1], a ``diverged`` one's may be ``null``
    (no epoch was scored). Other records may hold no summary, or one with any of these keys.
    """
    if summary is None and status not in FINISHED:
        return None
    if not isinstance(summary, Mapping):
        return f"a {status} record without its {SUMMARY}"
    missing = [key for key in SUMMARY_KEYS if key not in summary] if status in FINISHED else []
    if missing:
        return f"a {status} record whose {SUMMARY} has no {', '.join(missing)}"
    unknown = sorted(str(key) for key in summary if key not in SUMMARY_KINDS)
    if unknown:
        return f"its {SUMMARY} holds keys no run writes: {', '.join(unknown)}"
    problems = (_entry_problem(key, summary[key], status) for key in SUMMARY_KEYS if key in summary)
    return next((problem for problem in problems if problem), None)


def version_problem(record: Mapping[str, Any]) -> str | None:
    """Why ``record``'s schema or numerics version is not one, or ``None``.

    Where present, ``schema_version`` is an integer >= 1 and ``numerics`` one or ``null``.
    """
    for key, nullable in ((SCHEMA_VERSION_KEY, False), (NUMERICS, True)):
        value = record.get(key)
        if key not in record or (value is None and nullable):
            continue
        if not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
            return f"{key} is {value!r}, not an integer >= 1" + (" or null" if nullable else "")
    return None


#: the parts of a record that are objects where present (their readers take their keys)
OBJECT_PARTS = (schema.MACHINE, schema.VERSIONS, schema.TIMING, schema.BATCHED)


def parts_problem(record: Mapping[str, Any]) -> str | None:
    """Why a part of ``record`` that is an object (`OBJECT_PARTS`) is not one, or ``None``."""
    for key in OBJECT_PARTS:
        value = record.get(key)
        if key in record and not isinstance(value, Mapping):
            return f"{key} is {value!r}, not an object"
    return None


def config_problem(config: Any) -> str | None:
    """Why ``config`` is not the shape of a run's config, or ``None``.

    It is a mapping whose groups `CONFIG_GROUPS` are mappings (those of
    `NAMED_GROUPS` with a ``name``), whose
    groups `OPTIONAL_CONFIG_GROUPS` are mappings where present, and whose ``tags`` are
    a list of names where present.
    """
    if not isinstance(config, Mapping):
        return f"config is {type(config).__name__}, not a mapping"
    for group in (*CONFIG_GROUPS, *OPTIONAL_CONFIG_GROUPS):
        value = config.get(group)
        if value is None and group in OPTIONAL_CONFIG_GROUPS:
            continue
        if not isinstance(value, Mapping):
            return f"config.{group} is {value!r}, not a mapping"
        if group in NAMED_GROUPS and not isinstance(value.get("name"), str):
            return f"config.{group}.name is {value.get('name')!r}, not a name"
    tags = config.get("tags")
    if tags is not None and not (
        isinstance(tags, list) and all(isinstance(tag, str) for tag in tags)
    ):
        return f"config.tags is {tags!r}, not a list of names"
    return None


def record_problem(record: Any, run_id: str | None = None) -> str | None:
    """Why ``record`` (parsed JSON) is not a usable run record, or ``None`` when it is one.

    A record is an object holding `RECORD_KEYS`: a
    ``run_id`` (``run_id`` where given: the name of its file), a known status, versions of the
    right kind where named (`version_problem`), objects where objects belong
    (`parts_problem`), a config of the right shape
    (`config_problem`) and, when finished, a whole summary (`summary_problem`); and
    its parts agree (`consistency`): no unknown top-level key, a
    config that names its run, a history of finite epochs, a summary its history makes.
    """
    if not isinstance(record, dict):
        return f"not a JSON object but {type(record).__name__}"
    missing = [key for key in RECORD_KEYS if key not in record]
    if missing:
        return f"no {', '.join(missing)}"
    if not isinstance(record[RUN_ID], str):
        return f"{RUN_ID} is {record[RUN_ID]!r}, not a name"
    if run_id is not None and record[RUN_ID] != run_id:
        return f"the record of run {record[RUN_ID]}"
    if record[STATUS] not in STATUSES:
        return f"unknown {STATUS} {record[STATUS]!r} (allowed: {', '.join(STATUSES)})"
    return (
        unknown_keys_problem(record)
        or version_problem(record)
        or scalar_problem(record)
        or parts_problem(record)
        or config_problem(record[CONFIG])
        or summary_problem(record[STATUS], record.get(SUMMARY))
        or identity_problem(record)
        or history_problem(record.get(schema.HISTORY))
        or consistency_problem(record)
    )


def read_record(results_dir: str | Path, run_id: str, path: Path | None = None) -> Record | None:
    """The record of ``run_id`` (at ``path``: a re-run's, say), or ``None`` if there is none.

    Raises:
        BadRecordError: the file is there but unreadable, not JSON, or not a run record of
            ``run_id`` ([`record_problem`][lipnorm_exp.records.store.record_problem]).
    """
    path = path or record_path(results_dir, run_id)
    if not os.path.lexists(path):
        return None
    try:
        record = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BadRecordError(f"{path}: not readable as JSON ({error})") from None
    problem = record_problem(record, run_id)
    if problem:
        raise BadRecordError(f"{path}: {problem}")
    return cast(Record, record)  # checked by record_problem


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


def take_record(results_dir: str | Path, run_id: str) -> Record | None:
    """`read_record`, but a bad record is set aside, with a logged warning, and reads as none.

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


def strict_json(value: Any) -> Any:
    """``value`` with every NaN or infinite float (in lists and dicts too) replaced by ``None``.

    So a record is strict JSON (RFC 8259 has no NaN or Infinity): a loss that was not finite
    reads ``null``, and the record's status and error say why.
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {key: strict_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [strict_json(item) for item in value]
    return value


def write_record(results_dir: str | Path, record: Record, path: Path | None = None) -> Path:
    """Write ``record`` as ``<results_dir>/<run_id>.json`` (or at ``path``), atomically.

    It is written as strict JSON (`strict_json`).
    """
    path = path or record_path(results_dir, record[RUN_ID])
    data = json.dumps(strict_json(record), indent=1, allow_nan=False).encode()
    with replacing(path, len(data)) as temporary:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.fchmod(descriptor, 0o644)  # whatever the umask: a record is for everyone to read
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    return path


def _holds_a_result(results_dir: str | Path, run_id: str) -> bool:
    try:
        stored = read_record(results_dir, run_id)
    except BadRecordError:
        return False
    return stored is not None and stored[STATUS] in FINISHED


def save_record(results_dir: str | Path, record: Record) -> Path:
    """Store a run's record without ever losing a finished one; returns where it went.

    Where no finished record of the run is stored, ``record`` becomes ``<run_id>.json``.
    Where one is (a forced re-run), ``record`` is written beside it as
    ``<run_id>.json.rerun`` and replaces it only if it is finished itself; an interrupted or
    failed re-run stays beside the finished record, which is kept, with a warning.
    """
    target = record_path(results_dir, record[RUN_ID])
    if not _holds_a_result(results_dir, record[RUN_ID]):
        return write_record(results_dir, record, target)
    beside = write_record(results_dir, record, target.with_name(target.name + RERUN_SUFFIX))
    if record[STATUS] in FINISHED:
        os.replace(beside, target)
        return target
    log.warning(
        "run %s: the re-run ended %s; the finished record %s is kept, the re-run's is %s",
        record[RUN_ID],
        record[STATUS],
        target.name,
        beside.name,
    )
    return beside


class FolderRecords:
    """The records under a folder, read and checked as they are iterated (`iter_records`).

    Attributes:
        folder (Path): the folder, searched recursively.
        set_aside (list[Path]): where the records found broken so far were moved.
    """

    def __init__(self, folder: str | Path, set_aside_broken: bool = True):
        self.folder = Path(folder)
        self.set_aside_broken = set_aside_broken
        self.set_aside: list[Path] = []

    def __iter__(self) -> Iterator[tuple[Path, Record]]:
        for path in sorted(self.folder.glob("**/*.json")):
            try:
                record = json.loads(path.read_text())
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
                problem: str | None = f"not readable as JSON ({error})"
            else:
                problem = record_problem(record, path.name.removesuffix(".json"))
            if problem is None:
                yield path, cast(Record, record)  # checked by record_problem
            elif self.set_aside_broken and RECORD_NAME.fullmatch(path.name) and path.is_file():
                self._set_aside(path, problem)
            else:
                warnings.warn(f"{path}: not a run record ({problem}); skipped", stacklevel=2)

    def _set_aside(self, path: Path, problem: str) -> None:
        try:
            aside = set_aside(path)
        except FileNotFoundError:  # another reader set it aside first
            return
        self.set_aside.append(aside)
        warnings.warn(
            f"{path}: {problem}; set aside as {aside.name}, its run is done again", stacklevel=3
        )


def iter_records(folder: str | Path, set_aside_broken: bool = True) -> FolderRecords:
    """``(path, record)`` for every ``*.json`` record under ``folder``, searched recursively.

    Paths come in sorted order; a missing folder holds no records. Every record is checked
    ([`record_problem`][lipnorm_exp.records.store.record_problem], its file name being its
    ``run_id``): a file named as a record (`RECORD_NAME`) that fails is set aside
    ([`set_aside`][lipnorm_exp.records.store.set_aside]) with a warning naming what failed, so its
    run is done again, and is listed in the returned object's ``set_aside``; any other failing JSON
    file is passed over with a warning. Files set aside and the records of unfinished re-runs
    (`RERUN_SUFFIX`) do not end in ``.json`` and are not read. With ``set_aside_broken=False`` the
    folder is left as it is: every failing file is passed over with a warning (a folder read only to
    copy from, say).
    """
    return FolderRecords(folder, set_aside_broken)


def _new_tags(record: Record, tags: Iterable[str]) -> list[str]:
    present = record[CONFIG].get("tags") or []
    return [tag for tag in dict.fromkeys(tags) if tag not in present]


def add_tags(results_dir: str | Path, record: Record, tags: Iterable[str]) -> Record:
    """Add to ``record`` (as stored under ``results_dir``) the ``tags`` its ``config.tags`` lacks.

    When some tag is new, the stored record is read again and rewritten (atomically, by
    [`write_record`][lipnorm_exp.records.store.write_record]) under the folder's `TAGS_LOCK`, so
    workers adding tags to one record at once keep each other's. Tags already there keep their
    order; new ones follow in the order given.

    Returns:
        The record as it is now (``record`` itself when no tag is new or it is stored no more).
    """
    if not _new_tags(record, tags):
        return record
    with folder_lock(results_dir, TAGS_LOCK):
        stored = take_record(results_dir, record[RUN_ID])
        if stored is None:
            return record
        new = _new_tags(stored, tags)
        if new:
            stored[CONFIG]["tags"] = [*(stored[CONFIG].get("tags") or []), *new]
            write_record(results_dir, stored)
        return stored


__all__ = [
    "CONFIG_GROUPS",
    "RECORD_NAME",
    "RERUN_SUFFIX",
    "RUNS_FOLDER",
    "SET_ASIDE",
    "BadRecordError",
    "FolderRecords",
    "add_tags",
    "config_problem",
    "iter_records",
    "read_record",
    "record_path",
    "record_problem",
    "save_record",
    "set_aside",
    "strict_json",
    "summary_problem",
    "take_record",
    "version_problem",
    "write_record",
]
