import math

import torch
from torch import Tensor

from lipnorm_exp.nn.lipschitz_norm import (
    LipschitzNormBase,
    argmax_positions,
    compact_index,
    edge_ends,
    rescale,
    safe_sqrt,
    squared_norm,
)

__all__ = ["GTLipschitzNorm"]


class GTLipschitzNorm(LipschitzNormBase):
    r"""LipschitzNorm for the quadratic score of a graph transformer (paper Eq. 19).

    Per head and per target node $i$, with $q_i = W_q x_i$, $k_j = W_k x_j$,
    $v_j = W_v x_j$ and

    $$
    u = \|q_i\|_2, \qquad
    v = \max_{j \in \mathcal{N}(i)} \|k_j\|_2, \qquad
    w = \max_{j \in \mathcal{N}(i)} \|v_j\|_2,
    $$

    Eq. (19), $g(X) = Q^\top K / \max\{uv, uw, vw\}$, gives the score

    $$
    s_{ij} = \frac{\alpha \, q_i^\top k_j}{\max\{uv, uw, vw\} + \epsilon}
    $$

    (no $1/\sqrt{d}$ once normalised), followed by the softmax over
    $\mathcal{N}(i)$. Corollary 2 bounds one head by
    $L_F(\mathrm{Att}) \le e^{\sqrt{3}} \sqrt{m/n} + 2\sqrt{6}$ (for $\alpha = 1$).

    **Edge features.** As in PyG's ``TransformerConv``, projected edge features
    $\varepsilon_{ij} = W_e e_{ij}$ are added to the key and the value of their edge,
    $k_{ij} = k_j + \varepsilon_{ij}$, $v_{ij} = v_j + \varepsilon_{ij}$. The
    normalisation takes $v$ and $w$ over these per-edge keys and values
    ($v = \max_j \|k_j + \varepsilon_{ij}\|_2$, $w = \max_j \|v_j +
    \varepsilon_{ij}\|_2$), so the score is Eq. (19) of the attention whose inputs are the rows
    $(q_i, k_{ij}, v_{ij})$ and Corollary 2 holds with respect to them; the map from
    $(k_j, v_j, \varepsilon_{ij})$ to them has norm $\sqrt{3}$, so with respect to
    the node and edge features together the bound grows by at most that factor.

    ``variant="published"`` follows the authors' public code: $u$ is one Frobenius norm
    per head over the queries of all edges of the graph,
    $u = (\sum_{(j, i) \in \mathcal{E}} \|q_i\|_2^2)^{1/2}$ (a query counts once per
    in-edge of its node), and the score keeps the scaling $1/\sqrt{d}$ before the
    division, $s_{ij} = \alpha \, (q_i^\top k_j / \sqrt{d}) / (\max\{uv, uw, vw\} +
    \epsilon)$.

    Args:
        alpha (float, optional): scale of the normalised scores. (default: `1.0`)
        eps (float, optional): added to every denominator; all-zero features give zero scores
            and finite gradients. (default: `1e-12`)
        variant (str, optional): ``"paper"`` (Eq. 19) or ``"published"`` (public code).
            (default: `"paper"`)

    Shapes:
        - **score** $(|\mathcal{E}|, H)$ raw dot products $q_i^\top k_{ij}$
          (unscaled)
        - **query** $(|\mathcal{V}_t|, H, d)$ target projections
        - **key**, **value** $(|\mathcal{V}_s|, H, d)$ source projections
          ($\mathcal{V}_s = \mathcal{V}_t$ unless the graph is bipartite)
        - **edge_index** $(2, |\mathcal{E}|)$ edges (source $j$, target $i$),
          self-loops included when $i \in \mathcal{N}(i)$ is wanted
        - **edge_attr** $(|\mathcal{E}|, H, d)$ projected edge features
          $\varepsilon$ *(optional)*
        - **output** $(|\mathcal{E}|, H)$ normalised scores
    """

    def forward(
        self,
        score: Tensor,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        edge_index: Tensor | tuple[Tensor, Tensor],
        edge_attr: Tensor | None = None,
    ) -> Tensor:
        """Normalise the raw dot-product scores of every edge (see class)."""
        src, dst = edge_ends(edge_index)
        if edge_attr is not None:  # per-edge keys and values: k_j + e_ij, v_j + e_ij
            key = key.index_select(0, src) + edge_attr
            value = value.index_select(0, src) + edge_attr
        denominator = self.denominator(query, key, value, edge_index, edge_attr is not None)
        return rescale(score, (self.alpha / denominator).index_select(0, dst))

    def denominator(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        edge_index: Tensor | tuple[Tensor, Tensor],
        per_edge: bool = False,
    ) -> Tensor:
        r"""Per target node, $\max\{uv, uw, vw\} + \epsilon$, ``[N_t, H]``.

        Times $\sqrt{d}$ for ``variant="published"`` (its scaling $1/\sqrt{d}$),
        so that $s_{ij} = \alpha \, q_i^\top k_{ij} / \text{denominator}_i$ in both
        variants; in `compute_dtype` of the query.

        Args:
            query (Tensor): ``[N_t, H, d]`` target projections.
            key (Tensor): ``[N_s, H, d]`` source projections, or with ``per_edge``
                ``[E, H, d]`` the key of every edge (edge features added).
            value (Tensor): the values, as ``key``.
            edge_index: ``[2, E]`` edges or a ``(source, target)`` pair.
            per_edge (bool): whether ``key`` and ``value`` hold one row per edge.
        """
        src, dst = edge_ends(edge_index)
        num_targets = query.size(0)
        query_sq = squared_norm(query)
        if self.variant == "published":
            # sum over the edges (j, i) of ||q_i||^2 = sum over the nodes of in-degree * ||q_i||^2
            degree = query_sq.new_zeros(num_targets)
            degree = degree.index_add_(0, dst, query_sq.new_ones(dst.numel()))
            query_sq = (degree @ query_sq).expand_as(query_sq)
        key_value_sq = torch.stack([squared_norm(key), squared_norm(value)], dim=-1)
        scale = _two_largest_product(
            query_sq, key_value_sq, None if per_edge else src, dst, num_targets
        )
        if self.variant == "published":
            return (scale + self.eps) * math.sqrt(query.size(-1))
        return scale + self.eps


