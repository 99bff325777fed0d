"""Normalisations by config name (``norm.name``).

Node normalisations (PairNorm, LayerNorm) sit after each graph layer and before its
activation, as in the PairNorm paper's baselines. LipschitzNorm (``lip``) instead acts
inside attention layers on the attention scores (the paper's Eqs. 15, 17 and 19); here it is
the identity and the attention models build it into their layers.
"""

from collections.abc import Callable

import torch
from omegaconf import DictConfig
from torch import nn
from torch_geometric.nn import LayerNorm, PairNorm

from lipnorm_exp.registry import Registry

NodeNorm = Callable[[DictConfig, int], nn.Module]
NORMS: Registry[NodeNorm] = Registry("norm.name")
ATTENTION_NORMS = ("lip",)


class NoNorm(nn.Identity):
    """The identity, with the ``(x, batch)`` call of PyG's normalisation layers."""

    def forward(self, x: torch.Tensor, batch: torch.Tensor | None = None) -> torch.Tensor:
        return x


@NORMS.register("none")
@NORMS.register("lip")
def no_node_norm(cfg: DictConfig, channels: int) -> nn.Module:
    """No node normalisation (``lip`` works on attention scores instead)."""
    return NoNorm()


@NORMS.register("pairnorm")
def pair_norm(cfg: DictConfig, channels: int) -> nn.Module:
    r"""PairNorm: centre, then rescale to mean row norm ``s`` (PN) or each row to ``s`` (PN-SI)."""
    return PairNorm(scale=cfg.scale, scale_individually=cfg.scale_individually)


@NORMS.register("layernorm")
def layer_norm(cfg: DictConfig, channels: int) -> nn.Module:
    """LayerNorm of each node's feature vector."""
    return LayerNorm(channels, affine=cfg.affine, mode="node")
