import math

import torch
from torch import Tensor
from torch_geometric.nn.dense.linear import Linear
from torch_geometric.typing import OptTensor, PairTensor
from torch_geometric.utils import softmax

from lipnorm_exp.nn.attention import AttentionLayer, AttentionWeights
from lipnorm_exp.nn.bounded_softmax import bounded_softmax
from lipnorm_exp.nn.copy_dropout import dropout
from lipnorm_exp.nn.csr_messages import edge_dots, weighted_sum
from lipnorm_exp.nn.lipschitz_norm import fused_squared_norms, rescale
from lipnorm_exp.nn.score_norm import GTScoreNorm, ScoreNorm

__all__ = ["GTLayer"]


class GTLayer(AttentionLayer):
    r"""Graph transformer layer (UniMP, Shi et al.) with an optional LipschitzNorm (GT-Lip).

    Per head, with $q_i = W_q x_i$, $k_j = W_k x_j$, $v_j = W_v x_j$,

    $$
    \alpha_{ij} = \operatorname{softmax}_{j \in \mathcal{N}(i)}
        \left(\frac{q_i^\top k_j}{\sqrt{d}}\right), \qquad
    x_i' = W_s x_i + \Vert_{h} \sum_{j \in \mathcal{N}(i)} \alpha_{ij} v_j.
    $$

    With ``norm="lip"`` the score is the paper's Eq. (19),
    $q_i^\top k_j / (\max\{uv, uw, vw\} + \epsilon)$ with $u = \|q_i\|_2$,
    $v = \max_{j \in \mathcal{N}(i)} \|k_j\|_2$, $w = \max_{j \in \mathcal{N}(i)}
    \|v_j\|_2$ (no $1/\sqrt{d}$); see
    [`GTLipschitzNorm`][lipnorm_exp.nn.gt_lipschitz_norm.GTLipschitzNorm]. With ``beta=True`` the
    skip is gated, $x_i' = \beta_i W_s x_i + (1 - \beta_i) m_i$, $\beta_i = \sigma(w^\top [m_i, W_s
    x_i, m_i - W_s x_i])$.

    A drop-in for PyG's ``TransformerConv``: the same arguments, inputs and parameters
    (``lin_query``, ``lin_key``, ``lin_value``, ``lin_edge``, ``lin_skip``, ``lin_beta``), so a
    ``TransformerConv`` state dict loads and ours loads into it (with ``root_weight=False`` both
    keep ``lin_skip``, unused), and with ``norm=None`` both compute the same function.
    Like ``TransformerConv`` it adds no self-loops unless ``add_self_loops=True`` (the paper's
    neighbourhoods contain $i$). Edge features $\varepsilon_{ij} = W_e e_{ij}$ are
    added to the key and the value of their edge; with ``norm="lip"`` Eq. (19) takes its
    maxima over these per-edge keys and values (see
    [`GTLipschitzNorm`][lipnorm_exp.nn.gt_lipschitz_norm.GTLipschitzNorm]).

    Like ``TransformerConv`` it scripts (``torch.jit.script``), with or without LipschitzNorm,
    and the scripted module gives the layer's outputs (on the gather message path, the
    reference arithmetic: equal to the CSR path's up to float rounding), runs without Python
    and can be saved (``torch.jit.save``). It returns a union of ``out`` and
    ``(out, (edge_index, alpha))``, which a scripted model refines
    (``assert isinstance(out, Tensor)``). A scripted layer
    checks ``edge_index`` and replaces its self-loops at every call, where in Python the layers
    of a stack called on one ``edge_index`` tensor share both.

    Args:
        in_channels (int or tuple): size of each input node feature, or ``(source, target)``
            sizes for a bipartite graph (keys and values read sources, queries and the skip
            targets).
        out_channels (int): size of each head's output $d$.
        heads (int, optional): number of heads $H$. (default: `1`)
        concat (bool, optional): concatenate the heads; if `False`, average them.
            (default: `True`)
        beta (bool, optional): gate the skip connection (needs ``root_weight``).
            (default: `False`)
        dropout (float, optional): dropout probability of the attention weights.
            (default: `0.0`)
        edge_dim (int, optional): size of the edge features, if any. (default: `None`)
        bias (bool, optional): biases in the query, key, value and skip projections.
            (default: `True`)
        root_weight (bool, optional): add the skip $W_s x_i$. (default: `True`)
        norm (str, GTScoreNorm or None, optional): ``None`` or ``"none"``, ``"lip"``
            ([`GTLipschitzNorm`][lipnorm_exp.nn.gt_lipschitz_norm.GTLipschitzNorm] with defaults),
            or any object that keeps [`GTScoreNorm`][lipnorm_exp.nn.score_norm.GTScoreNorm].
            (default: `None`)
        add_self_loops (bool, optional): replace the input's self-loops by one per node, so
            $i \in \mathcal{N}(i)$. (default: `False`, as ``TransformerConv``)
        fill_value (float, Tensor or str, optional): edge features of the added self-loops
            (``"mean"``: the mean over the node's in-edges). (default: `"mean"`)
        **kwargs (optional): ``MessagePassing``'s options, as for PyG's ``TransformerConv``
            (``aggr``, ``flow``).

    Shapes:
        - **x** $(|\mathcal{V}|, F_{in})$ or a pair
          $((|\mathcal{V}_s|, F_s), (|\mathcal{V}_t|, F_t))$
        - **edge_index** $(2, |\mathcal{E}|)$ or a ``torch.sparse`` adjacency
          $(|\mathcal{V}_t|, |\mathcal{V}_s|)$
        - **edge_attr** $(|\mathcal{E}|, D)$ *(optional)*
        - **output** $(|\mathcal{V}_t|, H d)$ if ``concat`` else
          $(|\mathcal{V}_t|, d)$; with ``return_attention_weights=True`` also
          ``(edge_index, alpha)``: the edges used and the softmax weights
          $(|\mathcal{E}'|, H)$, before dropout.
    """

    score_contract = GTScoreNorm

    def __init__(
        self,
        in_channels: int | tuple[int, int],
        out_channels: int,
        heads: int = 1,
        concat: bool = True,
        beta: bool = False,
        dropout: float = 0.0,
        edge_dim: int | None = None,
        bias: bool = True,
        root_weight: bool = True,
        *,
        norm: str | ScoreNorm | None = None,
        add_self_loops: bool = False,
        fill_value: float | Tensor | str = "mean",
        **kwargs,
    ):
        super().__init__(
            in_channels,
            out_channels,
            heads=heads,
            concat=concat,
            dropout=dropout,
            edge_dim=edge_dim,
            norm=norm,
            add_self_loops=add_self_loops,
            fill_value=fill_value,
            **kwargs,
        )
        self.beta = beta and root_weight
        self.root_weight = root_weight
        width = heads * out_channels
        in_src, in_dst = self.in_pair
        self.lin_key = Linear(in_src, width, bias=bias)
        self.lin_query = Linear(in_dst, width, bias=bias)
        self.lin_value = Linear(in_src, width, bias=bias)
        self.lin_edge = None if edge_dim is None else Linear(edge_dim, width, bias=False)
        self.lin_skip = Linear(in_dst, self.out_width, bias=bias)  # unused without root_weight
        self.lin_beta = Linear(3 * self.out_width, 1, bias=False) if self.beta else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw every projection (PyG ``Linear`` defaults, in ``TransformerConv``'s order)."""
        super().reset_parameters()
        lins = (self.lin_key, self.lin_query, self.lin_value, self.lin_edge, self.lin_skip)
        for lin in (*lins, self.lin_beta):
            if lin is not None:
                lin.reset_parameters()

    def forward(
        self,
        x: Tensor | tuple[Tensor, Tensor],
        edge_index: Tensor,
        edge_attr: OptTensor = None,
        return_attention_weights: bool | None = None,
    ) -> Tensor | tuple[Tensor, AttentionWeights]:
        """Attend over each node's neighbourhood; see the class docstring for shapes."""
        x_src, x_dst = (x, x) if isinstance(x, Tensor) else x
        shape = (-1, self.heads, self.out_channels)
        query = self.lin_query(x_dst).view(shape)
        key = self.lin_key(x_src).view(shape)
        value = self.lin_value(x_src).view(shape)
        size = self.graph_size(x_src, x_dst)
        edge_index, edge_attr = self.neighbourhoods(edge_index, edge_attr, size)
        edge = self.project_edges(edge_attr)
        attended: tuple[Tensor, Tensor] | None = None
        if edge is None and not torch.jit.is_scripting():
            attended = self.csr_attend(edge_index, query, key, value, size)
        if attended is not None:
            out, alpha = attended
        else:
            # with edge features every edge's value differs from its source's
            others, loops = (
                (edge_index, 0) if edge is not None else self.appended_loops(edge_index, size)
            )
            # edge_updater_type: (query: Tensor, key: Tensor, value: Tensor,
            #                     edge: Tensor | None, every_edge: Tensor | None)
            alpha, values = self.edge_updater(
                others,
                query=query,
                key=key,
                value=value,
                edge=edge,
                every_edge=edge_index if loops else None,
                size=size,
            )
            out = self.attend(
                others, alpha, values, size, per_edge=True, loops=value if loops else None
            )
        if self.root_weight:
            skip = self.lin_skip(x_dst)
            if self.lin_beta is not None:
                gate = self.lin_beta(torch.cat([out, skip, out - skip], dim=-1)).sigmoid()
                out = gate * skip + (1 - gate) * out
            else:
                out = out + skip
        return self.result(out, edge_index, alpha, return_attention_weights)

    @torch.jit.unused
    def csr_attend(
        self,
        edge_index: Tensor,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        size: tuple[int, int],
    ) -> tuple[Tensor, Tensor] | None:
        r"""The heads merged and the softmax weights ``[E, H]``, on the CSR message path.

        ``None`` where that path does not apply (`message_structure`). The scores
        $q_i^\top k_j$ are a sampled product (`edge_dots`) and the weighted values
        a sparse-dense one (`weighted_sum`), along every edge of ``edge_index`` (the
        self-loops too): no key or value is gathered per edge. With LipschitzNorm the maxima of
        Eq. (19) are taken over the nodes' keys and values, and each target's query is scaled
        by $\alpha / \text{denominator}_i$, as in `edge_update`.
        """
        structure = self.message_structure(edge_index, value, size)
        if structure is None:
            return None
        targets = edge_index[1]
        if self.norm is None:
            score = edge_dots(query, key, structure) / math.sqrt(self.out_channels)
            alpha = softmax(score, targets, num_nodes=query.size(0))
        else:
            with fused_squared_norms():
                denominator = self.norm.denominator(
                    query=query, key=key, value=value, edge_index=edge_index, per_edge=False
                )
            factor = (self.norm.alpha / denominator).unsqueeze(-1)
            score = edge_dots(rescale(query, factor), key, structure)
            alpha = bounded_softmax(score, targets, query.size(0), self.norm.alpha)
        dropped = dropout(alpha, self.dropout, self.training)
        return self.merge_heads(weighted_sum(dropped, value, structure)), alpha

    def edge_update(
        self,
        query: Tensor,
        key: Tensor,
        key_j: Tensor,
        value: Tensor,
        value_j: Tensor,
        edge: OptTensor,
        every_edge: OptTensor,
        edge_index_j: Tensor,
        index: Tensor,
        ptr: OptTensor,
    ) -> PairTensor:  # typing's Tuple, which PyG copies into the edge_updater it writes
        r"""Softmax weights of every edge, and the values ``[E, H, C]`` of the gathered ones.

        The edges are those given and, when ``every_edge`` is given (the graph with the
        self-loops the layer appended, last), the self-loops after them, whose scores are
        taken per node: $q_i^\top k_i$ needs no gather. Edge features $\varepsilon_{ij}$
        are added to the gathered keys and values, $k_{ij} = k_j + \varepsilon_{ij}$,
        $v_{ij} = v_j + \varepsilon_{ij}$. The weights are `unnormalised_weights` without a
        norm, else `normalised_weights` (Eq. 19). The targets are the rows of ``query``.
        """
        if edge is not None:
            key_j = key_j + edge
            value_j = value_j + edge
        if self.norm is None:
            return self.unnormalised_weights(query, key, key_j, every_edge, index, ptr), value_j
        weights = self.normalised_weights(
            query, key, value, key_j, value_j, every_edge, edge_index_j, index
        )
        return weights, value_j

    def unnormalised_weights(
        self,
        query: Tensor,
        key: Tensor,
        key_j: Tensor,
        every_edge: OptTensor,
        index: Tensor,
        ptr: OptTensor,
    ) -> Tensor:
        r"""Without a norm, as ``TransformerConv``: the softmax of $q_i^\top k_{ij} / \sqrt{d}$.

        Arguments as for `edge_update` (``key_j`` with the edge features added).
        """
        loops = every_edge is not None
        score = self.scores(query, key, key_j, index, loops) / math.sqrt(self.out_channels)
        targets = index if every_edge is None else every_edge[1]
        return softmax(score, targets, None if loops else ptr, query.size(0))

    def normalised_weights(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_j: Tensor,
        value_j: Tensor,
        every_edge: OptTensor,
        edge_index_j: Tensor,
        index: Tensor,
    ) -> Tensor:
        r"""The softmax of the scores of Eq. (19), $\alpha q_i^\top k_{ij} / \text{denominator}_i$.

        The per-target factor $\alpha / \text{denominator}_i$ scales the query of each target
        before the dot products (and the self-loops' dot products), so that autograd keeps no
        score or factor per edge, and the normalised scores, bounded by $\alpha$, need no
        shift in their softmax (`bounded_softmax`). With ``every_edge`` the key and value norms
        are those of the nodes (autograd keeps the nodes' keys and values for the self-loops'
        scores anyway), else those of the gathered per-edge keys and values. Arguments as for
        `edge_update`, the nodes' keys and values first (``key_j`` and ``value_j`` with the
        edge features added).
        """
        loops = every_edge is not None
        if every_edge is not None:  # the maxima of Eq. (19) over the nodes' keys and values
            targets = every_edge[1]
            denominator = self.norm.denominator(
                query=query, key=key, value=value, edge_index=every_edge, per_edge=False
            )
        else:  # over the edges' keys and values
            targets = index
            edge_index = self.edge_pairs(edge_index_j, index)
            denominator = self.norm.denominator(
                query=query, key=key_j, value=value_j, edge_index=edge_index, per_edge=True
            )
        score = self.scores(query, key, key_j, index, loops, self.norm.alpha / denominator)
        return bounded_softmax(score, targets, query.size(0), self.norm.alpha)

    @staticmethod
    def scores(
        query: Tensor,
        key: Tensor,
        key_j: Tensor,
        index: Tensor,
        loops: bool,
        factor: OptTensor = None,
    ) -> Tensor:
        r"""Dot products $q_i^\top k_{ij}$: of the gathered edges, then of the self-loops.

        With ``loops`` one self-loop per node follows the gathered edges. Each target's query
        is scaled by ``factor`` ``[N, H]``, if given.
        """
        scaled = query if factor is None else rescale(query, factor.unsqueeze(-1))
        score = (scaled.index_select(0, index) * key_j).sum(dim=-1)
        if not loops:
            return score
        own = (query * key).sum(dim=-1)
        return torch.cat([score, own if factor is None else rescale(own, factor)])
