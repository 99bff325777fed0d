import torch
from torch import Tensor

from lipnorm_exp.nn.lipschitz_norm import (
    LipschitzNormBase,
    neighbourhood_max,
    safe_sqrt,
    squared_norm,
    target_max,
)

__all__ = ["ScoreLipschitzNorm"]


class ScoreLipschitzNorm(LipschitzNormBase):
    r"""LipschitzNorm for any Lipschitz score function (paper Eq. 15), per head and target node.

    The inputs of node :math:`i`'s attention are the rows :math:`[x_i \,\|\, x_j]`,
    :math:`j \in \mathcal{N}(i)`, and :math:`\tilde g_{ij}` is their raw score. Eq. (15),

    .. math::
        g(X) = \frac{\alpha \, \tilde g(X)}{\max\left\{\|\tilde g(X)\|_{(2,\infty)},
            \|X^\top\|_{(\infty,2)} \, L_{F,(2,\infty)}(\tilde g)\right\}},

    reads for one query per target node

    .. math::
        g_{ij} = \frac{\alpha \, \tilde g_{ij}}{\max\left\{\max_{k \in \mathcal{N}(i)}
            |\tilde g_{ik}|, \; \max_{k \in \mathcal{N}(i)} \|[x_i \,\|\, x_k]\|_2 \, L\right\}
            + \epsilon}

    where :math:`L` is any upper bound of the Lipschitz constant of :math:`\tilde g` (one per
    head, given by the caller). Theorem 3 then bounds one head by
    :math:`L_F(\mathrm{Att}) \le e^{\alpha} \sqrt{m/n} + \alpha \sqrt{8}`. For GATv2,
    :math:`\tilde g_{ij} = a_h^\top \mathrm{LeakyReLU}(W_h [x_i \,\|\, x_j] + b_h)`, the layer
    passes :math:`L = \|a_h\|_2 \, \|W_h\|_F \max(1, \beta)` (Frobenius bounds the spectral norm;
    :math:`\beta` is the negative slope, 0.2). The first term matters only when
    :math:`\tilde g` is not homogeneous (a bias), as otherwise
    :math:`|\tilde g_{ij}| \le L \|[x_i \,\|\, x_j]\|_2`.

    Args:
        alpha (float, optional): the score bound :math:`\alpha`. (default: :obj:`1.0`)
        eps (float, optional): added to every denominator; all-zero features give finite
            scores and gradients. (default: :obj:`1e-12`)

    Shapes:
        - **score** :math:`(|\mathcal{E}|, H)` raw scores :math:`\tilde g_{ij}`
        - **x** :math:`(|\mathcal{V}|, F)` the node features whose pairs
          :math:`[x_i \,\|\, x_j]` the score reads (shared by all heads)
        - **lipschitz** :math:`(H,)` the bound :math:`L` per head
        - **edge_index** :math:`(2, |\mathcal{E}|)` edges (source :math:`j`, target :math:`i`),
          self-loops included
        - **output** :math:`(|\mathcal{E}|, H)` normalised scores
    """

    def __init__(self, alpha: float = 1.0, eps: float = 1e-12):
        super().__init__(alpha, eps, variant=None)

    def forward(self, score: Tensor, x: Tensor, lipschitz: Tensor, edge_index: Tensor) -> Tensor:
        """Normalise the raw scores of every edge by its target's denominator (see class)."""
        dst = edge_index[1]
        num_nodes = x.size(0)
        x_sq = squared_norm(x).unsqueeze(-1)
        row_norm = safe_sqrt(x_sq + neighbourhood_max(x_sq, edge_index, num_nodes))
        score_max = target_max(score.abs(), dst, num_nodes)
        scale = torch.maximum(score_max, row_norm * lipschitz)
        return score * (self.alpha / (scale + self.eps)).index_select(0, dst)
