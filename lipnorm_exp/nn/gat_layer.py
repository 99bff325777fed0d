import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn import Parameter
from torch_geometric.nn.dense.linear import Linear
from torch_geometric.nn.inits import glorot, zeros
from torch_geometric.typing import OptTensor
from torch_geometric.utils import softmax

from lipnorm_exp.nn.attention import AttentionLayer
from lipnorm_exp.nn.gat_lipschitz_norm import GATLipschitzNorm

__all__ = ["GATLayer"]


class GATLayer(AttentionLayer):
    r"""Graph attention layer (Veličković et al.) with an optional LipschitzNorm (GAT-Lip).

    Per head :math:`h`, with :math:`z_j = W_h x_j`,

    .. math::
        e_{ij} = a_h^\top [z_i \,\|\, z_j], \qquad
        \alpha_{ij} = \operatorname{softmax}_{j \in \mathcal{N}(i)}
            \bigl(\mathrm{LeakyReLU}(e_{ij})\bigr), \qquad
        x_i' = \big\Vert_{h} \sum_{j \in \mathcal{N}(i)} \alpha_{ij} z_j + b.

    With ``norm="lip"`` the raw score is first normalised as in the paper's Eq. (17),
    :math:`e_{ij} \leftarrow \alpha e_{ij} / (\|a_h\|_2 \max_{j \in \mathcal{N}(i)}
    \|[z_i \,\|\, z_j]\|_2 + \epsilon)`; see :class:`GATLipschitzNorm`. The parameters are
    those of PyG's ``GATConv`` (``lin``, ``att_src``, ``att_dst``, ``bias``), so with
    ``norm=None`` both compute the same function.

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
        bias (bool, optional): learn an additive output bias. (default: :obj:`True`)
        norm (str, GATLipschitzNorm or None, optional): ``None`` or ``"none"``, ``"lip"``
            (:class:`GATLipschitzNorm` with defaults), or a :class:`GATLipschitzNorm`
            instance. (default: :obj:`None`)

    Shapes:
        - **x** :math:`(|\mathcal{V}|, F_{in})`
        - **edge_index** :math:`(2, |\mathcal{E}|)`
        - **output** :math:`(|\mathcal{V}|, H C)` if ``concat`` else :math:`(|\mathcal{V}|, C)`;
          with ``return_attention_weights=True`` also ``(edge_index, alpha)``: the edges used
          (self-loops added) :math:`(2, |\mathcal{E}'|)` and the softmax weights
          :math:`(|\mathcal{E}'|, H)`, before dropout.
    """

    default_norm = GATLipschitzNorm

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
        norm: str | nn.Module | None = None,
    ):
        super().__init__(in_channels, out_channels, heads, concat, dropout, add_self_loops, norm)
        self.negative_slope = negative_slope
        self.lin = Linear(
            in_channels, heads * out_channels, bias=False, weight_initializer="glorot"
        )
        self.att_src = Parameter(torch.empty(1, heads, out_channels))
        self.att_dst = Parameter(torch.empty(1, heads, out_channels))
        if bias:
            self.bias = Parameter(torch.empty(self.out_width))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Glorot weights and attention vectors, zero bias (as ``GATConv``)."""
        super().reset_parameters()
        self.lin.reset_parameters()
        glorot(self.att_src)
        glorot(self.att_dst)
        zeros(self.bias)

    def forward(
        self, x: Tensor, edge_index: Tensor, return_attention_weights: bool | None = None
    ) -> Tensor | tuple[Tensor, tuple[Tensor, Tensor]]:
        """Attend over each node's neighbourhood; see the class docstring for shapes."""
        z = self.lin(x).view(-1, self.heads, self.out_channels)
        edge_index = self.neighbourhoods(edge_index, z.size(0))
        score_src = (z * self.att_src).sum(dim=-1)
        score_dst = (z * self.att_dst).sum(dim=-1)
        alpha = self.edge_updater(edge_index, score=(score_src, score_dst), z=z)
        out = self.attend(edge_index, alpha, z)
        if self.bias is not None:
            out = out + self.bias
        return self.result(out, edge_index, alpha, return_attention_weights)

    def edge_update(
        self,
        score_j: Tensor,
        score_i: Tensor,
        z: Tensor,
        edge_index: Tensor,
        index: Tensor,
        ptr: OptTensor,
        dim_size: int,
    ) -> Tensor:
        """Softmax weights of every edge: score, LipschitzNorm, LeakyReLU, softmax."""
        score = score_j + score_i
        if self.norm is not None:
            att = torch.cat([self.att_dst, self.att_src], dim=-1).squeeze(0)
            score = self.norm(score, z, att, edge_index)
        score = F.leaky_relu(score, self.negative_slope)
        return softmax(score, index, ptr, dim_size)
