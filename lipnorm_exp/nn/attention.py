"""The seam shared by the attention layers: score → normalise → softmax → aggregate.

Subclasses compute the softmax weights of every edge (raw score, their LipschitzNorm, softmax
over the target's neighbourhood) in ``edge_update``; this base adds the self-loops, applies
attention dropout, aggregates the weighted messages, merges the heads and returns the weights.
"""

import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn import MessagePassing
from torch_geometric.utils import add_self_loops, remove_self_loops

from lipnorm_exp.errors import ConfigError
from lipnorm_exp.nn.lipschitz_norm import norm_label, resolve_norm

__all__ = ["AttentionLayer"]


class AttentionLayer(MessagePassing):
    """Base of :class:`GATLayer`, :class:`GTLayer` and :class:`GATv2Layer` (not used alone).

    Args:
        in_channels (int): size of each input node feature.
        out_channels (int): size of each head's output.
        heads (int): number of attention heads.
        concat (bool): concatenate the heads (``True``) or average them (``False``).
        dropout (float): dropout probability of the attention weights, in ``[0, 1)``.
        add_self_loops (bool): replace the self-loops of the input by one per node.
        norm (str, nn.Module or None): ``None``/``"none"``, ``"lip"`` (``default_norm()``) or
            an instance of ``default_norm``.
    """

    default_norm: type[nn.Module]

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        heads: int,
        concat: bool,
        dropout: float,
        add_self_loops: bool,
        norm: str | nn.Module | None,
    ):
        super().__init__(aggr="add", node_dim=0)
        name = type(self).__name__
        if heads < 1:
            raise ConfigError(f"{name}: heads must be >= 1, got {heads}")
        if not 0.0 <= dropout < 1.0:
            raise ConfigError(f"{name}: dropout must be in [0, 1), got {dropout}")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.heads = heads
        self.concat = concat
        self.dropout = dropout
        self.add_self_loops = add_self_loops
        self.norm = resolve_norm(norm, self.default_norm)

    @property
    def out_width(self) -> int:
        """Width of the layer's output: ``heads * out_channels`` if concatenated."""
        return self.out_channels * (self.heads if self.concat else 1)

    def neighbourhoods(self, edge_index: Tensor, num_nodes: int) -> Tensor:
        """The edges that define :math:`N(i)`: self-loops replaced by one per node if asked."""
        if not self.add_self_loops:
            return edge_index
        edge_index, _ = remove_self_loops(edge_index)
        edge_index, _ = add_self_loops(edge_index, num_nodes=num_nodes)
        return edge_index

    def attend(self, edge_index: Tensor, alpha: Tensor, value: Tensor) -> Tensor:
        """Aggregate ``value`` ``[N, H, C]`` with weights ``alpha`` ``[E, H]``; merge heads."""
        alpha = F.dropout(alpha, p=self.dropout, training=self.training)
        out = self.propagate(edge_index, x=value, alpha=alpha)
        return out.reshape(-1, self.out_width) if self.concat else out.mean(dim=1)

    def message(self, x_j: Tensor, alpha: Tensor) -> Tensor:
        """Message of edge ``(j, i)``: its attention weight times ``x_j``, per head."""
        return alpha.unsqueeze(-1) * x_j

    @staticmethod
    def result(
        out: Tensor, edge_index: Tensor, alpha: Tensor, return_attention_weights: bool | None
    ) -> Tensor | tuple[Tensor, tuple[Tensor, Tensor]]:
        """``out``, or ``(out, (edge_index, alpha))`` when attention weights are asked for."""
        if return_attention_weights:
            return out, (edge_index, alpha)
        return out

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.in_channels}, {self.out_channels}, "
            f"heads={self.heads}, norm={norm_label(self.norm, self.default_norm)})"
        )
