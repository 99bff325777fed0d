"""Graph Transformer (UniMP) and GT-Lip (paper Eq. 19)."""

from typing import Any

from lipnorm_exp.models.attention import AttentionGNN
from lipnorm_exp.nn import GTLayer


class GT(AttentionGNN):
    """Depth-wise Graph Transformer; ``norm="lip"`` gives GT-Lip.

    Args:
        beta (bool): gated root weight, as in ``TransformerConv``.
        **options: the keyword arguments of `AttentionGNN`.
    """

    label = "GT"
    layer_class = GTLayer
    attention_parameter_names = ("lin_query", "lin_key")

    def __init__(self, in_channels: int, out_channels: int, *, beta: bool, **options: Any):
        self.beta = beta
        super().__init__(in_channels, out_channels, **options)

    def layer_options(self) -> dict[str, Any]:
        return {"beta": self.beta, "add_self_loops": True}  # i in N(i), as the paper's Eq. 19
