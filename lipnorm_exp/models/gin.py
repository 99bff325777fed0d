"""GIN (Xu et al., 2019)."""

from omegaconf import DictConfig
from torch import nn
from torch_geometric.nn import GINConv

from lipnorm_exp.models.base import MODELS, DepthwiseGNN


@MODELS.register("gin")
class GIN(DepthwiseGNN):
    """Depth-wise GIN; each layer's update is a 2-layer MLP.

    The MLP is Linear → ReLU → Linear, or with ``model.batch_norm=true`` Alon & Yahav's
    Linear → BatchNorm → ReLU → Linear → BatchNorm → ReLU.
    """

    def make_conv(
        self, model: DictConfig, norm: DictConfig, index: int, in_channels: int
    ) -> nn.Module:
        width = model.hidden
        if model.batch_norm:
            mlp = nn.Sequential(
                nn.Linear(in_channels, width), nn.BatchNorm1d(width), nn.ReLU(),
                nn.Linear(width, width), nn.BatchNorm1d(width), nn.ReLU(),
            )  # fmt: skip
        else:
            mlp = nn.Sequential(nn.Linear(in_channels, width), nn.ReLU(), nn.Linear(width, width))
        return GINConv(mlp, train_eps=model.train_eps)
