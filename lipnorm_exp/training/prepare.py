"""What a launch does before it trains (:func:`lipnorm_exp.training.launch.run`).

Check the config and the folders, pick the device, hold the runs' locks, find the runs already
finished.
"""

import logging
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import torch
from omegaconf import DictConfig

from lipnorm_exp.config import validate
from lipnorm_exp.records import FINISHED, add_tags, made_by_current_numerics, take_record
from lipnorm_exp.training.checkpoint import CHECKPOINT_DIR, checkpoint_path
from lipnorm_exp.util.atomic import remove_stale_temps
from lipnorm_exp.util.device import pick_device
from lipnorm_exp.util.folders import writable_folder
from lipnorm_exp.util.lock import folder_lock

__all__ = ["finished_record", "prepare", "run_locks"]

log = logging.getLogger(__name__)


def prepare(cfg: DictConfig) -> tuple[Path, torch.device]:
    """Validate ``cfg``, check the folders it writes to, clear stale temporary files.

    Stale temporary files are those of killed writers of records and of checkpoints.

    Returns:
        the results folder and the device to train on.
    """
    validate(cfg)
    results_dir = writable_folder(cfg.paths.results_dir, "paths.results_dir")
    writable_folder(cfg.paths.data_dir, "paths.data_dir")
    remove_stale_temps(results_dir)
    remove_stale_temps(results_dir / CHECKPOINT_DIR)
    return results_dir, pick_device(cfg.device)


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


def finished_record(cfg: DictConfig, results_dir: Path, rid: str, desc: str) -> dict | None:
    """The finished record of run ``rid``, re-tagged with ``cfg.tags`` and marked ``skipped``.

    ``None`` when the run has no finished record, or ``force=true`` asks to run it again, or
    ``rerun_stale=true`` does and the record was made by other numerics than today's.
    """
    existing = take_record(results_dir, rid)
    if not existing or existing["status"] not in FINISHED or cfg.force:
        return None
    if cfg.get("rerun_stale") and not made_by_current_numerics(existing):
        log.info("%s re-run run %s: its record was made by other numerics", desc, rid)
        return None
    log.info("%s skip run %s: a %s record exists", desc, rid, existing["status"])
    checkpoint_path(results_dir, rid).unlink(missing_ok=True)  # a kill came after the record
    return {**add_tags(results_dir, existing, cfg.tags), "skipped": True}
