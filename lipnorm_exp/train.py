"""``run(cfg)``: one configuration from config to record.

Validate → check the folders it writes to → take the run's lock (a second process given the
same run waits for it) → skip if a finished record exists (adding this config's tags to it) →
load data → build model → resume from the run's checkpoint where one is saved
(:mod:`lipnorm_exp.checkpoint`) → train with best-validation selection → write the record. A
non-finite loss or output ends the run as ``diverged`` (a result: deep unnormalised GATs
explode), keeping the epochs before it; an exception during training writes a ``failed``
record with the error, a ``KeyboardInterrupt`` (Ctrl-C, or a stop signal, see
:mod:`lipnorm_exp.stopping`) an ``interrupted`` one, and either is raised again; both keep the
epochs so far, in the record and in the checkpoint the next launch resumes from. Neither
replaces a finished record of the run (:func:`~lipnorm_exp.records.save_record`).
"""

import logging
import math
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch
from omegaconf import DictConfig, ListConfig
from torch_geometric import seed_everything
from tqdm.auto import tqdm

from lipnorm_exp.batched import run_batched
from lipnorm_exp.checkpoint import Checkpoint, snapshot
from lipnorm_exp.config import build_model
from lipnorm_exp.data import Task, load_task
from lipnorm_exp.lipschitz_estimate import layer_lipschitz
from lipnorm_exp.loop import NonFiniteError, evaluate, train_epoch
from lipnorm_exp.records import run_id
from lipnorm_exp.run_state import RunState, make_optimizer
from lipnorm_exp.runs import (
    end_run,
    finished_record,
    log_outcome,
    new_record,
    open_checkpoint,
    prepare,
    resume,
    run_locks,
    save_outcome,
)
from lipnorm_exp.tracking import make_tracker

log = logging.getLogger(__name__)


def fit(
    model: torch.nn.Module,
    task: Task,
    state: RunState,
    device: torch.device,
    checkpoint: Checkpoint,
    desc: str = "",
) -> None:
    """Train from the epoch after ``state.epoch`` on, until ``train.epochs`` or an early stop.

    Each epoch's numbers go to ``state``, its end to ``checkpoint``. An epoch whose training
    loss or model outputs are not finite ends the run as ``diverged``.
    """
    train = state.train
    bar = tqdm(
        range(state.epoch + 1, train.epochs + 1),
        desc=desc,
        disable=not train.progress,
        leave=False,
        mininterval=1.0,
        initial=state.epoch,
        total=train.epochs,
    )
    for epoch in bar:
        state.start_epoch()
        loss, grads = train_epoch(model, state.optimizer, task, device, train.track_gradients)
        try:
            if not math.isfinite(loss):
                raise NonFiniteError("non-finite training loss")
            metrics = evaluate(model, task, device)
        except NonFiniteError as divergence:
            state.diverge(epoch, str(divergence))
            break
        row = state.end_epoch(epoch, loss, metrics, grads, lambda: lipschitz(model, task, device))
        bar.set_postfix(
            loss=f"{loss:.3f}", val=f"{row['val_acc']:.3f}", best=f"{state.best['val_acc']:.3f}"
        )
        if state.done:
            break
        checkpoint.keep(epoch, lambda: snapshot(model, state, task.generators))
    bar.close()


def lipschitz(model: torch.nn.Module, task: Task, device: torch.device) -> list[float]:
    """Per-layer Lipschitz estimates of ``model`` on the first evaluation batch of ``task``."""
    return layer_lipschitz(model, next(iter(task.eval_batches)).to(device))


def run(cfg: DictConfig, desc: str = "") -> dict[str, Any] | list[dict[str, Any]]:
    """Run one configuration and return its record (the existing one when skipped).

    A finished record of the same run (same :func:`~lipnorm_exp.records.run_id`, made by this
    preset or another) is reused rather than run again; the tags of ``cfg`` it lacks are added
    to it, so the record names every preset it serves.

    Args:
        cfg: the whole resolved config (see ``configs/config.yaml``); a list of seeds
            (``seed=[0,1,2]``) trains those runs together
            (:func:`~lipnorm_exp.batched.run_batched`).
        desc: label of the progress bar (the sweep position, for instance).

    Returns:
        the record; a list of records, one per seed, when ``seed`` is a list.
    """
    if isinstance(cfg.seed, ListConfig):
        return run_batched(cfg, desc)
    results_dir, device = prepare(cfg)
    rid = run_id(cfg)
    with run_locks(results_dir, [rid], desc):
        existing = finished_record(cfg, results_dir, rid, desc)
        if existing:
            return existing
        record = train_run(cfg, rid, results_dir, device, desc)
    log_outcome(record, desc)
    return record


def train_run(
    cfg: DictConfig, rid: str, results_dir: Path, device: torch.device, desc: str
) -> dict[str, Any]:
    """Load the data, build the model, resume, train and save run ``rid``'s record.

    The run resumes from its checkpoint where one is saved; its record is saved also on a
    failure or a stop, keeping the epochs so far.
    """
    started, clock = datetime.now(timezone.utc), time.perf_counter()
    seed_everything(cfg.seed)
    task = load_task(cfg.dataset, cfg.paths, cfg.seed)
    model = build_model(cfg.model, cfg.norm, task.num_features, task.num_outputs).to(device)
    record = new_record(cfg, rid, device, started)
    tracker = make_tracker(cfg, rid)
    state = RunState(make_optimizer(model, cfg.train), cfg.train, tracker)
    checkpoint = open_checkpoint(cfg, results_dir, rid, clock)
    resume(checkpoint, model, state, task.generators, desc)
    setup_s = time.perf_counter() - clock
    try:
        fit(model, task, state, device, checkpoint, desc)
    except BaseException as error:
        end_run(record, state, task.metric_name, checkpoint, error)
        raise
    else:
        end_run(record, state, task.metric_name, checkpoint)
    finally:
        save_outcome(record, results_dir, tracker, checkpoint, setup_s)
    return record
