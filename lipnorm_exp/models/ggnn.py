"""Gated graph neural network (Li et al., 2016)."""

from omegaconf import DictConfig
from torch import nn
from torch_geometric.nn import GatedGraphConv

from lipnorm_exp.models.base import MODELS, DepthwiseGNN


@MODELS.register("ggnn")
class GGNN(DepthwiseGNN):
    """Depth-wise GGNN: each graph layer is one GRU-gated propagation step with its own weights.

    A narrower input (``model.input_width`` < ``model.hidden``) is zero-padded by
    ``GatedGraphConv``; a wider one is refused.
    """

    def make_conv(
        self, model: DictConfig, norm: DictConfig, index: int, in_channels: int
    ) -> nn.Module:
        return GatedGraphConv(model.hidden, num_layers=1)
