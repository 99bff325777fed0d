import math

import torch
from torch import Tensor
from torch.linalg import vector_norm

from lipnorm_exp.nn.lipschitz_norm import (
    LipschitzNormBase,
    neighbourhood_max,
    quadratic_scale,
    rescale,
    safe_sqrt,
    squared_norm,
    target_max,
)

__all__ = ["GTLipschitzNorm"]


class GTLipschitzNorm(LipschitzNormBase):
    r"""LipschitzNorm for the quadratic score of a graph transformer (paper Eq. 19).

    Per head and per target node :math:`i`, with :math:`q_i = W_q x_i`, :math:`k_j = W_k x_j`,
    :math:`v_j = W_v x_j` and

    .. math::
        u = \|q_i\|_2, \qquad
        v = \max_{j \in \mathcal{N}(i)} \|k_j\|_2, \qquad
        w = \max_{j \in \mathcal{N}(i)} \|v_j\|_2,

    Eq. (19), :math:`g(X) = Q^\top K / \max\{uv, uw, vw\}`, gives the score

    .. math::
        s_{ij} = \frac{\alpha \, q_i^\top k_j}{\max\{uv, uw, vw\} + \epsilon}

    (no :math:`1/\sqrt{d}` once normalised), followed by the softmax over
    :math:`\mathcal{N}(i)`. Corollary 2 bounds one head by
    :math:`L_F(\mathrm{Att}) \le e^{\sqrt{3}} \sqrt{m/n} + 2\sqrt{6}` (for :math:`\alpha = 1`).

    **Edge features.** As in PyG's ``TransformerConv``, projected edge features
    :math:`\varepsilon_{ij} = W_e e_{ij}` are added to the key and the value of their edge,
    :math:`k_{ij} = k_j + \varepsilon_{ij}`, :math:`v_{ij} = v_j + \varepsilon_{ij}`. The
    normalisation takes :math:`v` and :math:`w` over these per-edge keys and values
    (:math:`v = \max_j \|k_j + \varepsilon_{ij}\|_2`, :math:`w = \max_j \|v_j +
    \varepsilon_{ij}\|_2`), so the score is Eq. (19) of the attention whose inputs are the rows
    :math:`(q_i, k_{ij}, v_{ij})` and Corollary 2 holds with respect to them; the map from
    :math:`(k_j, v_j, \varepsilon_{ij})` to them has norm :math:`\sqrt{3}`, so with respect to
    the node and edge features together the bound grows by at most that factor.

    ``variant="published"`` follows the authors' public code: :math:`u` is one Frobenius norm
    per head over the queries of all edges of the graph,
    :math:`u = (\sum_{(j, i) \in \mathcal{E}} \|q_i\|_2^2)^{1/2}` (a query counts once per
    in-edge of its node), and the score keeps the scaling :math:`1/\sqrt{d}` before the
    division, :math:`s_{ij} = \alpha \, (q_i^\top k_j / \sqrt{d}) / (\max\{uv, uw, vw\} +
    \epsilon)`.

    Args:
        alpha (float, optional): scale of the normalised scores. (default: :obj:`1.0`)
        eps (float, optional): added to every denominator; all-zero features give zero scores
            and finite gradients. (default: :obj:`1e-12`)
        variant (str, optional): ``"paper"`` (Eq. 19) or ``"published"`` (public code).
            (default: :obj:`"paper"`)

    Shapes:
        - **score** :math:`(|\mathcal{E}|, H)` raw dot products :math:`q_i^\top k_{ij}`
          (unscaled)
        - **query** :math:`(|\mathcal{V}_t|, H, d)` target projections
        - **key**, **value** :math:`(|\mathcal{V}_s|, H, d)` source projections
          (:math:`\mathcal{V}_s = \mathcal{V}_t` unless the graph is bipartite)
        - **edge_index** :math:`(2, |\mathcal{E}|)` edges (source :math:`j`, target :math:`i`),
          self-loops included when :math:`i \in \mathcal{N}(i)` is wanted
        - **edge_attr** :math:`(|\mathcal{E}|, H, d)` projected edge features
          :math:`\varepsilon` *(optional)*
        - **output** :math:`(|\mathcal{E}|, H)` normalised scores
    """

    def forward(
        self,
        score: Tensor,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        edge_index: Tensor,
        edge_attr: Tensor | None = None,
    ) -> Tensor:
        """Normalise the raw dot-product scores of every edge (see class)."""
        src, dst = edge_index
        num_targets = query.size(0)
        u = safe_sqrt(squared_norm(query))
        alpha = self.alpha
        if self.variant == "published":
            # sum over the edges (j, i) of ||q_i||^2 = sum over the nodes of in-degree * ||q_i||^2
            in_degree = u.new_zeros(num_targets).index_add_(0, dst, u.new_ones(dst.size(0)))
            u = vector_norm(u * in_degree.sqrt().unsqueeze(-1), dim=0)
            alpha = alpha / math.sqrt(query.size(-1))  # the scaling 1/sqrt(d), per node
        if edge_attr is None:
            key_value_sq = torch.stack([squared_norm(key), squared_norm(value)], dim=-1)
            key_value_sq = neighbourhood_max(key_value_sq, edge_index, num_targets)
        else:  # per-edge keys and values: k_j + e_ij, v_j + e_ij
            key_value = torch.stack([key.index_select(0, src), value.index_select(0, src)])
            key_value_sq = squared_norm(key_value + edge_attr).movedim(0, -1)
            key_value_sq = target_max(key_value_sq, dst, num_targets)
        v, w = safe_sqrt(key_value_sq).unbind(dim=-1)
        return rescale(score, (alpha / (quadratic_scale(u, v, w) + self.eps)).index_select(0, dst))
