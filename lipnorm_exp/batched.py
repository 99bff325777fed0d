"""``seed=[0,1,2]``: several seeds of one configuration trained together in one process.

Each seed is the run it would be alone, with the same identity and record: its data, model and
random stream are made exactly as :func:`lipnorm_exp.train.run` makes them (seed everything,
load the task, build the model), and it has its own Adam optimiser, learning-rate schedule,
early stop and best epoch (:class:`~lipnorm_exp.run_state.RunState`). What is shared is the
computation: every epoch runs the forward and backward pass of all copies still training as
one batch (:class:`~lipnorm_exp.copies.StackedCopies`), so a GPU runs a few large kernels
instead of many small ones. The loss minimised is the sum of the copies' losses, whose gradient
with respect to each copy's parameters is that copy's own; dropout draws each copy's masks from
its own stream. A run's losses therefore equal those of the same run trained alone, within float
tolerance (the batched kernels add in another order).

A copy leaves the batch when it ends (early stop, divergence, last epoch) and its record is
written then; a seed whose finished record exists is skipped, as alone. Each copy keeps its own
checkpoint (:mod:`lipnorm_exp.checkpoint`, its dropout stream included) and resumes from it.
Each record says it was trained in a batch (``batched``: the seeds trained together). Only
full-graph tasks can be batched: every copy trains and evaluates on one graph, the same for all
(its features may differ, as the missing vectors of each seed do).
"""

import copy
import math
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import torch
from omegaconf import DictConfig
from torch_geometric import seed_everything
from torch_geometric.data import Data
from tqdm.auto import tqdm

from lipnorm_exp.checkpoint import snapshot
from lipnorm_exp.config import build_model
from lipnorm_exp.copies import StackedCopies
from lipnorm_exp.data import Task, load_task
from lipnorm_exp.errors import ConfigError
from lipnorm_exp.lipschitz_estimate import layer_lipschitz
from lipnorm_exp.loop import NonFiniteError, gradient_norms, score, task_loss
from lipnorm_exp.nn.copy_dropout import RandomStream
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

__all__ = ["BATCHED_KEY", "member_config", "run_batched"]

#: the record key naming the seeds a run was trained together with
BATCHED_KEY = "batched"
#: the checkpoint key of a copy's dropout stream
STREAM_KEY = "stream"


def member_config(cfg: DictConfig, seed: int) -> DictConfig:
    """The config of the run of ``seed`` among ``cfg.seed``'s: ``cfg`` with that one seed."""
    member = copy.deepcopy(cfg)
    member.seed = seed
    return member


def _single_graph(task: Task, seed: int) -> Data:
    """The one graph ``task`` trains and evaluates on, or a :class:`ConfigError`."""
    train, evaluation = list(task.train_batches), list(task.eval_batches)
    if len(train) != 1 or len(evaluation) != 1 or train[0] is not evaluation[0]:
        raise ConfigError(
            f"seed=[...] trains runs together on one full graph; dataset.name={task.name} "
            f"trains in batches (seed {seed}): give one seed per run"
        )
    return train[0]


def _check_logger(cfg: DictConfig) -> None:
    if cfg.logger.name != "none":
        raise ConfigError(
            f"seed=[...] (runs trained together) is tracked by its records only; "
            f"logger.name={cfg.logger.name}, allowed: none (or give one seed per run)"
        )


def run_batched(cfg: DictConfig, desc: str = "") -> list[dict[str, Any]]:
    """Train the runs of every seed of ``cfg.seed`` together; their records, in seed order.

    Seeds with a finished record are skipped (their records come back marked ``skipped``); the
    runs' locks are held meanwhile (:func:`~lipnorm_exp.runs.run_locks`).
    """
    results_dir, device = prepare(cfg)
    _check_logger(cfg)
    members = [member_config(cfg, seed) for seed in cfg.seed]
    rids = [run_id(member) for member in members]
    with run_locks(results_dir, rids, desc):
        records: list[dict[str, Any] | None] = [
            finished_record(member, results_dir, rid, desc)
            for member, rid in zip(members, rids, strict=True)
        ]
        todo = [k for k, record in enumerate(records) if record is None]
        if todo:
            for k, record in zip(
                todo,
                _train_together([members[k] for k in todo], results_dir, device, desc),
                strict=True,
            ):
                records[k] = record
    return records


