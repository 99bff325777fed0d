"""GIN (Xu et al., 2019)."""

from omegaconf import DictConfig
from torch import nn
from torch_geometric.nn import GINConv

from lipnorm_exp.models.base import MODELS, DepthwiseGNN


@MODELS.register("gin")
class GIN(DepthwiseGNN):
    """Depth-wise GIN; each layer's update is a 2-layer MLP (Linear → ReLU → Linear)."""

    def make_conv(
        self, model: DictConfig, norm: DictConfig, index: int, in_channels: int
    ) -> nn.Module:
        mlp = nn.Sequential(
            nn.Linear(in_channels, model.hidden), nn.ReLU(), nn.Linear(model.hidden, model.hidden)
        )
        return GINConv(mlp, train_eps=model.train_eps)
