"""GCNII (Chen et al., 2020), the deep convolutional baseline of the paper's Table 2."""

from typing import Any

import torch
from torch import nn
from torch_geometric.nn import GCN2Conv

from lipnorm_exp.models.base import DepthwiseGNN


class GCNII(DepthwiseGNN):
    r"""Depth-wise GCNII.

    Layer $l$ is PyG's ``GCN2Conv`` with initial residual $\alpha$ and identity
    mapping $\beta_l = \log(\theta / l + 1)$.

    Args:
        alpha (float): initial-residual strength $\alpha$, in [0, 1].
        theta (float): identity-mapping strength $\theta$ > 0.
        **options: the keyword arguments of `DepthwiseGNN`.
    """

    label = "GCNII"

    def __init__(
        self, in_channels: int, out_channels: int, *, alpha: float, theta: float, **options: Any
    ):
        self.alpha = alpha
        self.theta = theta
        super().__init__(in_channels, out_channels, **options)

    def make_conv(self, index: int, in_channels: int, width: int) -> nn.Module:
        return GCN2Conv(width, alpha=self.alpha, theta=self.theta, layer=index + 1)

    def conv_forward(
        self, conv: nn.Module, x: torch.Tensor, x0: torch.Tensor, edge_index: torch.Tensor
    ) -> torch.Tensor:
        return conv(x, x0, edge_index)
