import torch
from torch import Tensor

from lipnorm_exp.nn.lipschitz_norm import (
    LipschitzNormBase,
    compute_dtype,
    quadratic_scale,
    safe_sqrt,
    squared_norm,
)

__all__ = ["DenseLipschitzNorm"]


class DenseLipschitzNorm(LipschitzNormBase):
    r"""LipschitzNorm of the quadratic (Transformer) score on dense batches (paper Eq. 19).

    Per head and query $i$, over the keys $j$ the mask leaves to it, with

    $$
    u = \|q_i\|_2, \qquad
    v = \max_{j} \|k_j\|_2, \qquad
    w = \max_{j} \|v_j\|_2,
    $$

    Eq. (19), $g(X) = Q^\top K / \max\{uv, uw, vw\}$, gives the score

    $$
    s_{ij} = \frac{\alpha \, q_i^\top k_j}{\max\{uv, uw, vw\} + \epsilon}
    $$

    (no $1/\sqrt{d}$ once normalised), $|s_{ij}| \le \alpha$, and Corollary 2 bounds
    the attention of one head by $e^{\sqrt{3}} \sqrt{m/n} + 2\sqrt{6}$ (for
    $\alpha = 1$). The score is homogeneous of degree 0: scaling the queries, keys and
    values together leaves it unchanged.

    The mask is additive, as in ``torch.nn.MultiheadAttention``: a key whose entry is
    $-\infty$ is left out of the maxima and of the softmax; finite entries are added to
    the normalised scores (a fixed shift of each score; with zeros, none).

    Args:
        alpha (float, optional): the score bound $\alpha$. (default: `1.0`)
        eps (float, optional): added to every denominator; all-zero inputs give zero scores
            and finite gradients. (default: `1e-12`)

    Shapes:
        - **query** $(*, L, d)$, **key** and **value** $(*, S, d)$
        - **mask** additive float mask broadcastable to $(*, L, S)$ *(optional)*
        - **output** $(*, L, S)$ the normalised scores plus the mask, in the dtype of
          ``query`` (computed in float32 for half precision)
    """

    has_variants = False

    def __init__(self, alpha: float = 1.0, eps: float = 1e-12):
        super().__init__(alpha, eps, variant=None)

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        """Masked scores of every query and key (see class)."""
        dtype = compute_dtype(query)
        if not key.size(-2):  # no key: no score to bound (torch's attention gives an empty row)
            score = query.to(dtype) @ key.to(dtype).transpose(-2, -1)
            return (score if mask is None else score + mask).to(query.dtype)
        denominator = self.denominator(query, key, value, mask)
        score = query.to(dtype) @ key.to(dtype).transpose(-2, -1)
        score = score * (self.alpha / denominator)
        if mask is not None:
            score = score + mask
        return score.to(query.dtype)

    def denominator(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        r"""Per query, $\max\{uv, uw, vw\} + \epsilon$, ``[*, L, 1]`` (at least one key).

        In `compute_dtype` of the query. Arguments as for ``forward``.
        """
        u = safe_sqrt(squared_norm(query)).unsqueeze(-1)
        key_norm = safe_sqrt(squared_norm(key)).unsqueeze(-2)
        value_norm = safe_sqrt(squared_norm(value)).unsqueeze(-2)
        if mask is not None:  # the keys each query may attend to
            allowed = mask != float("-inf")
            key_norm = torch.where(allowed, key_norm, 0.0)
            value_norm = torch.where(allowed, value_norm, 0.0)
        v = key_norm.amax(dim=-1, keepdim=True)
        w = value_norm.amax(dim=-1, keepdim=True)
        return quadratic_scale(u, v, w) + self.eps
