r"""Attention-weighted sums of neighbour values as sparse-dense products (the CSR message path).

An attention layer's output per head $h$ is $x_i' = \sum_{j \in N(i)} \alpha_{ij}
z_j$: the product $A_h Z_h$ of the weights $A_h = (\alpha_{ij})$ (targets x sources)
and the values $Z_h$. The gather/scatter path of ``MessagePassing`` materialises a message
per edge and channel, ``[E, H, C]``, in the forward pass and again in the backward pass;
`WeightedSum` multiplies by a CSR matrix instead, and its backward pass is

$$
\frac{\partial L}{\partial Z_h} = A_h^\top G_h, \qquad
\frac{\partial L}{\partial \alpha_{ij}} = G_{h,i}^\top z_{h,j}
\quad \text{(the dense product } G_h Z_h^\top \text{ sampled at the edges)},
$$

with $G_h$ the gradient of the output: a transposed sparse-dense product and a sampled
dense-dense product (``torch.sparse.sampled_addmm``), neither of them per edge and channel.

A graph transformer's scores $q_i^\top k_j$ are the same kind of product, the dense
$Q_h K_h^\top$ sampled at the edges (`EdgeDots`), whose backward pass is two
sparse-dense products of the scores' gradients: the GT layer gathers neither keys nor values
per edge.

The heads are one block-diagonal matrix: row $H i + h$ of the ``[N_t H, N_s H]`` matrix
holds the weights of head $h$ of target $i$, at the columns $H j + h$, so that
values ``[N_s, H, C]`` viewed as ``[N_s H, C]`` take a single product. Where the rows come from
(`MessageStructure`) depends on the edges alone and is built once per ``edge_index``.

The sums are those of the gather/scatter path up to floating-point rounding (the terms are added
in another order).
"""

import warnings
from typing import NamedTuple

import torch
from torch import Tensor

__all__ = [
    "CSR_DTYPES",
    "EdgeDots",
    "MessageStructure",
    "WeightedSum",
    "edge_dots",
    "message_structure",
    "weighted_sum",
]

#: the value dtypes the CSR products take on every device (not half precision on the CPU)
CSR_DTYPES = (torch.float32, torch.float64)


class MessageStructure(NamedTuple):
    """The block-diagonal weight matrix of every head and its transpose, without the weights.

    ``order`` (``order_t``) lists, row by row, the position of each stored weight in the
    flattened weights ``alpha.view(-1)`` (``[E H]``, edge-major) of the matrix (its transpose).
    """

    crow: Tensor
    col: Tensor
    order: Tensor
    crow_t: Tensor
    col_t: Tensor
    order_t: Tensor
    #: ``(targets * heads, sources * heads)``
    shape: tuple[int, int]


def message_structure(edge_index: Tensor, size: tuple[int, int], heads: int) -> MessageStructure:
    """The CSR structure of the weights of ``edge_index`` (``[2, E]``, source then target).

    Args:
        edge_index: the edges, ``(source, target)`` columns, in the order of the weights.
        size: ``(sources, targets)``.
        heads: number of heads $H$.
    """
    src, dst = edge_index[0], edge_index[1]
    head = torch.arange(heads, device=edge_index.device)
    rows = (dst.unsqueeze(1) * heads + head).reshape(-1)
    cols = (src.unsqueeze(1) * heads + head).reshape(-1)
    shape = (size[1] * heads, size[0] * heads)
    order = torch.argsort(rows, stable=True)
    order_t = torch.argsort(cols, stable=True)
    # 32-bit indices where they fit: the CPU's sparse kernels take them without a conversion
    small = max(*shape, rows.numel()) < 2**31
    dtype = torch.int32 if small else torch.int64

    def compressed(sorted_rows: Tensor, count: int) -> Tensor:
        return torch._convert_indices_from_coo_to_csr(sorted_rows, count, out_int32=small)

    return MessageStructure(
        crow=compressed(rows[order], shape[0]),
        col=cols[order].to(dtype),
        order=order,
        crow_t=compressed(cols[order_t], shape[1]),
        col_t=rows[order_t].to(dtype),
        order_t=order_t,
        shape=shape,
    )


