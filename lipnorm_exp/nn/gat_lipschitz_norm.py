from torch import Tensor

from lipnorm_exp.nn.lipschitz_norm import (
    LipschitzNormBase,
    neighbourhood_max,
    safe_sqrt,
    squared_norm,
)

__all__ = ["GATLipschitzNorm"]


class GATLipschitzNorm(LipschitzNormBase):
    r"""LipschitzNorm for the linear score of GAT (paper Eq. 17), per head and per target node.

    With :math:`z_j = W_h x_j` and the raw score :math:`e_{ij} = a_h^\top [z_i \,\|\, z_j]`, the
    inputs of node :math:`i`'s attention are the rows :math:`[z_i \,\|\, z_j]`,
    :math:`j \in \mathcal{N}(i)`, and the query is :math:`a_h`, so Eq. (17),
    :math:`g(X) = Q^\top X / (\|Q\|_F \|X^\top\|_{(\infty,2)})`, reads

    .. math::
        c_i = \|a_h\|_2 \max_{j \in \mathcal{N}(i)} \|[z_i \,\|\, z_j]\|_2
            = \|a_h\|_2 \sqrt{\|z_i\|_2^2 + \max_{j \in \mathcal{N}(i)} \|z_j\|_2^2},
        \qquad
        e_{ij} \leftarrow \frac{\alpha \, e_{ij}}{c_i + \epsilon}

    applied before LeakyReLU and the softmax over :math:`\mathcal{N}(i)`. Corollary 1 then
    bounds one head by :math:`L_F(\mathrm{Att}) \le e \sqrt{1/n_i} + \sqrt{8}`,
    :math:`n_i = |\mathcal{N}(i)|` (for :math:`\alpha = 1`).

    ``variant="published"`` follows the authors' public code instead, whose denominator
    differs per edge:

    .. math::
        e_{ij} \leftarrow \frac{\alpha \, e_{ij}}
            {4 \, \|a_h\|_2 \sqrt{\max_{k \in \mathcal{N}(i)} \|z_k\|_2^2 + \|z_j\|_2^2}
            + \epsilon}

    There the maximum over :math:`k` runs over the target's neighbourhood
    :math:`\mathcal{N}(i)` (the code scatters over the target index; it is not a maximum over
    all nodes of the graph). Both the maximum and :math:`\|a_h\|` are taken per head here: for
    several heads the public code reshapes the node maxima in a way that mixes nodes and heads,
    and its ``lipschitznorm`` model option uses one norm of :math:`a` over all heads; with one
    head all of these coincide.

    Args:
        alpha (float, optional): the score bound :math:`\alpha` of Theorem 3.
            (default: :obj:`1.0`)
        eps (float, optional): added to every denominator; all-zero features give zero scores
            and finite gradients. (default: :obj:`1e-12`)
        variant (str, optional): ``"paper"`` (Eq. 17) or ``"published"`` (public code).
            (default: :obj:`"paper"`)

    Shapes:
        - **score** :math:`(|\mathcal{E}|, H)` raw scores :math:`e_{ij}`, one row per edge
        - **x** :math:`(|\mathcal{V}|, H, C)` projected node features :math:`z`
        - **att** :math:`(H, 2C)` the attention vectors :math:`a_h`
        - **edge_index** :math:`(2, |\mathcal{E}|)` edges (source :math:`j`, target :math:`i`),
          self-loops included
        - **output** :math:`(|\mathcal{E}|, H)` normalised scores
    """

    def forward(self, score: Tensor, x: Tensor, att: Tensor, edge_index: Tensor) -> Tensor:
        """Normalise the raw scores of every edge by its target's :math:`c_i` (see class)."""
        src, dst = edge_index
        x_sq = squared_norm(x)
        att_sq = squared_norm(att)
        max_sq = neighbourhood_max(x_sq, edge_index, x.size(0))
        if self.variant == "paper":  # one denominator per target node, gathered once
            factor = self.alpha / (safe_sqrt(att_sq * (x_sq + max_sq)) + self.eps)
            return score * factor.index_select(0, dst)
        rows_sq = max_sq.index_select(0, dst) + x_sq.index_select(0, src)
        return self.alpha * score / (4.0 * safe_sqrt(att_sq * rows_sq) + self.eps)
