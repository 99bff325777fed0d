"""``seed=[0,1,2]``: the epoch engine that trains several seeds of one configuration together.

Each seed is the run it would be alone, with the same identity and record
(`Member`: its data and model made as alone, its own Adam
optimiser, learning-rate schedule, early stop and best epoch). What is shared is the
computation: every epoch runs the forward and backward pass of all copies still training as
one batch (`StackedCopies`), so a GPU runs a few large kernels
instead of many small ones. The loss minimised is the sum of the copies' losses, whose gradient
with respect to each copy's parameters is that copy's own; dropout draws each copy's masks from
its own stream. A run's losses therefore equal those of the same run trained alone, within float
tolerance (the batched kernels add in another order).

A copy leaves the batch when it ends (early stop, divergence, last epoch) and its record is
written then (`lipnorm_exp.training.launch.fit`); each keeps its own checkpoint, its dropout
stream included, and resumes from it. Each record says it was trained in a batch (``batched``: the
seeds trained together). Only
full-graph tasks can be batched: every copy trains and evaluates on one graph, the same for all
(its features may differ, as the missing vectors of each seed do).
"""

from collections.abc import Sequence
from functools import partial
from typing import cast

import torch
from omegaconf import DictConfig
from torch_geometric.data import Data

from lipnorm_exp.data.features import dense
from lipnorm_exp.nn.copy_dropout import RandomStream
from lipnorm_exp.training.copies import StackedCopies
from lipnorm_exp.training.epoch import (
    EpochOutcome,
    StepOverflowError,
    gradient_norms,
    outcome,
    score,
    step,
    task_loss,
)
from lipnorm_exp.training.lipschitz_estimate import layer_lipschitz
from lipnorm_exp.training.member import Member
from lipnorm_exp.util.errors import ConfigError

__all__ = ["Together", "check_together"]


def check_together(cfg: DictConfig) -> None:
    """Refuse what seeds trained together cannot do: a tracker other than the records."""
    if cfg.logger.name != "none":
        raise ConfigError(
            f"seed=[...] (runs trained together) is tracked by its records only; "
            f"logger.name={cfg.logger.name}, allowed: none (or give one seed per run)"
        )


def _single_graph(member: Member) -> Data:
    """The one graph ``member``'s task trains and evaluates on, or a `ConfigError`."""
    task = member.task
    train, evaluation = list(task.train_batches), list(task.eval_batches)
    if len(train) != 1 or len(evaluation) != 1 or train[0] is not evaluation[0]:
        raise ConfigError(
            f"seed=[...] trains runs together on one full graph; dataset.name={task.name} "
            f"trains in batches (seed {member.cfg.seed}): give one seed per run"
        )
    return train[0]


class Together:
    """The epochs of several runs trained as one batch of stacked copies.

    One of the two epoch engines of `lipnorm_exp.training.launch.fit` (the other:
    `lipnorm_exp.training.alone.Alone`).

    Args:
        members: every run trained together, each with its dropout stream.
        device: where they train.

    Raises:
        ConfigError: a task that trains in batches, or seeds whose graphs differ.
    """

    def __init__(self, members: list[Member], device: torch.device):
        self.members = members
        self.graphs = [_single_graph(member).to(device) for member in members]
        self.edge_index = self.graphs[0].edge_index
        if any(not torch.equal(graph.edge_index, self.edge_index) for graph in self.graphs):
            raise ConfigError(
                "seed=[...] needs one graph for every seed; these seeds' graphs differ"
            )
        streams = [member.stream for member in members]  # each one's own: they train together
        self.copies = StackedCopies(
            [member.model for member in members], cast(list[RandomStream], streams)
        )
        self.x = torch.stack([dense(graph.x) for graph in self.graphs])  # vmap takes dense
        self._inputs: tuple[list[int], torch.Tensor] = (list(range(len(members))), self.x)

    def _stacked_inputs(self, active: list[int]) -> torch.Tensor:
        """The features of the copies ``active``, stacked (kept while they stay the same)."""
        if active != self._inputs[0]:
            self._inputs = active, self.x[active]
        return self._inputs[1]

    def epoch(self, members: Sequence[Member]) -> list[EpochOutcome]:
        """One epoch of every run of ``members``: one optimiser step each, then evaluation."""
        active = [self.members.index(member) for member in members]
        inputs = self._stacked_inputs(active)
        losses, grads, overflows = self._train_step(active, inputs)
        with torch.no_grad():
            self.copies.train(False)
            outputs = self.copies(active, inputs, self.edge_index)
        outcomes = []
        for i, k in enumerate(active):
            overflow = overflows[i]
            if overflow is not None:
                outcomes.append(EpochOutcome.overflowed(overflow))
                continue
            task, scored = self.members[k].task, [(outputs[i], self.graphs[k])]
            outcomes.append(outcome(losses[i], grads[i], partial(score, task, scored)))
        return outcomes

    def _train_step(
        self, active: list[int], inputs: torch.Tensor
    ) -> tuple[list[float], list[torch.Tensor | None], list[StepOverflowError | None]]:
        """One optimiser step of every copy in ``active``; their losses, gradient norms, overflows.

        The loss minimised is the sum of the copies' losses, whose gradient with respect to each
        copy's parameters is that copy's own. A copy whose step overflowed has its error in the
        third list (the others go on).
        """
        self.copies.train()
        optimizers = [self.members[k].state.optimizer for k in active]
        for optimizer in optimizers:
            optimizer.zero_grad()
        out = self.copies(active, inputs, self.edge_index)
        losses = []
        for i, k in enumerate(active):
            graph, task = self.graphs[k], self.members[k].task
            losses.append(task_loss(task, out[i][graph.train_mask], graph.y[graph.train_mask]))
        torch.stack(losses).sum().backward()
        track = self.members[active[0]].state.train.track_gradients
        grads = [gradient_norms(self.copies.models[k]) if track else None for k in active]
        overflows: list[StepOverflowError | None] = []
        for optimizer in optimizers:
            try:
                step(optimizer)
                overflows.append(None)
            except StepOverflowError as overflow:
                overflows.append(overflow)
        return [loss.item() for loss in losses], grads, overflows

    def lipschitz(self, member: Member) -> list[float]:
        """Per-layer Lipschitz estimates of ``member``'s model on its graph."""
        return layer_lipschitz(member.model, self.graphs[self.members.index(member)])