def _train_together(members: list[DictConfig], results_dir, device, desc) -> list[dict]:
    """Build the copies of ``members``, resume them from their checkpoints, train them together.

    Each record is saved as its run ends, also on a stop or a failure, keeping the epochs so far.
    """
    started, clock = datetime.now(timezone.utc), time.perf_counter()
    models, tasks, graphs, streams = [], [], [], []
    for member in members:
        seed_everything(member.seed)
        task = load_task(member.dataset, member.paths, member.seed)
        graphs.append(_single_graph(task, member.seed).to(device))
        tasks.append(task)
        models.append(
            build_model(member.model, member.norm, task.num_features, task.num_outputs).to(device)
        )
        streams.append(RandomStream(device))
    if any(not torch.equal(graph.edge_index, graphs[0].edge_index) for graph in graphs):
        raise ConfigError("seed=[...] needs one graph for every seed; these seeds' graphs differ")
    seeds = [int(member.seed) for member in members]
    records, trackers, states, checkpoints = [], [], [], []
    for member, model, stream in zip(members, models, streams, strict=True):
        rid = run_id(member)
        records.append({**new_record(member, rid, device, started), BATCHED_KEY: {"seeds": seeds}})
        trackers.append(make_tracker(member, rid))
        states.append(RunState(make_optimizer(model, member.train), member.train, trackers[-1]))
        checkpoints.append(open_checkpoint(member, results_dir, rid, clock))
        saved = resume(checkpoints[-1], model, states[-1], desc=desc)
        if saved:
            stream.state = saved[STREAM_KEY]
    setup_s = time.perf_counter() - clock
    open_runs = set(range(len(members)))

    def close(k: int, error: BaseException | None = None) -> None:
        end_run(records[k], states[k], tasks[k].metric_name, checkpoints[k], error)
        open_runs.discard(k)
        save_outcome(records[k], results_dir, trackers[k], checkpoints[k], setup_s)
        log_outcome(records[k], desc)

    def keep(k: int) -> None:
        checkpoints[k].keep(
            states[k].epoch,
            lambda: snapshot(models[k], states[k], **{STREAM_KEY: streams[k].state.clone()}),
        )

    try:
        fit_together(StackedCopies(models, streams), states, tasks, graphs, close, keep, desc)
    except BaseException as error:
        for k in sorted(open_runs):
            close(k, error)
        raise
    return records


def fit_together(
    copies: StackedCopies,
    states: list[RunState],
    tasks: list[Task],
    graphs: list[Data],
    close: Callable[[int], None],
    keep: Callable[[int], None],
    desc: str = "",
) -> None:
    """Train ``copies`` on their ``graphs`` as one batch; ``close(k)`` as copy k ends.

    Copy ``k`` trains from the epoch after ``states[k].epoch`` (0, or the epoch it resumes
    after): a copy resumed further than others waits for them, and each epoch trains the copies
    whose previous epoch is done. ``keep(k)`` is called after each epoch of a copy that goes on
    (for its checkpoint).
    """
    train = states[0].train
    optimizers = [state.optimizer for state in states]
    edge_index, x = graphs[0].edge_index, torch.stack([graph.x for graph in graphs])
    first = min(state.epoch for state in states) + 1
    active, inputs = [], x  # the copies training this epoch, and their stacked features
    bar = tqdm(range(first, train.epochs + 1), desc=desc, disable=not train.progress, leave=False)
    for epoch in bar:
        now = [k for k, state in enumerate(states) if not state.done and state.epoch == epoch - 1]
        if now != active:
            active, inputs = now, x if len(now) == len(states) else x[now]
        for k in active:
            states[k].start_epoch()
        losses, grads = _train_step(
            copies, active, inputs, edge_index, tasks, graphs, optimizers, train.track_gradients
        )
        outputs = _evaluation_outputs(copies, active, inputs, edge_index)
        for i, k in enumerate(active):
            try:
                if not math.isfinite(losses[i]):
                    raise NonFiniteError("non-finite training loss")
                metrics = score(tasks[k], [(outputs[i], graphs[k])])
            except NonFiniteError as divergence:
                states[k].diverge(epoch, str(divergence))
                continue
            states[k].end_epoch(
                epoch,
                losses[i],
                metrics,
                grads[i],
                lambda k=k: layer_lipschitz(copies.models[k], graphs[k]),
            )
        for k in active:
            if states[k].done:
                close(k)
            else:
                keep(k)
        bar.set_postfix(training=sum(not state.done for state in states))
        if all(state.done for state in states):
            break
    bar.close()


def _train_step(
    copies: StackedCopies,
    active: list[int],
    inputs: torch.Tensor,
    edge_index: torch.Tensor,
    tasks: list[Task],
    graphs: list[Data],
    optimizers: list[torch.optim.Optimizer],
    track_gradients: bool,
) -> tuple[list[float], list[torch.Tensor | None]]:
    """One optimiser step of every copy in ``active``; their losses and gradient norms.

    ``inputs`` holds the stacked features of those copies, in the order of ``active``.
    """
    copies.train()
    for k in active:
        optimizers[k].zero_grad()
    out = copies(active, inputs, edge_index)
    losses = []
    for i, k in enumerate(active):
        mask = graphs[k].train_mask
        losses.append(task_loss(tasks[k], out[i][mask], graphs[k].y[mask]))
    torch.stack(losses).sum().backward()
    grads = [gradient_norms(copies.models[k]) if track_gradients else None for k in active]
    for k in active:
        optimizers[k].step()
    return [loss.item() for loss in losses], grads


@torch.no_grad()
def _evaluation_outputs(
    copies: StackedCopies, active: list[int], inputs: torch.Tensor, edge_index: torch.Tensor
) -> torch.Tensor:
    copies.train(False)
    return copies(active, inputs, edge_index)