def _csr(crow: Tensor, col: Tensor, values: Tensor, shape: tuple[int, int]) -> Tensor:
    """A CSR matrix of trusted indices (built by `message_structure`, so not checked).

    torch calls its CSR tensors a beta feature, in a warning that the products here need not give.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Sparse CSR tensor support", UserWarning)
        return torch.sparse_csr_tensor(crow, col, values, shape, check_invariants=False)


def _weights(structure: MessageStructure, flat: Tensor, transposed: bool = False) -> Tensor:
    """The block-diagonal matrix (or its transpose) of the per-edge values ``flat`` ``[E H]``."""
    if transposed:
        return _csr(structure.crow_t, structure.col_t, flat.index_select(0, structure.order_t),
                    structure.shape[::-1])  # fmt: skip
    values = flat.index_select(0, structure.order)  # faster than flat[order]
    return _csr(structure.crow, structure.col, values, structure.shape)


def _product(weights: Tensor, dense: Tensor) -> Tensor:
    """``weights @ dense`` (CSR times dense) written into a new, unfilled tensor.

    ``beta=0`` reads nothing of ``out``, so it needs no zeros first, which ``torch.sparse.mm``
    writes (on one CPU thread, Cora's 13,264 weights times ``[2708, 128]``: 0.24 against
    0.29 ms).
    """
    if torch.is_grad_enabled() and (weights.requires_grad or dense.requires_grad):
        return torch.sparse.mm(weights, dense)  # a backward pass differentiated again
    out = dense.new_empty(weights.size(0), dense.size(1))
    return torch.addmm(out, weights, dense, beta=0.0, out=out)


def _sampled(structure: MessageStructure, left: Tensor, right: Tensor) -> Tensor:
    """Per edge and head, ``[E H]`` edge-major: a sampled product.

    The dot product of the edge's target's row of ``left`` ``[N_t H, C]`` and its source's row
    of ``right`` ``[N_s H, C]``.
    """
    pattern = _csr(structure.crow, structure.col, left.new_zeros(structure.col.numel()),
                   structure.shape)  # fmt: skip
    sampled = torch.sparse.sampled_addmm(pattern, left, right.t(), beta=0.0).values()
    return torch.empty_like(sampled).index_copy_(0, structure.order, sampled)


class WeightedSum(torch.autograd.Function):
    """``out[i, h] = sum_e alpha[e, h] * value[src[e], h]`` over the edges ``e`` into ``i``."""

    @staticmethod
    def forward(ctx, alpha: Tensor, value: Tensor, structure: MessageStructure) -> Tensor:
        """$A_h Z_h$ for every head at once; keeps ``alpha`` and ``value``."""
        sources, heads, channels = value.shape
        out = _product(
            _weights(structure, alpha.reshape(-1)), value.reshape(sources * heads, channels)
        )
        ctx.save_for_backward(alpha, value)
        ctx.structure = structure
        return out.view(-1, heads, channels)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor | None, Tensor | None, None]:
        """The gradients of the weights (sampled product) and of the values (transposed)."""
        alpha, value = ctx.saved_tensors
        structure: MessageStructure = ctx.structure
        sources, heads, channels = value.shape
        grad = grad.reshape(-1, channels).contiguous()
        grad_alpha = grad_value = None
        if ctx.needs_input_grad[0]:
            rows = value.reshape(sources * heads, channels)
            grad_alpha = _sampled(structure, grad, rows).view_as(alpha)
        if ctx.needs_input_grad[1]:
            transposed = _weights(structure, alpha.reshape(-1), transposed=True)
            grad_value = _product(transposed, grad).view(sources, heads, channels)
        return grad_alpha, grad_value, None


class EdgeDots(torch.autograd.Function):
    r"""``dots[e, h] = left[dst[e], h] . right[src[e], h]``: the scores $q_i^\top k_j$.

    The dense product $Q_h K_h^\top$ sampled at the edges, and in the backward pass the
    products of the gradients' sparse matrix $S_h$: $\partial L / \partial Q_h =
    S_h K_h$, $\partial L / \partial K_h = S_h^\top Q_h$; no tensor per edge and
    channel in either pass.
    """

    @staticmethod
    def forward(ctx, left: Tensor, right: Tensor, structure: MessageStructure) -> Tensor:
        """``[E, H]`` dot products of the targets' ``left`` and the sources' ``right``."""
        targets, heads, channels = left.shape
        sources = right.size(0)
        dots = _sampled(
            structure,
            left.reshape(targets * heads, channels),
            right.reshape(sources * heads, channels),
        )
        ctx.save_for_backward(left, right)
        ctx.structure = structure
        return dots.view(-1, heads)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor | None, Tensor | None, None]:
        """The gradients of both sides: products of the gradients' sparse matrix."""
        left, right = ctx.saved_tensors
        structure: MessageStructure = ctx.structure
        flat = grad.reshape(-1).contiguous()
        grad_left = grad_right = None
        if ctx.needs_input_grad[0]:
            rows = right.reshape(-1, right.size(-1))
            grad_left = _product(_weights(structure, flat), rows).view_as(left)
        if ctx.needs_input_grad[1]:
            rows = left.reshape(-1, left.size(-1))
            transposed = _weights(structure, flat, transposed=True)
            grad_right = _product(transposed, rows).view_as(right)
        return grad_left, grad_right, None


def edge_dots(left: Tensor, right: Tensor, structure: MessageStructure) -> Tensor:
    """Per edge and head, the dot product of its target's ``left`` and its source's ``right``.

    Args:
        left: the targets' rows, ``[N_t, H, C]`` (queries).
        right: the sources' rows, ``[N_s, H, C]`` (keys).
        structure: from `message_structure` (the edges, in the order of the result).

    Returns:
        Tensor: ``[E, H]``.
    """
    dots = EdgeDots.apply(left, right, structure)
    assert isinstance(dots, Tensor), "EdgeDots returns one tensor"
    return dots


def weighted_sum(alpha: Tensor, value: Tensor, structure: MessageStructure) -> Tensor:
    """Per target and head, the sum of its edges' weights ``[E, H]`` times their sources' values.

    Args:
        alpha: the weights of the edges, ``[E, H]``, in the order ``structure`` was built in.
        value: the values of the sources, ``[N_s, H, C]``.
        structure: from `message_structure` (the same edges and heads).

    Returns:
        Tensor: ``[N_t, H, C]``.
    """
    out = WeightedSum.apply(alpha, value, structure)
    assert isinstance(out, Tensor), "WeightedSum returns one tensor"
    return out
