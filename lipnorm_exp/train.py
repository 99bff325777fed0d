"""``run(cfg)``: one configuration from config to record.

Validate → check the folders it writes to → skip if a finished record exists (adding this
config's tags to it) → load data → build model → train with best-validation selection → write
the record. A non-finite loss or output ends the run as ``diverged`` (a result: deep
unnormalised GATs explode), keeping the epochs before it; an exception during training writes
a ``failed`` record with the error, a ``KeyboardInterrupt`` (Ctrl-C, or a stop signal, see
:mod:`lipnorm_exp.stopping`) an ``interrupted`` one, and either is raised again. Neither
replaces a finished record of the run (:func:`~lipnorm_exp.records.save_record`).
"""

import logging
import math
import random
import time
from datetime import datetime, timezone
from typing import Any

import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf
from tqdm.auto import tqdm

from lipnorm_exp.atomic import remove_stale_temps
from lipnorm_exp.config import build_model, validate
from lipnorm_exp.data import Task, load_task
from lipnorm_exp.errors import ConfigError
from lipnorm_exp.folders import writable_folder
from lipnorm_exp.lipschitz_estimate import layer_lipschitz
from lipnorm_exp.loop import MONITORED, NonFiniteError, evaluate, train_epoch
from lipnorm_exp.records import (
    COMPLETED,
    DIVERGED,
    FAILED,
    FINISHED,
    INTERRUPTED,
    add_tags,
    git_commit,
    machine,
    portable_paths,
    run_id,
    save_record,
    take_record,
    versions,
)
from lipnorm_exp.tracking import make_tracker

log = logging.getLogger(__name__)


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (CPU and CUDA)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


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


def make_scheduler(
    optimizer: torch.optim.Optimizer, train: DictConfig
) -> torch.optim.lr_scheduler.ReduceLROnPlateau | None:
    """The learning-rate schedule of ``train.scheduler``, or ``None`` for ``none``.

    ``plateau`` multiplies the lr by ``scheduler_factor`` once ``scheduler_metric`` has not
    improved for ``scheduler_patience`` epochs: the validation loss as the authors' scripts,
    or the training accuracy as Alon & Yahav's (an accuracy must rise by more than 1e-4,
    their absolute threshold).
    """
    if train.scheduler == "none":
        return None
    if MONITORED[train.scheduler_metric]:
        mode, threshold_mode = "max", "abs"
    else:
        mode, threshold_mode = "min", "rel"
    return torch.optim.lr_scheduler.ReduceLROnPlateau(
        optimizer,
        mode=mode,
        factor=train.scheduler_factor,
        patience=train.scheduler_patience,
        threshold_mode=threshold_mode,
    )


#: the least rise of an accuracy that counts as an improvement for early stopping
MIN_IMPROVEMENT = 1e-4


class EarlyStopping:
    """Stop after ``train.patience`` epochs without a better ``train.patience_metric``.

    An accuracy counts as better when it rises by more than :data:`MIN_IMPROVEMENT` (Alon &
    Yahav's rule); a run whose monitored accuracy reaches 1 stops at once, having nothing left
    to improve. ``patience=0`` never stops.
    """

    def __init__(self, train: DictConfig):
        self.patience = train.patience
        self.metric = train.patience_metric
        self.best: float | None = None
        self.best_epoch = 0

    def stop(self, row: dict[str, Any]) -> bool:
        """Take one epoch's row; whether training should end after it."""
        if not self.patience:
            return False
        value = row[self.metric]
        if self.best is None or value > self.best + MIN_IMPROVEMENT:
            self.best, self.best_epoch = value, row["epoch"]
        return value >= 1.0 or row["epoch"] - self.best_epoch >= self.patience


