r"""The softmax over each target's in-edges, shifted by the target's largest score.

$$
\alpha_{ij} = \frac{e^{s_{ij} - m_i}}{\sum_{k \in \mathcal{N}(i)} e^{s_{ik} - m_i} + 10^{-16}},
\qquad m_i = \max_{k \in \mathcal{N}(i)} s_{ik},
$$

the softmax of GAT's Eq. (2) as ``torch_geometric.utils.softmax`` computes it, number for number.
Only the maxima are found another way: PyG's ``scatter(reduce="max")`` starts from zeros and
first overwrites every target's row with the reduction's identity (a second scatter over the
edges); here the rows start at $-\infty$, so one scatter finds them. A maximum does not depend on
the order it is taken in, and a target without in-edges, whose row differs (zero in PyG's), is
never read, so the weights are PyG's bit for bit.
"""

import torch
from torch import Tensor
from torch_geometric.utils import scatter, softmax

__all__ = ["shifted_softmax"]


def shifted_softmax(score: Tensor, index: Tensor, ptr: Tensor | None, num_nodes: int) -> Tensor:
    """``torch_geometric.utils.softmax(score, index, ptr, num_nodes)``, its maxima in one scatter.

    Args:
        score (Tensor): ``[E, *]`` scores, one row per edge.
        index (Tensor): ``[E]`` target of every edge.
        ptr (Tensor or None): CSR offsets of targets sorted edges; where given, PyG's softmax.
        num_nodes (int): number of targets.
    """
    if ptr is not None or torch.compiler.is_compiling():
        return softmax(score, index, ptr, num_nodes)
    rows = index.view([-1] + [1] * (score.dim() - 1)).expand_as(score)
    maxima = score.new_full((num_nodes, *score.shape[1:]), -torch.inf)
    maxima.scatter_reduce_(0, rows, score.detach(), reduce="amax", include_self=True)
    shifted = (score - maxima.index_select(0, index)).exp()
    total = scatter(shifted, index, 0, dim_size=num_nodes, reduce="sum") + 1e-16
    return shifted / total.index_select(0, index)
