"""GAT and GAT-Lip (paper Eq. 17)."""

from lipnorm_exp.models.attention import AttentionGNN
from lipnorm_exp.nn import GATLayer


class GAT(AttentionGNN):
    """Depth-wise GAT; ``norm="lip"`` gives GAT-Lip."""

    label = "GAT"
    layer_class = GATLayer
    attention_parameter_names = ("att_src", "att_dst")
