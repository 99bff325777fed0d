"""Finished runs: a run's finished record reused instead of training the run again.

A launch looks up each of its runs' records under the run's lock (`run_locks`) and reuses
the finished ones (`finished_record`); it gives each run's record as a
`LaunchedRecord`, which says beside the record whether it was reused. None of this needs
torch: a job whose runs are all finished (a re-launched sweep's jobs, say) ends through
`reused_records` without importing it, and the trainer
([`lipnorm_exp.training.launch.run`][lipnorm_exp.training.launch.run]) takes the same two steps
before it trains what is left. Where a run's checkpoint lives (`checkpoint_path`) is said here too,
since a finished record makes its checkpoint stale.
"""

import logging
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import NamedTuple

from omegaconf import DictConfig

from lipnorm_exp.config import member_configs, validate
from lipnorm_exp.records import (
    FINISHED,
    add_tags,
    made_by_current_numerics,
    record_path,
    run_id,
    take_record,
)
from lipnorm_exp.records.numerics import check_known_versions
from lipnorm_exp.records.schema import STATUS, Record
from lipnorm_exp.util.folders import writable_folder
from lipnorm_exp.util.lock import folder_lock

__all__ = [
    "CHECKPOINT_DIR",
    "LaunchedRecord",
    "checkpoint_path",
    "finished_record",
    "reused_records",
    "run_locks",
]

log = logging.getLogger(__name__)

#: the folder of a results folder that holds its runs' checkpoints
CHECKPOINT_DIR = ".checkpoints"


class LaunchedRecord(NamedTuple):
    """The record a launch gives for one of its runs, and whether it was reused.

    Attributes:
        record: the run's record, as stored.
        reused: ``True`` where the run's finished record was found and the run not trained
            (`finished_record`; a sweep counts it ``skipped``), ``False`` where it trained
            now.
    """

    record: Record
    reused: bool


def checkpoint_path(results_dir: str | Path, rid: str) -> Path:
    """Where run ``rid``'s checkpoint lives."""
    return Path(results_dir) / CHECKPOINT_DIR / f"{rid}.pt"


@contextmanager
def run_locks(results_dir: Path, rids: list[str], desc: str = "") -> Iterator[None]:
    """Hold the lock of each run of ``rids`` while it is checked for a record and trained.

    Two processes given the same run (two sweeps over one grid, a sweep relaunched while the
    first still runs) take turns: the second waits, saying so in the log, and then finds the
    first one's finished record and skips the run, instead of training it again and replacing
    that record. A killed process releases its locks. The locks are taken in sorted order, so
    that two processes holding some of the same runs cannot wait for each other.
    """

    def waiting(rid: str):
        return lambda: log.info("%s run %s: another process holds it; waiting", desc, rid)

    with ExitStack() as stack:
        for rid in sorted(set(rids)):
            stack.enter_context(folder_lock(results_dir, f"run-{rid}", waiting(rid)))
        yield


def stored_record(results_dir: Path, rid: str) -> Record | None:
    """Run ``rid``'s record (`lipnorm_exp.records.take_record`), unless newer code made it.

    A launch neither reuses nor replaces a record of newer code.

    Raises:
        NewerRecordError: the record names a schema or numerics version this code does not have
            (`check_known_versions`).
    """
    record = take_record(results_dir, rid)
    if record is not None:
        check_known_versions(record, str(record_path(results_dir, rid)))
    return record


def reusable(cfg: DictConfig, record: Record | None) -> bool:
    """Whether ``record`` (``None``: there is none) stands for run ``cfg``, so it is not trained.

    It does when it is finished, unless ``force=true`` asks to run it again, or
    ``rerun_stale=true`` does and the record was made by other numerics than the run computes today
    (`rerun_reason`).
    """
    if not record or record[STATUS] not in FINISHED:
        return False
    return rerun_reason(cfg, record) is None


def rerun_reason(cfg: DictConfig, record: Record) -> str | None:
    """Why the run of a finished ``record`` is trained again, or ``None`` when it is not."""
    if cfg.force:
        return "force=true"
    if cfg.get("rerun_stale") and not made_by_current_numerics(record, cfg):
        return "its record was made by other numerics"
    return None


def finished_record(cfg: DictConfig, results_dir: Path, rid: str, desc: str) -> Record | None:
    """The finished record of run ``rid``, re-tagged with ``cfg.tags``, to be reused.

    ``None`` when the run is to be trained: it has no finished record, or `rerun_reason`
    gives one (what `reusable` decides, with the reason logged). A record made by newer
    code is refused (`stored_record`).
    """
    existing = stored_record(results_dir, rid)
    if not existing or existing[STATUS] not in FINISHED:
        return None
    reason = rerun_reason(cfg, existing)
    if reason is not None:
        log.info("%s re-run run %s: %s", desc, rid, reason)
        return None
    log.info("%s skip run %s: a %s record exists", desc, rid, existing[STATUS])
    checkpoint_path(results_dir, rid).unlink(missing_ok=True)  # a kill came after the record
    return add_tags(results_dir, existing, cfg.tags)


def reused_records(cfg: DictConfig, desc: str = "") -> list[LaunchedRecord] | None:
    """Every run of ``cfg`` with its finished record, reused, when each one has one.

    Each is reused as `finished_record` reuses it.

    ``None`` when a run is to be trained, or the results folder does not exist: then the
    trainer takes over ([`lipnorm_exp.training.launch.run`][lipnorm_exp.training.launch.run]).
    Validates ``cfg`` first, as the trainer does, so a bad value is refused whether or not its runs
    are finished; but for what this machine can run, which a finished record has shown and which
    needs torch.
    """
    validate(cfg, machine=False)
    if not Path(cfg.paths.results_dir).is_dir():
        return None
    results_dir = writable_folder(cfg.paths.results_dir, "paths.results_dir")  # tags are added
    configs = member_configs(cfg)
    rids = [run_id(member) for member in configs]
    if not all(
        reusable(member, stored_record(results_dir, rid))
        for member, rid in zip(configs, rids, strict=True)
    ):
        return None
    records: list[LaunchedRecord] = []
    with run_locks(results_dir, rids, desc):
        for member, rid in zip(configs, rids, strict=True):
            record = finished_record(member, results_dir, rid, desc)
            if record is None:  # changed since it was looked up: the trainer takes it
                return None
            records.append(LaunchedRecord(record, reused=True))
    return records
