"""Graph Transformer (UniMP) and GT-Lip (paper Eq. 19)."""

from omegaconf import DictConfig

from lipnorm_exp.models.attention import AttentionGNN
from lipnorm_exp.models.base import MODELS
from lipnorm_exp.nn import GTLayer, GTLipschitzNorm


@MODELS.register("gt")
class GT(AttentionGNN):
    """Depth-wise Graph Transformer; ``norm=lip`` gives GT-Lip."""

    layer_class = GTLayer
    lip_norm_class = GTLipschitzNorm
    attention_parameter_names = ("lin_query", "lin_key")

    def layer_options(self, model: DictConfig) -> dict:
        return {"beta": model.beta, "add_self_loops": True}  # i in N(i), as the paper's Eq. 19
