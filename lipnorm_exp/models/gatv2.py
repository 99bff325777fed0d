"""GATv2 and GATv2-Lip through the general Lipschitz-score rule (paper Eq. 15)."""

from torch import nn

from lipnorm_exp.models.attention import AttentionGNN
from lipnorm_exp.models.base import MODELS
from lipnorm_exp.nn import GATv2Layer, ScoreLipschitzNorm


@MODELS.register("gatv2")
class GATv2(AttentionGNN):
    """Depth-wise GATv2; ``norm="lip"`` normalises its score by Eq. 15 (the paper's variant)."""

    layer_class = GATv2Layer
    lip_norm_class = ScoreLipschitzNorm
    attention_parameter_names = ("att",)

    def score_norm(self) -> nn.Module | None:
        if self.norm != "lip":
            return None
        return ScoreLipschitzNorm(alpha=self.norm_options["alpha"], eps=self.norm_options["eps"])
