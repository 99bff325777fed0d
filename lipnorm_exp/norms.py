"""Normalisations by config name (``norm.name``).

Node normalisations (PairNorm, LayerNorm) sit after each graph layer and before its
activation, as in the PairNorm paper's baselines. LipschitzNorm (``lip``) instead acts
inside attention layers on the attention scores (the paper's Eqs. 15, 17 and 19); here it is
the identity and the attention models build it into their layers.
"""

from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch_geometric.nn import LayerNorm, PairNorm

from lipnorm_exp.registry import Registry

#: ``(channels, **options)`` → the module, the options being the ``norm`` group's keys
NodeNorm = Callable[..., nn.Module]
NORMS: Registry[NodeNorm] = Registry("norm.name")
ATTENTION_NORMS = ("lip",)


class NoNorm(nn.Identity):
    """The identity, with the ``(x, batch)`` call of PyG's normalisation layers."""

    def forward(self, x: torch.Tensor, batch: torch.Tensor | None = None) -> torch.Tensor:
        return x


@NORMS.register("none")
@NORMS.register("lip")
def no_node_norm(channels: int, **options: Any) -> nn.Module:
    """No node normalisation (``lip`` works on attention scores instead: its options are theirs)."""
    return NoNorm()


@NORMS.register("pairnorm")
def pair_norm(channels: int, *, scale: float, scale_individually: bool) -> nn.Module:
    r"""PairNorm: centre, then rescale to mean row norm ``s`` (PN) or each row to ``s`` (PN-SI)."""
    return PairNorm(scale=scale, scale_individually=scale_individually)


@NORMS.register("layernorm")
def layer_norm(channels: int, *, affine: bool) -> nn.Module:
    """LayerNorm of each node's feature vector."""
    return LayerNorm(channels, affine=affine, mode="node")
