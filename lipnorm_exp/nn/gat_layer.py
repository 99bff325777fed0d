from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn import Parameter
from torch_geometric.nn.dense.linear import Linear
from torch_geometric.nn.inits import glorot, zeros
from torch_geometric.typing import OptTensor

from lipnorm_exp.nn.attention import AttentionLayer, AttentionWeights
from lipnorm_exp.nn.bounded_softmax import bounded_softmax
from lipnorm_exp.nn.lipschitz_norm import rescale, source_target
from lipnorm_exp.nn.score_norm import GATScoreNorm, ScoreNorm
from lipnorm_exp.nn.shifted_softmax import shifted_softmax

__all__ = ["GATLayer"]


class GATLayer(AttentionLayer):
    r"""Graph attention layer (Veličković et al.) with an optional LipschitzNorm (GAT-Lip).

    Per head $h$, with $z_j = W_h x_j$,

    $$
    e_{ij} = a_h^\top [z_i \,\|\, z_j], \qquad
    \alpha_{ij} = \operatorname{softmax}_{j \in \mathcal{N}(i)}
        \bigl(\mathrm{LeakyReLU}(e_{ij})\bigr), \qquad
    x_i' = \Vert_{h} \sum_{j \in \mathcal{N}(i)} \alpha_{ij} z_j + b.
    $$

    With ``norm="lip"`` the raw score is first normalised as in the paper's Eq. (17),
    $e_{ij} \leftarrow \alpha e_{ij} / (\|a_h\|_2 \max_{j \in \mathcal{N}(i)}
    \|[z_i \,\|\, z_j]\|_2 + \epsilon)$; see
    [`GATLipschitzNorm`][lipnorm_exp.nn.gat_lipschitz_norm.GATLipschitzNorm].

    A drop-in for PyG's ``GATConv``: the same arguments, inputs and parameters (``lin`` or
    ``lin_src``/``lin_dst``, ``att_src``, ``att_dst``, ``lin_edge``, ``att_edge``, ``res``,
    ``bias``), so a ``GATConv`` state dict loads, and with ``norm=None`` both compute the same
    function. Edge features add $a_{e,h}^\top W_{e,h} e_{ij}$ to the score; with
    ``norm="lip"`` they are part of the rows that Eq. (17) normalises, sharing the denominator
    $c_i$ (see [`GATLipschitzNorm`][lipnorm_exp.nn.gat_lipschitz_norm.GATLipschitzNorm]), and
    Corollary 1 still bounds each head. Like ``GATConv`` it does not script (``torch.jit.script``);
    [`GTLayer`][lipnorm_exp.nn.gt_layer.GTLayer] does.

    Args:
        in_channels (int or tuple): size of each input node feature, or ``(source, target)``
            sizes for a bipartite graph (then ``lin_src`` and ``lin_dst`` replace ``lin``).
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
        bias (bool, optional): learn an additive output bias. (default: `True`)
        residual (bool, optional): add a learned projection of the (target) input.
            (default: `False`)
        norm (str, GATScoreNorm or None, optional): ``None`` or ``"none"``, ``"lip"``
            ([`GATLipschitzNorm`][lipnorm_exp.nn.gat_lipschitz_norm.GATLipschitzNorm] with
            defaults), or any object that keeps
            [`GATScoreNorm`][lipnorm_exp.nn.score_norm.GATScoreNorm] (a
            [`GATLipschitzNorm`][lipnorm_exp.nn.gat_lipschitz_norm.GATLipschitzNorm] with other
            options, say). (default: `None`)
        **kwargs (optional): ``MessagePassing``'s options, as for PyG's ``GATConv`` (``aggr``,
            ``flow``).

    Shapes:
        - **x** $(|\mathcal{V}|, F_{in})$ or a pair
          $((|\mathcal{V}_s|, F_s), (|\mathcal{V}_t|, F_t))$; the target part may be
          ``None``
        - **edge_index** $(2, |\mathcal{E}|)$ or a ``torch.sparse`` adjacency
          $(|\mathcal{V}_t|, |\mathcal{V}_s|)$
        - **edge_attr** $(|\mathcal{E}|, D)$ *(optional)*
        - **size** ``(sources, targets)`` *(optional)*
        - **output** $(|\mathcal{V}_t|, H C)$ if ``concat`` else
          $(|\mathcal{V}_t|, C)$; with ``return_attention_weights=True`` also
          ``(edge_index, alpha)``: the edges used (self-loops added) and the softmax weights
          $(|\mathcal{E}'|, H)$, before dropout.
    """

    score_contract = GATScoreNorm

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
        self.residual = residual
        width = heads * out_channels
        in_src, in_dst = self.in_pair
        self.lin = self.lin_src = self.lin_dst = None
        if isinstance(in_channels, int):
            self.lin = Linear(in_channels, width, bias=False, weight_initializer="glorot")
        else:
            self.lin_src = Linear(in_src, width, bias=False, weight_initializer="glorot")
            self.lin_dst = Linear(in_dst, width, bias=False, weight_initializer="glorot")
        self.att_src = Parameter(torch.empty(1, heads, out_channels))
        self.att_dst = Parameter(torch.empty(1, heads, out_channels))
        self.lin_edge = None
        if edge_dim is not None:
            self.lin_edge = Linear(edge_dim, width, bias=False, weight_initializer="glorot")
            self.att_edge = Parameter(torch.empty(1, heads, out_channels))
        else:
            self.register_parameter("att_edge", None)
        self.make_residual_and_bias(residual, bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Glorot weights and attention vectors, zero bias, in ``GATConv``'s order."""
        super().reset_parameters()
        for lin in (self.lin, self.lin_src, self.lin_dst, self.lin_edge, self.res):
            if lin is not None:
                lin.reset_parameters()
        glorot(self.att_src)
        glorot(self.att_dst)
        glorot(self.att_edge)
        zeros(self.bias)

    def forward(
        self,
        x: Tensor | tuple[Tensor, Tensor | None],
        edge_index: Tensor,
        edge_attr: OptTensor = None,
        size: tuple[int, int] | None = None,
        return_attention_weights: bool | None = None,
    ) -> Tensor | tuple[Tensor, AttentionWeights]:
        """Attend over each node's neighbourhood; see the class docstring for shapes."""
        x_src, x_dst = source_target(x)
        res = None if self.res is None or x_dst is None else self.res(x_dst)
        if self.lin is not None:
            z_src, z_dst = self.project(self.lin, self.lin, x_src, x_dst)
        else:
            assert self.lin_src is not None and self.lin_dst is not None, "set where lin is not"
            z_src, z_dst = self.project(self.lin_src, self.lin_dst, x_src, x_dst)
        score_src, score_dst = self.node_scores(z_src, z_dst)
        size = self.graph_size(x_src, x_dst, size)
        edge_index, edge_attr = self.neighbourhoods(edge_index, edge_attr, size)
        alpha = self.edge_updater(
            edge_index,
            score=score_src,
            score_dst=score_dst,
            z=(z_src, z_dst),
            edge_attr=edge_attr,
            size=size,
        )
        out = self.sum_messages(edge_index, alpha, z_src, size)
        return self.result(self.finish(out, res), edge_index, alpha, return_attention_weights)

    def node_scores(self, z_src: Tensor, z_dst: Tensor | None) -> tuple[Tensor, Tensor | None]:
        r"""Per head, the score terms of the sources and of the targets, ``[N, H]`` each.

        They are $a_{h,\mathrm{src}}^\top z_j$ and $a_{h,\mathrm{dst}}^\top z_i$:
        products with the attention vectors rather than elementwise products summed: where the
        sources are the targets, one product with both vectors. ``message_path="gather"`` keeps
        the reference arithmetic, elementwise products summed as PyG's ``GATConv`` takes them.
        """
        if self.message_path == "gather":
            score_src = (z_src * self.att_src).sum(dim=-1)
            return score_src, None if z_dst is None else (z_dst * self.att_dst).sum(dim=-1)
        if z_dst is None:
            return head_dots(z_src, self.att_src)[..., 0], None
        if z_dst is z_src:
            # each made contiguous: gathering the rows of a strided [N, H] is several times
            # slower, and each is gathered per edge
            both = head_dots(z_src, torch.cat([self.att_src, self.att_dst]))
            return both[..., 0].contiguous(), both[..., 1].contiguous()
        return head_dots(z_src, self.att_src)[..., 0], head_dots(z_dst, self.att_dst)[..., 0]

    def edge_update(
        self,
        score_j: Tensor,
        score_dst: OptTensor,
        z: tuple[Tensor, OptTensor],
        edge_attr: OptTensor,
        edge_index_j: Tensor,
        index: Tensor,
        ptr: OptTensor,
        dim_size: int,
    ) -> Tensor:
        r"""Softmax weights ``[E, H]`` of every edge, on the path the layer's norm takes.

        Without a norm, `unnormalised_weights`. With one, its ``denominator`` decides: a
        denominator per target, as Eq. (17) gives, leads to `per_target_weights`; ``None`` (a
        denominator per edge, as in ``variant="published"``) to `per_edge_weights`.
        """
        edge = self.project_edges(edge_attr)
        if self.norm is None:
            return self.unnormalised_weights(score_j, score_dst, edge, index, ptr, dim_size)
        norm_inputs = self.norm_inputs(z, score_dst, edge, edge_index_j, index, dim_size)
        with self.norm_arithmetic():
            denominator = self.norm.denominator(**norm_inputs)
        if denominator is None:
            return self.per_edge_weights(
                score_j, score_dst, edge, norm_inputs, index, ptr, dim_size
            )
        return self.per_target_weights(score_j, score_dst, edge, denominator, index, dim_size)

    def unnormalised_weights(
        self,
        score_j: Tensor,
        score_dst: OptTensor,
        edge: OptTensor,
        index: Tensor,
        ptr: OptTensor,
        dim_size: int,
    ) -> Tensor:
        r"""Without a norm, as ``GATConv``: the softmax of $\mathrm{LeakyReLU}(e_{ij})$.

        $\alpha_{ij} = \operatorname{softmax}_{j \in \mathcal{N}(i)}
        (\mathrm{LeakyReLU}(e_{ij}))$, of the raw scores (`edge_scores`).
        """
        score = self.edge_scores(score_j, score_dst, edge, index)
        return shifted_softmax(F.leaky_relu(score, self.negative_slope), index, ptr, dim_size)

    def per_target_weights(
        self,
        score_j: Tensor,
        score_dst: OptTensor,
        edge: OptTensor,
        denominator: Tensor,
        index: Tensor,
        dim_size: int,
    ) -> Tensor:
        r"""Softmax of $\mathrm{LeakyReLU}(\alpha e_{ij} / (c_i + \epsilon))$: Eq. (17).

        ``denominator`` ``[N_t, H]`` is the norm's $c_i + \epsilon$ per target. The factor
        $\alpha / (c_i + \epsilon)$ is gathered per edge together with the target's score term
        (one gather, whose backward pass is one scatter: `target_terms`), and the LeakyReLU
        comes before the division (it is positively homogeneous, so the two commute), in place
        where its backward allows (a positive slope): autograd then keeps one score tensor for
        both. The normalised scores are bounded,
        $|\mathrm{LeakyReLU}(s_{ij})| \le \alpha \max(1, |\beta|)$, so their softmax needs no
        shift (`bounded_softmax`).
        """
        slope = self.negative_slope
        factor = self.norm.alpha / denominator
        score, factor = target_terms(score_j, score_dst, factor, index)
        score = F.leaky_relu(self.add_edge_score(score, edge), slope, inplace=slope > 0)
        bound = self.norm.alpha * max(1.0, abs(slope))
        return bounded_softmax(rescale(score, factor), index, dim_size, bound)

    def per_edge_weights(
        self,
        score_j: Tensor,
        score_dst: OptTensor,
        edge: OptTensor,
        norm_inputs: dict[str, Any],
        index: Tensor,
        ptr: OptTensor,
        dim_size: int,
    ) -> Tensor:
        r"""Softmax of $\mathrm{LeakyReLU}$ of the scores the norm normalises edge by edge.

        For a norm whose denominator differs per edge: ``variant="published"``, the authors'
        code, $e_{ij} \leftarrow \alpha e_{ij} / (4 \|a_h\|_2 \sqrt{\max_{k \in \mathcal{N}(i)}
        \|z_k\|_2^2 + \|z_j\|_2^2 + \|\varepsilon_{ij}\|_2^2} + \epsilon)$ (see
        [`GATLipschitzNorm`][lipnorm_exp.nn.gat_lipschitz_norm.GATLipschitzNorm]). The norm is
        called on the raw scores (`edge_scores`) with ``norm_inputs``.
        """
        score = self.norm(score=self.edge_scores(score_j, score_dst, edge, index), **norm_inputs)
        return shifted_softmax(F.leaky_relu(score, self.negative_slope), index, ptr, dim_size)

    def norm_inputs(
        self,
        z: tuple[Tensor, OptTensor],
        score_dst: OptTensor,
        edge: OptTensor,
        edge_index_j: Tensor,
        index: Tensor,
        dim_size: int,
    ) -> dict[str, Any]:
        r"""What the norm reads besides the scores, by the names of `GATScoreNorm`.

        The rows $[z_i \,\|\, z_j \,\|\, \varepsilon_{ij}]$ (``x``, ``edge_attr``) and the
        query of Eq. (17), the attention vectors $[a_{dst,h} \,\|\, a_{src,h} \,\|\, a_{e,h}]$
        the score reads (``att``, ``[H, K]``: no $a_{dst,h}$ without target features, no
        $a_{e,h}$ without edge features), the edges and the number of targets.
        """
        vectors: list[Tensor] = [self.att_dst] if score_dst is not None else []
        vectors += [self.att_src] if edge is None else [self.att_src, self.att_edge]
        return {
            "x": z,
            "att": torch.cat(vectors, dim=-1)[0],
            "edge_index": self.edge_pairs(edge_index_j, index),
            "edge_attr": edge,
            "num_targets": dim_size,
        }

    def edge_scores(
        self, score_j: Tensor, score_dst: OptTensor, edge: OptTensor, index: Tensor
    ) -> Tensor:
        r"""Raw scores ``[E, H]``, $e_{ij} = a_{src,h}^\top z_j + a_{dst,h}^\top z_i$ (+ edge term).

        The source's term ``score_j`` plus the target's, gathered per edge (if there are target
        features), plus the edge term (`add_edge_score`).
        """
        score = score_j if score_dst is None else score_j + score_dst.index_select(0, index)
        return self.add_edge_score(score, edge)

    def add_edge_score(self, score: Tensor, edge: OptTensor) -> Tensor:
        r"""``score`` plus the edge term $a_{e,h}^\top W_{e,h} e_{ij}$, if any."""
        return score if edge is None else score + (edge * self.att_edge).sum(dim=-1)


def head_dots(z: Tensor, vectors: Tensor) -> Tensor:
    """Dot products ``[N, H, K]`` of the rows ``z`` ``[N, H, C]`` with ``K`` vectors per head.

    ``vectors`` is ``[K, H, C]``. One matrix product, of ``z`` ``[N, H C]`` and the transpose
    of the block-diagonal ``[H K, H C]`` of the heads' vectors: taken transposed, the few
    columns of the product are dot products of contiguous rows, which BLAS computes about four
    times faster than the product by a ``[H C, H K]`` matrix stored row by row when there is one
    head of many channels (and as fast for 8 heads of 8).
    """
    num, heads, channels = z.shape
    blocks = torch.block_diag(*vectors.permute(1, 0, 2))
    return (z.reshape(num, heads * channels) @ blocks.t()).view(num, heads, vectors.size(0))


def target_terms(
    score_j: Tensor, score_dst: OptTensor, factor: Tensor, index: Tensor
) -> tuple[Tensor, Tensor]:
    """``score_j`` plus the target's score term, and the per-target ``factor``, per edge.

    With target features both target terms are gathered in one ``index_select`` of
    ``[N, 2, H]`` rows (one scatter in the backward pass, which stacks the two gradients); the
    factor is copied out of it, so that autograd keeps ``[E, H]`` of it.
    """
    if score_dst is None:
        return score_j, factor.index_select(0, index)
    gathered = torch.stack([factor, score_dst.to(factor.dtype)], dim=1).index_select(0, index)
    factor, score_dst = gathered.unbind(1)
    return score_j + score_dst.to(score_j.dtype), factor.contiguous()
