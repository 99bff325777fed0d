"""What every run does around its training: folders, device, seeding, skipping, its record.

Shared by :func:`lipnorm_exp.train.run` (one run) and :func:`lipnorm_exp.batched.run_batched`
(several seeds trained together), so that a run's record is the same whichever trained it.
"""

import logging
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch
from omegaconf import DictConfig, OmegaConf

from lipnorm_exp.atomic import remove_stale_temps
from lipnorm_exp.checkpoint import Checkpoint, checkpoint_path, restore
from lipnorm_exp.config import validate
from lipnorm_exp.errors import ConfigError
from lipnorm_exp.folders import writable_folder
from lipnorm_exp.lock import folder_lock
from lipnorm_exp.records import (
    FAILED,
    FINISHED,
    INTERRUPTED,
    add_tags,
    git_commit,
    machine,
    portable_paths,
    save_record,
    take_record,
    versions,
)
from lipnorm_exp.stopping import held_stops

__all__ = [
    "end_run",
    "finished_record",
    "log_outcome",
    "new_record",
    "open_checkpoint",
    "pick_device",
    "prepare",
    "resume",
    "run_locks",
    "save_outcome",
]

log = logging.getLogger(__name__)


def pick_device(name: str) -> torch.device:
    """``auto`` is CUDA when available, else CPU; ``cpu``, ``cuda`` and ``cuda:<index>`` as said.

    Raises:
        ConfigError: a CUDA device this machine does not have.
    """
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if (device.index or 0) >= count:
            have = f"cuda:0 to cuda:{count - 1}" if count else "no CUDA device"
            raise ConfigError(f"device={name} is not on this machine ({have}); allowed: auto, cpu")
    return device


def prepare(cfg: DictConfig) -> tuple[Path, torch.device]:
    """Validate ``cfg``, check the folders it writes to, clear stale temporary files.

    Returns:
        the results folder and the device to train on.
    """
    validate(cfg)
    results_dir = writable_folder(cfg.paths.results_dir, "paths.results_dir")
    writable_folder(cfg.paths.data_dir, "paths.data_dir")
    remove_stale_temps(results_dir)
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

    ``None`` when the run has no finished record, or ``force=true`` asks to run it again.
    """
    existing = take_record(results_dir, rid)
    if not existing or existing["status"] not in FINISHED or cfg.force:
        return None
    log.info("%s skip run %s: a %s record exists", desc, rid, existing["status"])
    checkpoint_path(results_dir, rid).unlink(missing_ok=True)  # a kill came after the record
    return {**add_tags(results_dir, existing, cfg.tags), "skipped": True}


def open_checkpoint(cfg: DictConfig, results_dir: Path, rid: str, clock: float) -> Checkpoint:
    """Run ``rid``'s :class:`~lipnorm_exp.checkpoint.Checkpoint`.

    Args:
        cfg: the run's config: ``train.checkpoint_every``, and ``force=true``, which removes a
            saved checkpoint so that the run starts over.
        results_dir: the folder of the run's record.
        rid: the run's id.
        clock: ``time.perf_counter()`` when this process started the run.
    """
    checkpoint = Checkpoint(results_dir, rid, cfg.train.checkpoint_every, clock)
    if cfg.force:
        checkpoint.remove()
    return checkpoint


def resume(checkpoint: Checkpoint, model: torch.nn.Module, state, generators=(), desc="") -> dict:
    """Restore a run from ``checkpoint`` where it holds a saved state; returns it (``{}``: none).

    ``model``, ``state`` (the run's :class:`~lipnorm_exp.run_state.RunState`), the random states
    and ``generators`` are put back as they were at the end of the saved epoch.
    """
    saved = checkpoint.load()
    if saved:
        restore(saved, model, state, generators)
        log.info("%s run %s: resumed after epoch %d", desc, checkpoint.rid, saved["epoch"])
    return saved or {}


def new_record(cfg: DictConfig, rid: str, device: torch.device, started: datetime) -> dict:
    """The record of a run about to train: ``failed`` until its training returns."""
    config = OmegaConf.to_container(cfg, resolve=True)
    config["paths"] = portable_paths(config["paths"])
    return {
        "run_id": rid,
        "status": FAILED,
        "error": None,
        "config": config,
        "device": str(device),
        "machine": machine(device),
        "versions": versions(),
        "git_commit": git_commit(),
        "started_at": started.isoformat(),
    }


def end_run(
    record: dict[str, Any],
    state,
    metric: str,
    checkpoint: Checkpoint,
    error: BaseException | None = None,
) -> None:
    """Put the outcome of ``state`` (a :class:`~lipnorm_exp.run_state.RunState`) into ``record``.

    A run ended by ``error`` keeps its epochs so far: its checkpoint is written (from the end of
    its last whole epoch) and the record is ``interrupted`` (a stop request) or ``failed``,
    saying after which epoch it stopped and from which one its next launch resumes.
    """
    record.update(state.result(metric))
    if checkpoint.resumed_at:
        record["resumed_at"] = checkpoint.resumed_at
    if error is None:
        return
    checkpoint.write()
    if isinstance(error, KeyboardInterrupt):
        record["status"], record["error"] = INTERRUPTED, str(error) or type(error).__name__
    else:
        record["status"], record["error"] = FAILED, f"{type(error).__name__}: {error}"
    record["stopped_after_epoch"] = state.epoch
    record["resumes_after_epoch"] = checkpoint.written_epoch or None


def save_outcome(
    record: dict[str, Any], results_dir: Path, tracker, checkpoint: Checkpoint, setup_s: float
) -> None:
    """Add the timings and save the record; a final record removes the run's checkpoint.

    ``timing.total_s`` counts the run's earlier processes too (a resumed run);
    ``epoch_s_mean`` is over the epochs this process trained. The tracker is closed even when
    saving fails. A stop request (Ctrl-C, SIGTERM) meanwhile takes effect once the record is
    written (:func:`~lipnorm_exp.stopping.held_stops`): a finished run is never lost to it.
    """
    total = time.perf_counter() - checkpoint.clock
    resumed = checkpoint.resumed_at[-1] if checkpoint.resumed_at else 0
    epochs = len(record.get("history", [])) - resumed
    record["timing"] = {
        "total_s": checkpoint.earlier_s + total,
        "setup_s": setup_s,
        "epoch_s_mean": (total - setup_s) / epochs if epochs > 0 else None,
    }
    record["finished_at"] = datetime.now(timezone.utc).isoformat()
    with held_stops():  # a stop now takes effect once the record is whole
        try:
            save_record(results_dir, record)
        finally:
            tracker.finish(record)
        if record["status"] in FINISHED:
            checkpoint.remove()


def log_outcome(record: dict[str, Any], desc: str) -> None:
    """One log line: the run's status, best validation and test accuracy, time."""
    summary = record["summary"]
    log.info(
        "%s run %s %s: best val %.4f, test at best val %.4f (epoch %s), %.1f s",
        desc,
        record["run_id"],
        record["status"],
        summary["best_val_acc"] or float("nan"),
        summary["test_acc_at_best_val"] or float("nan"),
        summary["best_epoch"],
        record["timing"]["total_s"],
    )
