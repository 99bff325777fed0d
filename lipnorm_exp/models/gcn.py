"""GCN (Kipf & Welling, 2017)."""

from torch import nn
from torch_geometric.nn import GCNConv

from lipnorm_exp.models.base import DepthwiseGNN


class GCN(DepthwiseGNN):
    """Depth-wise GCN with symmetric normalisation and self-loops."""

    label = "GCN"

    def make_conv(self, index: int, in_channels: int, width: int) -> nn.Module:
        return GCNConv(in_channels, width)
