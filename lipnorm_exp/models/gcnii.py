"""GCNII (Chen et al., 2020), the deep convolutional baseline of the paper's Table 2."""

import torch
from omegaconf import DictConfig
from torch import nn
from torch_geometric.nn import GCN2Conv

from lipnorm_exp.models.base import MODELS, DepthwiseGNN


@MODELS.register("gcnii")
class GCNII(DepthwiseGNN):
    r"""Depth-wise GCNII.

    Layer :math:`l` is PyG's ``GCN2Conv`` with initial residual :math:`\alpha` and identity
    mapping :math:`\beta_l = \log(\theta / l + 1)`.
    """

    def make_conv(
        self, model: DictConfig, norm: DictConfig, index: int, in_channels: int
    ) -> nn.Module:
        return GCN2Conv(model.hidden, alpha=model.alpha, theta=model.theta, layer=index + 1)

    def conv_forward(
        self, conv: nn.Module, x: torch.Tensor, x0: torch.Tensor, edge_index: torch.Tensor
    ) -> torch.Tensor:
        return conv(x, x0, edge_index)
