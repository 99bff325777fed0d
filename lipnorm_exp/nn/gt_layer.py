import math

import torch
from torch import Tensor, nn
from torch_geometric.nn.dense.linear import Linear
from torch_geometric.typing import OptTensor
from torch_geometric.utils import softmax

from lipnorm_exp.nn.attention import AttentionLayer
from lipnorm_exp.nn.gt_lipschitz_norm import GTLipschitzNorm

__all__ = ["GTLayer"]


class GTLayer(AttentionLayer):
    r"""Graph transformer layer (UniMP, Shi et al.) with an optional LipschitzNorm (GT-Lip).

    Per head, with :math:`q_i = W_q x_i`, :math:`k_j = W_k x_j`, :math:`v_j = W_v x_j`,

    .. math::
        \alpha_{ij} = \operatorname{softmax}_{j \in \mathcal{N}(i)}
            \left(\frac{q_i^\top k_j}{\sqrt{d}}\right), \qquad
        x_i' = W_s x_i + \big\Vert_{h} \sum_{j \in \mathcal{N}(i)} \alpha_{ij} v_j.

    With ``norm="lip"`` the score is the paper's Eq. (19),
    :math:`q_i^\top k_j / (\max\{uv, uw, vw\} + \epsilon)` with :math:`u = \|q_i\|_2`,
    :math:`v = \max_{j \in \mathcal{N}(i)} \|k_j\|_2`, :math:`w = \max_{j \in \mathcal{N}(i)}
    \|v_j\|_2` (no :math:`1/\sqrt{d}`); see :class:`GTLipschitzNorm`. With ``beta=True`` the
    skip is gated, :math:`x_i' = \beta_i W_s x_i + (1 - \beta_i) m_i`,
    :math:`\beta_i = \sigma(w^\top [m_i, W_s x_i, m_i - W_s x_i])`. The parameters are those of
    PyG's ``TransformerConv`` (``lin_query``, ``lin_key``, ``lin_value``, ``lin_skip``,
    ``lin_beta``), which adds no self-loops: with ``norm=None`` this layer equals
    ``TransformerConv`` applied to the edges with self-loops.

    Args:
        in_channels (int): size of each input node feature.
        out_channels (int): size of each head's output :math:`d`.
        heads (int, optional): number of heads :math:`H`. (default: :obj:`1`)
        concat (bool, optional): concatenate the heads; if :obj:`False`, average them.
            (default: :obj:`True`)
        beta (bool, optional): gate the skip connection (needs ``root_weight``).
            (default: :obj:`False`)
        dropout (float, optional): dropout probability of the attention weights.
            (default: :obj:`0.0`)
        root_weight (bool, optional): add the skip :math:`W_s x_i`. (default: :obj:`True`)
        bias (bool, optional): biases in the query, key, value and skip projections.
            (default: :obj:`True`)
        norm (str, GTLipschitzNorm or None, optional): ``None`` or ``"none"``, ``"lip"``
            (:class:`GTLipschitzNorm` with defaults), or a :class:`GTLipschitzNorm` instance.
            (default: :obj:`None`)
        add_self_loops (bool, optional): replace the input's self-loops by one per node, so
            :math:`i \in \mathcal{N}(i)` as the paper's neighbourhoods require (an option that
            ``TransformerConv`` lacks). (default: :obj:`True`)

    Shapes:
        - **x** :math:`(|\mathcal{V}|, F_{in})`
        - **edge_index** :math:`(2, |\mathcal{E}|)`
        - **output** :math:`(|\mathcal{V}|, H d)` if ``concat`` else :math:`(|\mathcal{V}|, d)`;
          with ``return_attention_weights=True`` also ``(edge_index, alpha)``: the edges used
          :math:`(2, |\mathcal{E}'|)` and the softmax weights :math:`(|\mathcal{E}'|, H)`,
          before dropout.
    """

    default_norm = GTLipschitzNorm

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        heads: int = 1,
        concat: bool = True,
        beta: bool = False,
        dropout: float = 0.0,
        root_weight: bool = True,
        bias: bool = True,
        norm: str | nn.Module | None = None,
        add_self_loops: bool = True,
    ):
        super().__init__(in_channels, out_channels, heads, concat, dropout, add_self_loops, norm)
        self.beta = beta and root_weight
        self.root_weight = root_weight
        width = heads * out_channels
        self.lin_key = Linear(in_channels, width, bias=bias)
        self.lin_query = Linear(in_channels, width, bias=bias)
        self.lin_value = Linear(in_channels, width, bias=bias)
        self.lin_skip = Linear(in_channels, self.out_width, bias=bias) if root_weight else None
        self.lin_beta = Linear(3 * self.out_width, 1, bias=False) if self.beta else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw every projection (PyG ``Linear`` defaults, as ``TransformerConv``)."""
        super().reset_parameters()
        for lin in (self.lin_key, self.lin_query, self.lin_value, self.lin_skip, self.lin_beta):
            if lin is not None:
                lin.reset_parameters()

    def forward(
        self, x: Tensor, edge_index: Tensor, return_attention_weights: bool | None = None
    ) -> Tensor | tuple[Tensor, tuple[Tensor, Tensor]]:
        """Attend over each node's neighbourhood; see the class docstring for shapes."""
        shape = (-1, self.heads, self.out_channels)
        query = self.lin_query(x).view(shape)
        key = self.lin_key(x).view(shape)
        value = self.lin_value(x).view(shape)
        edge_index = self.neighbourhoods(edge_index, x.size(0))
        alpha = self.edge_updater(edge_index, query=query, key=key, value=value)
        out = self.attend(edge_index, alpha, value)
        if self.lin_skip is not None:
            skip = self.lin_skip(x)
            if self.lin_beta is not None:
                gate = self.lin_beta(torch.cat([out, skip, out - skip], dim=-1)).sigmoid()
                out = gate * skip + (1 - gate) * out
            else:
                out = out + skip
        return self.result(out, edge_index, alpha, return_attention_weights)

    def edge_update(
        self,
        query_i: Tensor,
        key_j: Tensor,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        edge_index: Tensor,
        index: Tensor,
        ptr: OptTensor,
        dim_size: int,
    ) -> Tensor:
        """Softmax weights of every edge: dot product, LipschitzNorm (or scaling), softmax."""
        score = (query_i * key_j).sum(dim=-1)
        if self.norm is None:
            score = score / math.sqrt(self.out_channels)
        else:
            score = self.norm(score, query, key, value, edge_index)
        return softmax(score, index, ptr, dim_size)
