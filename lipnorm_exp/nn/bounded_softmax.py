r"""The softmax over each target's in-edges of scores that LipschitzNorm has bounded.

The usual sparse softmax (PyG's) first subtracts each target's largest score, a scatter over
the edges, so that $\exp$ cannot overflow. Normalised scores need no shift: every
LipschitzNorm bounds them, $|s_{ij}| \le b$ ($b = \alpha$, or
$\alpha \max(1, |\beta|)$ after GAT's LeakyReLU), so $e^{s_{ij}}$ stays within
$[e^{-b}, e^{b}]$ and the softmax, invariant to the shift, is computed without it:

$$
\alpha_{ij} = \exp\Bigl(s_{ij} - \log \sum_{k \in \mathcal{N}(i)} e^{s_{ik}}\Bigr).
$$

The last $\exp$ is the weight itself, which the aggregation keeps for the backward pass
anyway, so autograd keeps one score-sized tensor fewer than for PyG's quotient.
"""

from torch import Tensor
from torch_geometric.utils import softmax

from lipnorm_exp.nn.lipschitz_norm import compute_dtype, with_rows

__all__ = ["bounded_softmax", "shift_free"]


def shift_free(bound: float) -> bool:
    r"""Whether scores within $\pm$ ``bound`` are exponentiated without a shift.

    Up to a bound of 20: $e^{\pm 20}$ is far from float32's limits. (A function rather
    than a module constant, which TorchScript cannot read.)
    """
    return bound <= 20.0


def bounded_softmax(score: Tensor, index: Tensor, num_nodes: int, bound: float) -> Tensor:
    r"""Softmax of ``score`` ``[E, *]`` over each target's edges, for $|s| \le$ ``bound``.

    Equal to ``torch_geometric.utils.softmax(score, index, num_nodes=num_nodes)`` up to float
    rounding (a relative error of a few units of $\log \sum_k e^{s_{ik}}$'s last place);
    for ``bound`` above 20 (`shift_free`) it is that function. Half-precision scores are
    exponentiated in float32; the weights come back in ``score``'s dtype.

    Args:
        score (Tensor): normalised scores, one row per edge.
        index (Tensor): ``[E]`` target of every edge.
        num_nodes (int): number of targets.
        bound (float): a bound of $|s|$ the caller guarantees.
    """
    if not shift_free(bound):
        return softmax(score, index, num_nodes=num_nodes)
    s = score.to(compute_dtype(score))
    total = s.new_zeros(with_rows(s, num_nodes)).index_add(0, index, s.exp())
    return (s - total.log().index_select(0, index)).exp().to(score.dtype)
