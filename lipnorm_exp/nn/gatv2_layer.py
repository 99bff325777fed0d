import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn import Parameter
from torch_geometric.nn.dense.linear import Linear
from torch_geometric.nn.inits import glorot, zeros
from torch_geometric.typing import OptTensor
from torch_geometric.utils import softmax

from lipnorm_exp.nn.attention import AttentionLayer, AttentionWeights
from lipnorm_exp.nn.lipschitz_norm import compute_dtype, safe_sqrt, source_target, squared_norm
from lipnorm_exp.nn.score_norm import GATv2ScoreNorm, ScoreNorm

__all__ = ["GATv2Layer"]


class GATv2Layer(AttentionLayer):
    r"""GATv2 layer (Brody et al.) with an optional LipschitzNorm for Lipschitz scores.

    Per head $h$,

    $$
    \tilde g_{ij} = a_h^\top \mathrm{LeakyReLU}\bigl(W_{r,h} x_i + W_{l,h} x_j + b_h\bigr),
    \qquad
    \alpha_{ij} = \operatorname{softmax}_{j \in \mathcal{N}(i)}(\tilde g_{ij}), \qquad
    x_i' = \Vert_{h} \sum_{j \in \mathcal{N}(i)} \alpha_{ij} (W_{l,h} x_j + b_{l,h}) + b.
    $$

    The score reads the rows $[x_i \,\|\, x_j]$ through $W_h = [W_{r,h} \; W_{l,h}]$
    and is Lipschitz with $L(\tilde g) \le \|a_h\|_2 \|W_h\|_F \max(1, \beta)$
    ($\beta$ the negative slope). With ``norm="lip"`` it is normalised by the paper's
    Eq. (15),

    $$
    g_{ij} = \frac{\alpha \, \tilde g_{ij}}{\max\left\{\max_{k \in \mathcal{N}(i)}
        |\tilde g_{ik}|, \; \max_{k \in \mathcal{N}(i)} \|[x_i \,\|\, x_k]\|_2 \,
        L(\tilde g)\right\} + \epsilon},
    $$

    see [`ScoreLipschitzNorm`][lipnorm_exp.nn.score_lipschitz_norm.ScoreLipschitzNorm].

    A drop-in for PyG's ``GATv2Conv``: the same arguments, inputs and parameters (``lin_l``,
    ``lin_r``, ``att``, ``lin_edge``, ``res``, ``bias``), so a ``GATv2Conv`` state dict loads,
    and with ``norm=None`` both compute the same function. Edge features enter inside the
    LeakyReLU, $W_{r,h} x_i + W_{l,h} x_j + W_{e,h} e_{ij}$; with ``norm="lip"`` the rows
    become $[x_i \,\|\, x_j \,\|\, e_{ij}]$ and $L(\tilde g)$ takes
    $\|[W_{r,h} \; W_{l,h} \; W_{e,h}]\|_F$, so Eq. (15) and Theorem 3 still hold.
    Like ``GATv2Conv`` it does not script (``torch.jit.script``);
    [`GTLayer`][lipnorm_exp.nn.gt_layer.GTLayer] does.

    Args:
        in_channels (int or tuple): size of each input node feature, or ``(source, target)``
            sizes for a bipartite graph (``lin_l`` reads sources, ``lin_r`` targets).
        out_channels (int): size of each head's output $C$.
        heads (int, optional): number of heads $H$. (default: `1`)
        concat (bool, optional): concatenate the heads; if `False`, average them.
            (default: `True`)
        negative_slope (float, optional): LeakyReLU slope. (default: `0.2`)
        dropout (float, optional): dropout probability of the attention weights.
            (default: `0.0`)
        add_self_loops (bool, optional): replace the input's self-loops by one per node, so
            $i \in \mathcal{N}(i)$. (default: `True`)
        edge_dim (int, optional): size of the edge features, if any. (default: `None`)
        fill_value (float, Tensor or str, optional): edge features of the added self-loops
            (``"mean"``: the mean over the node's in-edges). (default: `"mean"`)
        bias (bool, optional): biases in ``lin_l``, ``lin_r`` and on the output.
            (default: `True`)
        share_weights (bool, optional): use one matrix for sources and targets,
            $W_r = W_l$. (default: `False`)
        residual (bool, optional): add a learned projection of the (target) input.
            (default: `False`)
        norm (str, GATv2ScoreNorm or None, optional): ``None`` or ``"none"``, ``"lip"``
            ([`ScoreLipschitzNorm`][lipnorm_exp.nn.score_lipschitz_norm.ScoreLipschitzNorm] with
            defaults), or any object that keeps
            [`GATv2ScoreNorm`][lipnorm_exp.nn.score_norm.GATv2ScoreNorm]. (default: `None`)
        **kwargs (optional): ``MessagePassing``'s options, as for PyG's ``GATv2Conv`` (``aggr``,
            ``flow``).

    Shapes:
        - **x** $(|\mathcal{V}|, F_{in})$ or a pair
          $((|\mathcal{V}_s|, F_s), (|\mathcal{V}_t|, F_t))$
        - **edge_index** $(2, |\mathcal{E}|)$ or a ``torch.sparse`` adjacency
          $(|\mathcal{V}_t|, |\mathcal{V}_s|)$
        - **edge_attr** $(|\mathcal{E}|, D)$ *(optional)*
        - **output** $(|\mathcal{V}_t|, H C)$ if ``concat`` else
          $(|\mathcal{V}_t|, C)$; with ``return_attention_weights=True`` also
          ``(edge_index, alpha)``: the edges used (self-loops added) and the softmax weights
          $(|\mathcal{E}'|, H)$, before dropout.
    """

    score_contract = GATv2ScoreNorm

    def __init__(
        self,
        in_channels: int | tuple[int, int],
        out_channels: int,
        heads: int = 1,
        concat: bool = True,
        negative_slope: float = 0.2,
        dropout: float = 0.0,
        add_self_loops: bool = True,
        edge_dim: int | None = None,
        fill_value: float | Tensor | str = "mean",
        bias: bool = True,
        share_weights: bool = False,
        residual: bool = False,
        *,
        norm: str | ScoreNorm | None = None,
        **kwargs,
    ):
        super().__init__(
            in_channels,
            out_channels,
            heads=heads,
            concat=concat,
            dropout=dropout,
            add_self_loops=add_self_loops,
            edge_dim=edge_dim,
            fill_value=fill_value,
            norm=norm,
            **kwargs,
        )
        self.negative_slope = negative_slope
        self.share_weights = share_weights
        self.residual = residual
        width = heads * out_channels
        in_src, in_dst = self.in_pair
        self.lin_l = Linear(in_src, width, bias=bias, weight_initializer="glorot")
        if share_weights:
            self.lin_r = self.lin_l
        else:
            self.lin_r = Linear(in_dst, width, bias=bias, weight_initializer="glorot")
        self.att = Parameter(torch.empty(1, heads, out_channels))
        self.lin_edge = None
        if edge_dim is not None:
            self.lin_edge = Linear(edge_dim, width, bias=False, weight_initializer="glorot")
        self.make_residual_and_bias(residual, bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Glorot weights and attention vector, zero biases, in ``GATv2Conv``'s order."""
        super().reset_parameters()
        for lin in (self.lin_l, self.lin_r, self.lin_edge, self.res):
            if lin is not None:
                lin.reset_parameters()
        glorot(self.att)
        zeros(self.bias)

    def score_lipschitz(self) -> Tensor:
        r"""Per head, $\|a_h\|_2 \, \|[W_{r,h} \; W_{l,h} \; W_{e,h}]\|_F \max(1, \beta)$.

        Returns:
            Tensor: ``[H]`` (without edge features, no $W_{e,h}$).
        """
        shape = (self.heads, self.out_channels, -1)
        lins = [lin for lin in (self.lin_l, self.lin_r, self.lin_edge) if lin is not None]
        dtype = compute_dtype(self.att)
        weight_sq = sum(lin.weight.view(shape).to(dtype).square().sum(dim=(1, 2)) for lin in lins)
        att_sq = squared_norm(self.att.view(self.heads, self.out_channels))
        return safe_sqrt(att_sq * weight_sq) * max(1.0, abs(self.negative_slope))

    def forward(
        self,
        x: Tensor | tuple[Tensor, Tensor],
        edge_index: Tensor,
        edge_attr: OptTensor = None,
        return_attention_weights: bool | None = None,
    ) -> Tensor | tuple[Tensor, AttentionWeights]:
        """Attend over each node's neighbourhood; see the class docstring for shapes."""
        x_src, x_dst = source_target(x)
        res = None if self.res is None else self.res(x_dst)
        x_l, x_r = self.project(self.lin_l, self.lin_r, x_src, x_dst)
        size = self.graph_size(x_src, x_dst)
        edge_index, edge_attr = self.neighbourhoods(edge_index, edge_attr, size)
        alpha = self.edge_updater(
            edge_index,
            hidden=(x_l, x_r),
            features=(x_src, x_dst),
            edge_attr=edge_attr,
            size=size,
        )
        out = self.sum_messages(edge_index, alpha, x_l, size)
        return self.result(self.finish(out, res), edge_index, alpha, return_attention_weights)

    def edge_update(
        self,
        hidden_j: Tensor,
        hidden_i: Tensor,
        features: tuple[Tensor, Tensor],
        edge_attr: OptTensor,
        edge_index_j: Tensor,
        index: Tensor,
        ptr: OptTensor,
        dim_size: int,
    ) -> Tensor:
        """Softmax weights of every edge: score, LipschitzNorm, softmax."""
        hidden = hidden_i + hidden_j
        edge_attr = self.edge_rows(edge_attr)
        if edge_attr is not None:
            edge = self.project_edges(edge_attr)
            assert edge is not None, "edge features reach a layer that projects them"
            hidden = hidden + edge
        score = (F.leaky_relu(hidden, self.negative_slope) * self.att).sum(dim=-1)
        if self.norm is not None:
            edge_index = self.edge_pairs(edge_index_j, index)
            score = self.norm(
                score=score, x=features, lipschitz=self.score_lipschitz(),
                edge_index=edge_index, edge_attr=edge_attr,
            )  # fmt: skip
        return softmax(score, index, ptr, dim_size)
