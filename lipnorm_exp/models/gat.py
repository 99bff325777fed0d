"""GAT and GAT-Lip (paper Eq. 17)."""

from lipnorm_exp.models.attention import AttentionGNN
from lipnorm_exp.models.base import MODELS
from lipnorm_exp.nn import GATLayer, GATLipschitzNorm


@MODELS.register("gat")
class GAT(AttentionGNN):
    """Depth-wise GAT; ``norm="lip"`` gives GAT-Lip."""

    label = "GAT"
    layer_class = GATLayer
    lip_norm_class = GATLipschitzNorm
    attention_parameter_names = ("att_src", "att_dst")