def _two_largest_product(
    query_sq: Tensor, key_value_sq: Tensor, rows: Tensor | None, index: Tensor, num_targets: int
) -> Tensor:
    r"""Per target and head, $\max\{uv, uw, vw\}$ from the squared norms.

    $u^2$ is the target's squared query norm, $v^2$ and $w^2$ the largest
    squared key and value norms offered to it. The largest of the pairwise products of three
    non-negative numbers is the product of the two largest. Both are read by their positions
    in one table of all the squared norms (`argmax_positions` finds the neighbourhood
    maxima), so that autograd keeps one int32 index and the two square roots per target and
    head.

    Args:
        query_sq (Tensor): ``[N_t, H]`` squared query norms $u^2$.
        key_value_sq (Tensor): ``[R, H, 2]`` squared key and value norms of the source nodes
            or, with ``rows`` ``None``, of the edges.
        rows (Tensor or None): ``[E]`` source of every edge, or ``None``.
        index (Tensor): ``[E]`` target of every edge.
        num_targets (int): number of targets.
    """
    table = torch.cat([query_sq.reshape(-1), key_value_sq.reshape(-1), query_sq.new_zeros(1)])
    with torch.no_grad():
        own = torch.arange(query_sq.numel(), device=query_sq.device).view_as(query_sq)
        # a target without edges gets table.numel() - 1: the zero at the end
        maxima = own.numel() + argmax_positions(key_value_sq, rows, index, num_targets)
        v_sq, w_sq = table.index_select(0, maxima.view(-1)).view(maxima.shape).unbind(-1)
        key_max, value_max = maxima.unbind(-1)
        drop_u = (query_sq <= v_sq) & (query_sq <= w_sq)  # else drop the smaller of v, w
        first = torch.where(drop_u, key_max, own)
        second = torch.where(drop_u | (v_sq <= w_sq), value_max, key_max)
        pair = compact_index(torch.stack([first, second], dim=-1), table.numel())
    roots = safe_sqrt(table.index_select(0, pair.view(-1))).view(pair.shape)
    return roots[..., 0] * roots[..., 1]