def fit(
    model: torch.nn.Module,
    task: Task,
    train: DictConfig,
    device: torch.device,
    tracker,
    desc: str = "",
) -> dict[str, Any]:
    """Train for ``train.epochs`` epochs (or until :class:`EarlyStopping` / divergence).

    Returns ``status``, ``error``, ``summary`` and ``history`` as they go into the record.
    The best epoch is the one with the highest validation accuracy (the first one on ties);
    the summary keeps the test accuracy at that epoch. An epoch whose training loss or model
    outputs are not finite ends the run as ``diverged``: it leaves no row, so the summary and
    history hold the epochs before it, and ``error`` says what diverged when.
    """
    optimizer = torch.optim.Adam(model.parameters(), lr=train.lr, weight_decay=train.weight_decay)
    scheduler = make_scheduler(optimizer, train)
    stopping = EarlyStopping(train)
    history: list[dict[str, Any]] = []
    best: dict[str, Any] | None = None
    status, error, diverged_at = COMPLETED, None, None
    bar = tqdm(
        range(1, train.epochs + 1),
        desc=desc,
        disable=not train.progress,
        leave=False,
        mininterval=1.0,
    )
    for epoch in bar:
        start = time.perf_counter()
        loss, grads = train_epoch(model, optimizer, task, device, train.track_gradients)
        try:
            if not math.isfinite(loss):
                raise NonFiniteError("non-finite training loss")
            metrics = evaluate(model, task, device)
        except NonFiniteError as divergence:
            status, diverged_at = DIVERGED, epoch
            error = f"{divergence} at epoch {epoch}"
            break
        row = {"epoch": epoch, "train_step_loss": loss, **metrics}
        if scheduler is not None:
            row["lr"] = optimizer.param_groups[0]["lr"]
            scheduler.step(row[train.scheduler_metric])
        row["time_s"] = time.perf_counter() - start
        if grads is not None:
            row["grad_attn"], row["grad_layer"] = grads[:, 0].tolist(), grads[:, 1].tolist()
        if train.estimate_lipschitz and (epoch == 1 or epoch % train.lipschitz_every == 0):
            row["lipschitz"] = layer_lipschitz(model, next(iter(task.eval_batches)).to(device))
        history.append(row)
        tracker.log_epoch(row)
        if best is None or row["val_acc"] > best["val_acc"]:
            best = row
        bar.set_postfix(
            loss=f"{loss:.3f}", val=f"{row['val_acc']:.3f}", best=f"{best['val_acc']:.3f}"
        )
        if stopping.stop(row):
            break
    bar.close()
    return {
        "status": status,
        "error": error,
        "summary": summarise(history, best, task.metric_name, diverged_at),
        "history": history,
    }


def summarise(history: list[dict], best: dict | None, metric: str, diverged_at: int | None) -> dict:
    """Summary metrics of a run from its history and best-validation epoch."""
    train_accs = [row["train_acc"] for row in history]
    return {
        "metric": metric,
        "best_epoch": best["epoch"] if best else None,
        "best_val_acc": best["val_acc"] if best else None,
        "test_acc_at_best_val": best["test_acc"] if best else None,
        "train_acc_at_best_val": best["train_acc"] if best else None,
        "best_train_acc": max(train_accs) if train_accs else None,
        "final_train_acc": train_accs[-1] if train_accs else None,
        "epochs_run": len(history),
        "diverged_at_epoch": diverged_at,
    }


def run(cfg: DictConfig, desc: str = "") -> dict[str, Any]:
    """Run one configuration and return its record (the existing one when skipped).

    A finished record of the same run (same :func:`~lipnorm_exp.records.run_id`, made by this
    preset or another) is reused rather than run again; the tags of ``cfg`` it lacks are added
    to it, so the record names every preset it serves.

    Args:
        cfg: the whole resolved config (see ``configs/config.yaml``).
        desc: label of the progress bar (the sweep position, for instance).
    """
    validate(cfg)
    results_dir = writable_folder(cfg.paths.results_dir, "paths.results_dir")
    writable_folder(cfg.paths.data_dir, "paths.data_dir")
    remove_stale_temps(results_dir)
    device = pick_device(cfg.device)
    rid = run_id(cfg)
    existing = take_record(results_dir, rid)
    if existing and existing["status"] in FINISHED and not cfg.force:
        log.info("%s skip run %s: a %s record exists", desc, rid, existing["status"])
        existing = add_tags(results_dir, existing, cfg.tags)
        return {**existing, "skipped": True}
    started, clock = datetime.now(timezone.utc), time.perf_counter()
    seed_everything(cfg.seed)
    task = load_task(cfg.dataset, cfg.paths, cfg.seed)
    model = build_model(cfg.model, cfg.norm, task.num_features, task.num_outputs).to(device)
    config = OmegaConf.to_container(cfg, resolve=True)
    config["paths"] = portable_paths(config["paths"])
    record: dict[str, Any] = {
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
    setup_s = time.perf_counter() - clock
    tracker = make_tracker(cfg, rid)
    try:
        record.update(fit(model, task, cfg.train, device, tracker, desc))
    except KeyboardInterrupt as error:
        record["status"], record["error"] = INTERRUPTED, str(error) or type(error).__name__
        raise
    except Exception as error:
        record["error"] = f"{type(error).__name__}: {error}"
        raise
    finally:
        total = time.perf_counter() - clock
        epochs = len(record.get("history", []))
        record["timing"] = {
            "total_s": total,
            "setup_s": setup_s,
            "epoch_s_mean": (total - setup_s) / epochs if epochs else None,
        }
        record["finished_at"] = datetime.now(timezone.utc).isoformat()
        try:
            save_record(results_dir, record)
        finally:
            tracker.finish(record)
    summary = record["summary"]
    log.info(
        "%s run %s %s: best val %.4f, test at best val %.4f (epoch %s), %.1f s",
        desc,
        rid,
        record["status"],
        summary["best_val_acc"] or float("nan"),
        summary["test_acc_at_best_val"] or float("nan"),
        summary["best_epoch"],
        total,
    )
    return record
