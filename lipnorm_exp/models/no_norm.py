"""The node module of ``norm=none`` and of the attention-score norms: the identity."""

import torch
from torch import nn

__all__ = ["NoNorm"]


class NoNorm(nn.Identity):
    """The identity, with the ``(x, batch)`` call of PyG's normalisation layers."""

    def forward(self, x: torch.Tensor, batch: torch.Tensor | None = None) -> torch.Tensor:
        return x
