from torch import Tensor

from lipnorm_exp.nn.lipschitz_norm import (
    LipschitzNormBase,
    max_row_sq,
    neighbourhood_max,
    rescale,
    safe_sqrt,
    source_target,
    squared_norm,
)

__all__ = ["GATLipschitzNorm"]


class GATLipschitzNorm(LipschitzNormBase):
    r"""LipschitzNorm for the linear score of GAT (paper Eq. 17), per head and per target node.

    With $z_j = W_h x_j$ and the raw score $e_{ij} = a_h^\top [z_i \,\|\, z_j]$, the
    inputs of node $i$'s attention are the rows $[z_i \,\|\, z_j]$,
    $j \in \mathcal{N}(i)$, and the query is $a_h$, so Eq. (17),
    $g(X) = Q^\top X / (\|Q\|_F \|X^\top\|_{(\infty,2)})$, reads

    $$
    c_i = \|a_h\|_2 \max_{j \in \mathcal{N}(i)} \|[z_i \,\|\, z_j]\|_2
        = \|a_h\|_2 \sqrt{\|z_i\|_2^2 + \max_{j \in \mathcal{N}(i)} \|z_j\|_2^2},
    \qquad
    e_{ij} \leftarrow \frac{\alpha \, e_{ij}}{c_i + \epsilon}
    $$

    applied before LeakyReLU and the softmax over $\mathcal{N}(i)$. Corollary 1 then
    bounds one head by $L_F(\mathrm{Att}) \le e \sqrt{1/n_i} + \sqrt{8}$,
    $n_i = |\mathcal{N}(i)|$ (for $\alpha = 1$).

    **Selectivity.** The normalised scores lie in $[-\alpha, \alpha]$ (Cauchy–Schwarz), so
    after LeakyReLU with slope $\beta \in [0, 1]$ two neighbours' attention weights differ
    by a factor of at most $e^{(1 + \beta)\alpha}$ ($e^{1.2} \approx 3.3$ at
    $\alpha = 1$). A node of a binary tree with its self-loop then gives one child at most
    $e^{1.2} / (e^{1.2} + 2) \approx 0.62$ of its attention: routing one leaf through
    $d$ levels (TREES, paper §7.2) keeps at most $0.62^d$ of it in the attention
    path, where a larger $\alpha$ allows a near-hard choice (0.98 at $\alpha = 4$).

    **Edge features.** With projected edge features $\varepsilon_{ij} = W_{e,h} e_{ij}$
    the score gains the term $a_{e,h}^\top \varepsilon_{ij}$ (as in PyG's ``GATConv``):
    the rows become $[z_i \,\|\, z_j \,\|\, \varepsilon_{ij}]$ and the query
    $[a_{dst,h} \,\|\, a_{src,h} \,\|\, a_{e,h}]$, so the same Eq. (17) gives

    $$
    c_i = \|[a_{dst,h} \,\|\, a_{src,h} \,\|\, a_{e,h}]\|_2
        \sqrt{\|z_i\|_2^2 + \max_{j \in \mathcal{N}(i)}
        \left(\|z_j\|_2^2 + \|\varepsilon_{ij}\|_2^2\right)}
    $$

    (the edge term is not normalised apart: it shares the denominator of its row), and
    Corollary 1 holds with respect to these rows. For a bipartite graph $z_i$ is the
    target's projection and $z_j$ the source's; without target features (PyG's
    ``(x_src, None)``) the score has no $a_{dst}$ term and $\|z_i\|$ drops out.

    ``variant="published"`` follows the authors' public code instead, whose denominator
    differs per edge:

    $$
    e_{ij} \leftarrow \frac{\alpha \, e_{ij}}
        {4 \, \|a_h\|_2 \sqrt{\max_{k \in \mathcal{N}(i)} \|z_k\|_2^2 + \|z_j\|_2^2
        + \|\varepsilon_{ij}\|_2^2} + \epsilon}
    $$

    (that code has no edge features: $\|\varepsilon_{ij}\|^2$ is added to its row here,
    which keeps the scores within $\alpha / 4$ when $i \in \mathcal{N}(i)$). There
    the maximum over $k$ runs over the target's neighbourhood $\mathcal{N}(i)$ (the
    code scatters over the target index; it is not a maximum over all nodes of the graph). Both
    the maximum and $\|a_h\|$ are taken per head here: for several heads the public code
    reshapes the node maxima in a way that mixes nodes and heads, and its ``lipschitznorm``
    model option uses one norm of $a$ over all heads; with one head all of these coincide.

    Args:
        alpha (float, optional): the score bound $\alpha$ of Theorem 3.
            (default: `1.0`)
        eps (float, optional): added to every denominator; all-zero features give zero scores
            and finite gradients. (default: `1e-12`)
        variant (str, optional): ``"paper"`` (Eq. 17) or ``"published"`` (public code).
            (default: `"paper"`)

    Shapes:
        - **score** $(|\mathcal{E}|, H)$ raw scores $e_{ij}$, one row per edge
        - **x** $(|\mathcal{V}|, H, C)$ projected node features $z$, or a pair
          $((|\mathcal{V}_s|, H, C), (|\mathcal{V}_t|, H, C))$ of source and target
          projections (the target one may be ``None``)
        - **att** $(H, K)$ the attention vectors the score reads, concatenated
          ($K = 2C$, $3C$ with edge features, $C$ less without targets)
        - **edge_index** $(2, |\mathcal{E}|)$ edges (source $j$, target $i$),
          self-loops included
        - **edge_attr** $(|\mathcal{E}|, H, C)$ projected edge features
          $\varepsilon$ *(optional)*
        - **num_targets** the number of targets, needed only without target features
        - **output** $(|\mathcal{E}|, H)$ normalised scores
    """

    def forward(
        self,
        score: Tensor,
        x: Tensor | tuple[Tensor, Tensor | None],
        att: Tensor,
        edge_index: Tensor | tuple[Tensor, Tensor],
        edge_attr: Tensor | None = None,
        num_targets: int | None = None,
    ) -> Tensor:
        """Normalise the raw scores of every edge by its target's $c_i$ (see class)."""
        denominator = self.denominator(x, att, edge_index, edge_attr, num_targets)
        if denominator is not None:
            return rescale(score, (self.alpha / denominator).index_select(0, edge_index[1]))
        src, dst = edge_index
        x_src = source_target(x)[0]
        src_sq = squared_norm(x_src)
        rows_sq = neighbourhood_max(src_sq, edge_index, _target_count(x, num_targets))
        rows_sq = rows_sq.index_select(0, dst) + src_sq.index_select(0, src)
        if edge_attr is not None:
            rows_sq = rows_sq + squared_norm(edge_attr)
        denominator = 4.0 * safe_sqrt(squared_norm(att) * rows_sq) + self.eps
        return (self.alpha * score.to(denominator.dtype) / denominator).to(score.dtype)

    def denominator(
        self,
        x: Tensor | tuple[Tensor, Tensor | None],
        att: Tensor,
        edge_index: Tensor | tuple[Tensor, Tensor],
        edge_attr: Tensor | None = None,
        num_targets: int | None = None,
    ) -> Tensor | None:
        r"""Per target node, $c_i + \epsilon$ of Eq. (17), ``[num_targets, H]``.

        In `compute_dtype` of ``x``. ``None`` for ``variant="published"``, whose
        denominator differs per edge. Arguments as for ``forward``.
        """
        if self.variant != "paper":
            return None
        x_src, x_dst = source_target(x)
        src_sq = squared_norm(x_src)
        edge_sq = None if edge_attr is None else squared_norm(edge_attr)
        rows_sq = max_row_sq(src_sq, edge_index, _target_count(x, num_targets), edge_sq)
        if x_dst is not None:
            rows_sq = rows_sq + (src_sq if x_dst is x_src else squared_norm(x_dst))
        return safe_sqrt(rows_sq) * safe_sqrt(squared_norm(att)) + self.eps


def _target_count(x: Tensor | tuple[Tensor, Tensor | None], num_targets: int | None) -> int:
    """Rows of the target features, or ``num_targets`` when there are none."""
    x_dst = source_target(x)[1]
    if x_dst is not None:
        return x_dst.size(0)
    assert num_targets is not None, "a layer without target features gives their count"
    return num_targets
