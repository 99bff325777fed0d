"""GAT and GAT-Lip (paper Eq. 17)."""

from omegaconf import DictConfig
from torch import nn

from lipnorm_exp.models.attention import AttentionGNN
from lipnorm_exp.models.base import MODELS
from lipnorm_exp.nn import GATLayer, GATLipschitzNorm


@MODELS.register("gat")
class GAT(AttentionGNN):
    """Depth-wise GAT; ``norm=lip`` gives GAT-Lip."""

    lip_norm_class = GATLipschitzNorm
    attention_parameter_names = ("att_src", "att_dst")

    def make_conv(self, model: DictConfig, norm: DictConfig, index: int) -> nn.Module:
        return GATLayer(
            model.hidden,
            self.head_channels(model),
            heads=model.heads,
            concat=model.concat,
            dropout=model.attn_dropout,
            norm=self.score_norm(norm),
        )
