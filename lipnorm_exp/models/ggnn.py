"""Gated graph neural network (Li et al., 2016)."""

from torch import nn
from torch_geometric.nn import GatedGraphConv

from lipnorm_exp.models.base import DepthwiseGNN


class GGNN(DepthwiseGNN):
    """Depth-wise GGNN: each graph layer is one GRU-gated propagation step with its own weights.

    A narrower input (``input_width`` < ``hidden``) is zero-padded by ``GatedGraphConv``; a
    wider one is refused.
    """

    label = "GGNN"

    def make_conv(self, index: int, in_channels: int, width: int) -> nn.Module:
        return GatedGraphConv(width, num_layers=1)
