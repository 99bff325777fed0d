"""GATv2 and GATv2-Lip through the general Lipschitz-score rule (paper Eq. 15)."""

from lipnorm_exp.models.attention import AttentionGNN
from lipnorm_exp.nn import GATv2Layer


class GATv2(AttentionGNN):
    """Depth-wise GATv2; ``norm="lip"`` normalises its score by Eq. 15 (the paper's variant)."""

    label = "GATv2"
    layer_class = GATv2Layer
    attention_parameter_names = ("att",)
