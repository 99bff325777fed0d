"""The missing-vector setting of PairNorm (paper §7.1): feature rows of unlabelled nodes zeroed."""

import torch
from torch_geometric.data import Data
from torch_geometric.transforms import BaseTransform

from lipnorm_exp.util.errors import ConfigError

__all__ = ["MissingVectors"]


class MissingVectors(BaseTransform):
    r"""Zeroes the feature vectors of a seeded uniform draw of the nodes outside the training set.

    With $V_u$ the nodes not in ``train_mask`` and rate $p$, a set $M \subseteq
    V_u$ is drawn uniformly without replacement and its rows of ``x`` are set to zero:

    $$
    |M| = \operatorname{round}(p \, |V_u|), \qquad
    x_v \leftarrow \mathbf{0} \quad \forall v \in M
    $$

    (``round`` is Python's: nearest integer, ties to even). Training nodes always keep their
    features, $p = 0$ changes nothing and $p = 1$ zeroes all of $V_u$. The
    draw depends only on ``seed`` and $|V_u|$. Apply it after feature normalisation, so
    the zeroed rows stay zero. The input is left unchanged.

    Args:
        rate (float): fraction $p \in [0, 1]$ of non-training nodes to blank.
        seed (int): seed of the `torch.Generator` that draws $M$ (the run's seed).

    Shapes:
        - **input:** ``data.x`` $(|V|, F)$, ``data.train_mask`` $(|V|)$ boolean
        - **output:** the same, plus ``data.missing_mask`` $(|V|)$ boolean, true on
          $M$

    Raises:
        ConfigError: ``rate`` outside $[0, 1]$.
    """

    def __init__(self, rate: float, seed: int):
        if not 0.0 <= rate <= 1.0:
            raise ConfigError(f"dataset.missing_rate must be in [0, 1], got {rate}")
        self.rate = float(rate)
        self.seed = int(seed)

    def forward(self, data: Data) -> Data:
        """Return ``data`` with the rows of $M$ zeroed and ``missing_mask`` set."""
        unlabelled = (~data.train_mask).nonzero().view(-1)
        count = round(self.rate * unlabelled.numel())
        generator = torch.Generator().manual_seed(self.seed)
        drawn = unlabelled[torch.randperm(unlabelled.numel(), generator=generator)[:count]]
        missing_mask = torch.zeros_like(data.train_mask)
        missing_mask[drawn] = True
        data.x = data.x.masked_fill(missing_mask.unsqueeze(-1), 0.0)
        data.missing_mask = missing_mask
        return data

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(rate={self.rate}, seed={self.seed})"
