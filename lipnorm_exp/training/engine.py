"""The contract between the training loop and an epoch engine: `Engine`.

The loop is `lipnorm_exp.training.launch.fit`.
Two engines keep it: `Alone` trains one run by itself,
`Together` the seeds of one configuration as stacked copies.
The loop owns the epochs, the early stop and the records; an engine owns how an epoch's
arithmetic is done.
"""

from collections.abc import Sequence
from typing import Protocol

from lipnorm_exp.training.epoch import EpochOutcome
from lipnorm_exp.training.member import Member

__all__ = ["Engine"]


class Engine(Protocol):
    """What `fit` asks of an epoch engine."""

    def epoch(self, members: Sequence[Member]) -> list[EpochOutcome]:
        """Train ``members`` (the runs whose previous epoch is done) for one epoch and score them.

        Returns:
            one `EpochOutcome` per member, in their order.
        """
        ...

    def lipschitz(self, member: Member) -> list[float]:
        """Per-layer Lipschitz estimates of ``member``'s model on its first evaluation batch."""
        ...
