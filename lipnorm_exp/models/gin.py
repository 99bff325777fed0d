"""GIN (Xu et al., 2019)."""

from typing import Any

from torch import nn
from torch_geometric.nn import GINConv

from lipnorm_exp.models.base import DepthwiseGNN


class GIN(DepthwiseGNN):
    """Depth-wise GIN; each layer's update is a 2-layer MLP.

    The MLP is Linear → ReLU → Linear, or with ``batch_norm=True`` Alon & Yahav's
    Linear → BatchNorm → ReLU → Linear → BatchNorm → ReLU.

    Args:
        train_eps (bool): learn GIN's epsilon.
        batch_norm (bool): BatchNorm and ReLU after each Linear of the MLP.
        **options: the keyword arguments of `DepthwiseGNN`.
    """

    label = "GIN"

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        *,
        train_eps: bool,
        batch_norm: bool,
        **options: Any,
    ):
        self.train_eps = train_eps
        self.batch_norm = batch_norm
        super().__init__(in_channels, out_channels, **options)

    def make_conv(self, index: int, in_channels: int, width: int) -> nn.Module:
        if self.batch_norm:
            mlp = nn.Sequential(
                nn.Linear(in_channels, width), nn.BatchNorm1d(width), nn.ReLU(),
                nn.Linear(width, width), nn.BatchNorm1d(width), nn.ReLU(),
            )  # fmt: skip
        else:
            mlp = nn.Sequential(nn.Linear(in_channels, width), nn.ReLU(), nn.Linear(width, width))
        return GINConv(mlp, train_eps=self.train_eps)
