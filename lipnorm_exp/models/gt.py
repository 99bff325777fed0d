"""Graph Transformer (UniMP) and GT-Lip (paper Eq. 19)."""

from omegaconf import DictConfig
from torch import nn

from lipnorm_exp.models.attention import AttentionGNN
from lipnorm_exp.models.base import MODELS
from lipnorm_exp.nn import GTLayer, GTLipschitzNorm


@MODELS.register("gt")
class GT(AttentionGNN):
    """Depth-wise Graph Transformer; ``norm=lip`` gives GT-Lip."""

    lip_norm_class = GTLipschitzNorm
    attention_parameter_names = ("lin_query", "lin_key")

    def make_conv(self, model: DictConfig, norm: DictConfig, index: int) -> nn.Module:
        return GTLayer(
            model.hidden,
            self.head_channels(model),
            heads=model.heads,
            concat=model.concat,
            beta=model.beta,
            dropout=model.attn_dropout,
            norm=self.score_norm(norm),
        )
