"""GCNII (Chen et al., 2020), the deep convolutional baseline of the paper's Table 2."""

import torch
from omegaconf import DictConfig
from torch import nn
from torch_geometric.nn import GCN2Conv

from lipnorm_exp.errors import ConfigError
from lipnorm_exp.models.base import MODELS, DepthwiseGNN


@MODELS.register("gcnii")
class GCNII(DepthwiseGNN):
    r"""Depth-wise GCNII.

    Layer :math:`l` is PyG's ``GCN2Conv`` with initial residual :math:`\alpha` and identity
    mapping :math:`\beta_l = \log(\theta / l + 1)`.
    """

    @classmethod
    def check_config(cls, model: DictConfig, norm: DictConfig) -> None:
        super().check_config(model, norm)
        if model.residual:
            raise ConfigError(
                "model.residual=true is not allowed for gcnii (it has its own initial residual); "
                "allowed: false"
            )
        if model.input_width not in (None, model.hidden):
            raise ConfigError(
                f"model.input_width={model.input_width} is not allowed for gcnii (every layer "
                f"mixes in the input at width model.hidden={model.hidden}); allowed: null, "
                f"{model.hidden}"
            )
        if not 0.0 <= model.alpha <= 1.0:
            raise ConfigError(f"model.alpha must be in [0, 1] for gcnii, got {model.alpha}")
        if model.theta <= 0:
            raise ConfigError(f"model.theta must be > 0 for gcnii, got {model.theta}")

    def make_conv(
        self, model: DictConfig, norm: DictConfig, index: int, in_channels: int
    ) -> nn.Module:
        return GCN2Conv(model.hidden, alpha=model.alpha, theta=model.theta, layer=index + 1)

    def conv_forward(
        self, conv: nn.Module, x: torch.Tensor, x0: torch.Tensor, edge_index: torch.Tensor
    ) -> torch.Tensor:
        return conv(x, x0, edge_index)
