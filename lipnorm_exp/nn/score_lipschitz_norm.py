import torch
from torch import Tensor

from lipnorm_exp.nn.lipschitz_norm import (
    LipschitzNormBase,
    max_row_sq,
    rescale,
    safe_sqrt,
    source_target,
    squared_norm,
    target_max,
)

__all__ = ["ScoreLipschitzNorm"]


class ScoreLipschitzNorm(LipschitzNormBase):
    r"""LipschitzNorm for any Lipschitz score function (paper Eq. 15), per head and target node.

    The inputs of node $i$'s attention are the rows $[x_i \,\|\, x_j]$,
    $j \in \mathcal{N}(i)$, and $\tilde g_{ij}$ is their raw score. Eq. (15),

    $$
    g(X) = \frac{\alpha \, \tilde g(X)}{\max\left\{\|\tilde g(X)\|_{(2,\infty)},
        \|X^\top\|_{(\infty,2)} \, L_{F,(2,\infty)}(\tilde g)\right\}},
    $$

    reads for one query per target node

    $$
    g_{ij} = \frac{\alpha \, \tilde g_{ij}}{\max\left\{\max_{k \in \mathcal{N}(i)}
        |\tilde g_{ik}|, \; \max_{k \in \mathcal{N}(i)} \|[x_i \,\|\, x_k]\|_2 \, L\right\}
        + \epsilon}
    $$

    where $L$ is any upper bound of the Lipschitz constant of $\tilde g$ (one per
    head, given by the caller). Theorem 3 then bounds one head by
    $L_F(\mathrm{Att}) \le e^{\alpha} \sqrt{m/n} + \alpha \sqrt{8}$. For GATv2,
    $\tilde g_{ij} = a_h^\top \mathrm{LeakyReLU}(W_h [x_i \,\|\, x_j] + b_h)$, the layer
    passes $L = \|a_h\|_2 \, \|W_h\|_F \max(1, \beta)$ (Frobenius bounds the spectral norm;
    $\beta$ is the negative slope, 0.2). The first term matters only when
    $\tilde g$ is not homogeneous (a bias), as otherwise
    $|\tilde g_{ij}| \le L \|[x_i \,\|\, x_j]\|_2$.

    **Edge features** $e_{ij}$ that enter the score (GATv2:
    $W_{r,h} x_i + W_{l,h} x_j + W_{e,h} e_{ij}$) are part of the row, which becomes
    $[x_i \,\|\, x_j \,\|\, e_{ij}]$: the maximum runs over
    $\|x_i\|^2 + \|x_j\|^2 + \|e_{ij}\|^2$ and $L$ covers $W_{e,h}$ too, so the
    theorem holds with respect to these rows. For a bipartite graph $x_i$ is the target's
    feature and $x_j$ the source's.

    Args:
        alpha (float, optional): the score bound $\alpha$. (default: `1.0`)
        eps (float, optional): added to every denominator; all-zero features give finite
            scores and gradients. (default: `1e-12`)

    Shapes:
        - **score** $(|\mathcal{E}|, H)$ raw scores $\tilde g_{ij}$
        - **x** $(|\mathcal{V}|, F)$ the node features whose pairs
          $[x_i \,\|\, x_j]$ the score reads (shared by all heads), or a pair
          $((|\mathcal{V}_s|, F_s), (|\mathcal{V}_t|, F_t))$ of source and target features
        - **lipschitz** $(H,)$ the bound $L$ per head
        - **edge_index** $(2, |\mathcal{E}|)$ edges (source $j$, target $i$),
          self-loops included
        - **edge_attr** $(|\mathcal{E}|, D)$ edge features $e_{ij}$ *(optional)*
        - **output** $(|\mathcal{E}|, H)$ normalised scores
    """

    has_variants = False

    def __init__(self, alpha: float = 1.0, eps: float = 1e-12):
        super().__init__(alpha, eps, variant=None)

    def forward(
        self,
        score: Tensor,
        x: Tensor | tuple[Tensor, Tensor],
        lipschitz: Tensor,
        edge_index: Tensor,
        edge_attr: Tensor | None = None,
    ) -> Tensor:
        """Normalise the raw scores of every edge by its target's denominator (see class)."""
        denominator = self.denominator(score, x, lipschitz, edge_index, edge_attr)
        return rescale(score, (self.alpha / denominator).index_select(0, edge_index[1]))

    def denominator(
        self,
        score: Tensor,
        x: Tensor | tuple[Tensor, Tensor],
        lipschitz: Tensor,
        edge_index: Tensor,
        edge_attr: Tensor | None = None,
    ) -> Tensor:
        r"""Per target node, the denominator of Eq. (15) plus $\epsilon$, ``[N_t, H]``.

        In `compute_dtype` of ``x``. Arguments as for ``forward``.
        """
        dst = edge_index[1]
        x_src, x_dst = source_target(x)
        num_targets = x_dst.size(0)
        src_sq = squared_norm(x_src).unsqueeze(-1)
        dst_sq = src_sq if x_dst is x_src else squared_norm(x_dst).unsqueeze(-1)
        edge_sq = None if edge_attr is None else squared_norm(edge_attr).unsqueeze(-1)
        row_norm = safe_sqrt(dst_sq + max_row_sq(src_sq, edge_index, num_targets, edge_sq))
        score_max = target_max(score.abs().to(row_norm.dtype), dst, num_targets)
        scale = torch.maximum(score_max, row_norm * lipschitz.to(row_norm.dtype))
        return scale + self.eps
