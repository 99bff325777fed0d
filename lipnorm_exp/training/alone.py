"""The epoch engine that trains one run by itself (`Alone`)."""

from collections.abc import Sequence

import torch

from lipnorm_exp.training.epoch import (
    EpochOutcome,
    StepOverflowError,
    evaluate,
    outcome,
    train_epoch,
)
from lipnorm_exp.training.lipschitz_estimate import layer_lipschitz
from lipnorm_exp.training.member import Member


class Alone:
    """The epochs of one run trained by itself: `train_epoch`, then `evaluate`.

    One of the two epoch engines of `lipnorm_exp.training.launch.fit` (the other trains
    several runs together: `lipnorm_exp.training.together.Together`); the members it is given
    are runs (`Member`): their ``model``, ``task`` and
    ``state``.

    Args:
        device: where the run trains.
    """

    def __init__(self, device: torch.device):
        self.device = device

    def epoch(self, members: Sequence[Member]) -> list[EpochOutcome]:
        """Train and evaluate the one run of ``members`` for an epoch."""
        [member] = members
        model, task = member.model, member.task
        try:
            loss, grads = train_epoch(
                model, member.state.optimizer, task, self.device, member.state.train.track_gradients
            )
        except StepOverflowError as overflow:
            return [EpochOutcome.overflowed(overflow)]
        return [outcome(loss, grads, lambda: evaluate(model, task, self.device))]

    def lipschitz(self, member: Member) -> list[float]:
        """Per-layer Lipschitz estimates of the run's model on its first evaluation batch."""
        return layer_lipschitz(member.model, next(iter(member.task.eval_batches)).to(self.device))
