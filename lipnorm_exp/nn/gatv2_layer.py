import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn import Parameter
from torch_geometric.nn.dense.linear import Linear
from torch_geometric.nn.inits import glorot, zeros
from torch_geometric.typing import OptTensor
from torch_geometric.utils import softmax

from lipnorm_exp.nn.attention import AttentionLayer
from lipnorm_exp.nn.lipschitz_norm import safe_sqrt, squared_norm
from lipnorm_exp.nn.score_lipschitz_norm import ScoreLipschitzNorm

__all__ = ["GATv2Layer"]


class GATv2Layer(AttentionLayer):
    r"""GATv2 layer (Brody et al.) with an optional LipschitzNorm for Lipschitz scores.

    Per head :math:`h`,

    .. math::
        \tilde g_{ij} = a_h^\top \mathrm{LeakyReLU}\bigl(W_{r,h} x_i + W_{l,h} x_j + b_h\bigr),
        \qquad
        \alpha_{ij} = \operatorname{softmax}_{j \in \mathcal{N}(i)}(\tilde g_{ij}), \qquad
        x_i' = \big\Vert_{h} \sum_{j \in \mathcal{N}(i)} \alpha_{ij} (W_{l,h} x_j + b_{l,h}) + b.

    The score reads the rows :math:`[x_i \,\|\, x_j]` through :math:`W_h = [W_{r,h} \; W_{l,h}]`
    and is Lipschitz with :math:`L(\tilde g) \le \|a_h\|_2 \|W_h\|_F \max(1, \beta)`
    (:math:`\beta` the negative slope). With ``norm="lip"`` it is normalised by the paper's
    Eq. (15),

    .. math::
        g_{ij} = \frac{\alpha \, \tilde g_{ij}}{\max\left\{\max_{k \in \mathcal{N}(i)}
            |\tilde g_{ik}|, \; \max_{k \in \mathcal{N}(i)} \|[x_i \,\|\, x_k]\|_2 \,
            L(\tilde g)\right\} + \epsilon},

    see :class:`ScoreLipschitzNorm`. The parameters are those of PyG's ``GATv2Conv``
    (``lin_l``, ``lin_r``, ``att``, ``bias``), so with ``norm=None`` both compute the same
    function.

    Args:
        in_channels (int): size of each input node feature.
        out_channels (int): size of each head's output :math:`C`.
        heads (int, optional): number of heads :math:`H`. (default: :obj:`1`)
        concat (bool, optional): concatenate the heads; if :obj:`False`, average them.
            (default: :obj:`True`)
        negative_slope (float, optional): LeakyReLU slope. (default: :obj:`0.2`)
        dropout (float, optional): dropout probability of the attention weights.
            (default: :obj:`0.0`)
        add_self_loops (bool, optional): replace the input's self-loops by one per node, so
            :math:`i \in \mathcal{N}(i)`. (default: :obj:`True`)
        bias (bool, optional): biases in ``lin_l``, ``lin_r`` and on the output.
            (default: :obj:`True`)
        share_weights (bool, optional): use one matrix for sources and targets,
            :math:`W_r = W_l`. (default: :obj:`False`)
        norm (str, ScoreLipschitzNorm or None, optional): ``None`` or ``"none"``, ``"lip"``
            (:class:`ScoreLipschitzNorm` with defaults), or a :class:`ScoreLipschitzNorm`
            instance. (default: :obj:`None`)

    Shapes:
        - **x** :math:`(|\mathcal{V}|, F_{in})`
        - **edge_index** :math:`(2, |\mathcal{E}|)`
        - **output** :math:`(|\mathcal{V}|, H C)` if ``concat`` else :math:`(|\mathcal{V}|, C)`;
          with ``return_attention_weights=True`` also ``(edge_index, alpha)``: the edges used
          (self-loops added) :math:`(2, |\mathcal{E}'|)` and the softmax weights
          :math:`(|\mathcal{E}'|, H)`, before dropout.
    """

    default_norm = ScoreLipschitzNorm

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        heads: int = 1,
        concat: bool = True,
        negative_slope: float = 0.2,
        dropout: float = 0.0,
        add_self_loops: bool = True,
        bias: bool = True,
        share_weights: bool = False,
        norm: str | nn.Module | None = None,
    ):
        super().__init__(in_channels, out_channels, heads, concat, dropout, add_self_loops, norm)
        self.negative_slope = negative_slope
        self.share_weights = share_weights
        width = heads * out_channels
        self.lin_l = Linear(in_channels, width, bias=bias, weight_initializer="glorot")
        if share_weights:
            self.lin_r = self.lin_l
        else:
            self.lin_r = Linear(in_channels, width, bias=bias, weight_initializer="glorot")
        self.att = Parameter(torch.empty(1, heads, out_channels))
        if bias:
            self.bias = Parameter(torch.empty(self.out_width))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Glorot weights and attention vector, zero biases (as ``GATv2Conv``)."""
        super().reset_parameters()
        self.lin_l.reset_parameters()
        self.lin_r.reset_parameters()
        glorot(self.att)
        zeros(self.bias)

    def score_lipschitz(self) -> Tensor:
        r"""Per head, :math:`\|a_h\|_2 \, \|[W_{r,h} \; W_{l,h}]\|_F \max(1, \beta)`: ``[H]``."""
        shape = (self.heads, self.out_channels, -1)
        weight_sq = self.lin_l.weight.view(shape).pow(2).sum(dim=(1, 2))
        weight_sq = weight_sq + self.lin_r.weight.view(shape).pow(2).sum(dim=(1, 2))
        att_sq = squared_norm(self.att.view(self.heads, self.out_channels))
        return safe_sqrt(att_sq * weight_sq) * max(1.0, abs(self.negative_slope))

    def forward(
        self, x: Tensor, edge_index: Tensor, return_attention_weights: bool | None = None
    ) -> Tensor | tuple[Tensor, tuple[Tensor, Tensor]]:
        """Attend over each node's neighbourhood; see the class docstring for shapes."""
        shape = (-1, self.heads, self.out_channels)
        x_l = self.lin_l(x).view(shape)
        x_r = x_l if self.share_weights else self.lin_r(x).view(shape)
        edge_index = self.neighbourhoods(edge_index, x.size(0))
        alpha = self.edge_updater(edge_index, hidden=(x_l, x_r), features=x)
        out = self.attend(edge_index, alpha, x_l)
        if self.bias is not None:
            out = out + self.bias
        return self.result(out, edge_index, alpha, return_attention_weights)

    def edge_update(
        self,
        hidden_j: Tensor,
        hidden_i: Tensor,
        features: Tensor,
        edge_index: Tensor,
        index: Tensor,
        ptr: OptTensor,
        dim_size: int,
    ) -> Tensor:
        """Softmax weights of every edge: score, LipschitzNorm, softmax."""
        score = (F.leaky_relu(hidden_i + hidden_j, self.negative_slope) * self.att).sum(dim=-1)
        if self.norm is not None:
            score = self.norm(score, features, self.score_lipschitz(), edge_index)
        return softmax(score, index, ptr, dim_size)
