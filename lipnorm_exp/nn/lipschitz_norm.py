r"""Pieces shared by the LipschitzNorm modules and the attention layers that use them.

Every LipschitzNorm divides the raw attention scores of target node $i$ by a scalar
$c_i$ built from norms over its neighbourhood $\mathcal{N}(i)$ (in-neighbours, and
$i$ itself when self-loops are added). The per-node norms are computed once per node, the
neighbourhood maximum with one integer scatter over the edges that also finds the maximising
neighbour (`argmax_positions`; the maximum is then gathered from it, so its backward pass
touches nodes, not edges). The modules give the per-target denominator, which the layers fold
into the scores with one gather per edge (GAT) or into the targets' queries (GT); the scores
are then bounded and their softmax needs no shift (`bounded_softmax`).
Everything is written with differentiable torch operations (autograd, forward mode and
``torch.compile`` trace it); norms of half-precision inputs are computed in float32
(`compute_dtype`).
"""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import overload

import torch
from torch import Tensor, nn

from lipnorm_exp.nn.arguments import check_scale
from lipnorm_exp.util.variants import VARIANTS

__all__ = [
    "VARIANTS",
    "LipschitzNormBase",
    "SquaredNorm",
    "argmax_positions",
    "check_norm_options",
    "compact_index",
    "compute_dtype",
    "edge_ends",
    "fused_squared_norms",
    "gather_positions",
    "max_row_sq",
    "neighbourhood_max",
    "quadratic_scale",
    "rescale",
    "safe_sqrt",
    "source_target",
    "squared_norm",
    "target_max",
    "with_rows",
]


def check_norm_options(
    name: str, alpha: float, eps: float | None, variant: str | None = None
) -> None:
    """Raise a one-line `ValueError` for a bad ``alpha``, ``eps`` or ``variant``.

    ``alpha`` and ``eps`` (where given) must be finite numbers > 0.
    """
    check_scale(name, "alpha", alpha)
    if eps is not None:
        check_scale(name, "eps", eps)
    if variant is not None and variant not in VARIANTS:
        raise ValueError(f"{name}: unknown variant '{variant}'; allowed: {', '.join(VARIANTS)}")


class LipschitzNormBase(nn.Module):
    r"""The options every LipschitzNorm takes, checked once and shown in its ``repr``.

    Args:
        alpha (float): scale of the normalised scores, $\alpha \ge 0$.
        eps (float): added to the denominator, $\epsilon \ge 0$.
        variant (str or None): one of `VARIANTS`, or ``None`` where a norm has none.
    """

    #: whether the norm takes a ``variant`` (the paper's equations or the published code's)
    has_variants = True

    def __init__(self, alpha: float = 1.0, eps: float = 1e-12, variant: str | None = "paper"):
        super().__init__()
        check_norm_options(type(self).__name__, alpha, eps, variant)
        self.alpha = alpha
        self.eps = eps
        self.variant = variant

    def __repr__(self) -> str:
        variant = "" if self.variant is None else f", variant={self.variant}"
        return f"{type(self).__name__}(alpha={self.alpha}{variant})"


def compute_dtype(x: Tensor) -> torch.dtype:
    r"""The dtype norms of ``x`` are computed in: float32 for half precision, else ``x.dtype``.

    A float16 squared norm overflows past $\|x\|_2 = 256$ (a sum of two past 181, with a
    non-finite gradient), a bfloat16 one keeps 8 significant bits; in float32 neither happens,
    and the normalised scores, bounded by $\alpha$, are cast back (`rescale`).
    """
    if x.dtype == torch.float16 or x.dtype == torch.bfloat16:
        return torch.float32
    return x.dtype


def squared_norm(x: Tensor) -> Tensor:
    """Squared 2-norm over the last dimension, ``[..., C] -> [...]``, in `compute_dtype`.

    For a short last dimension (C = 8 channels per head) a product with ones is the faster
    forward pass, a sum the faster forward and backward together (on one CPU thread, [2708, 8,
    8]: 0.11 against 0.17 ms forward, 0.75 against 0.51 ms with the backward pass), so the
    product is taken where no gradient is wanted.
    """
    x = x.to(compute_dtype(x))
    if not torch.jit.is_scripting() and _fused():
        return _fused_squared_norm(x)
    if torch.is_grad_enabled() and x.requires_grad:
        return (x * x).sum(dim=-1)
    return (x * x) @ x.new_ones(x.size(-1))  # as x.square(), whose kernel is the slower


#: whether `squared_norm` is `SquaredNorm` (`fused_squared_norms`): a context variable, so that
#: threads (and asyncio tasks) with layers on other message paths do not share it
_FUSED: ContextVar[bool] = ContextVar("lipnorm_exp_fused_squared_norms", default=False)


@contextmanager
def fused_squared_norms() -> Iterator[None]:
    r"""Within it, `squared_norm` is `SquaredNorm`: one pass each way.

    The layers use it off their reference arithmetic (``message_path`` other than
    ``"gather"``), which the records' numerics pin: its values and gradients equal the others'
    up to rounding, not bit for bit.
    """
    token = _FUSED.set(True)
    try:
        yield
    finally:
        _FUSED.reset(token)


@torch.jit.unused
def _fused() -> bool:
    # compiling first: a traced graph takes the reference arithmetic, and reads no context variable
    return not torch.compiler.is_compiling() and _FUSED.get()


@torch.jit.unused
def _fused_squared_norm(x: Tensor) -> Tensor:
    out = SquaredNorm.apply(x)
    assert isinstance(out, Tensor), "SquaredNorm returns one tensor"
    return out


class SquaredNorm(torch.autograd.Function):
    r"""Squared norms over the last dimension in one pass, back-propagated in one product.

    Forward, the squared vector norm (one reduction, where ``(x * x).sum(-1)`` writes the
    squares first); backward, $2 g x$, where autograd's backward of ``x * x`` takes two
    products, $g x$ twice, and adds each to ``x``'s other gradients in turn.
    """

    #: under ``torch.func.vmap`` (seeds trained together) the rule is made from the ops here
    generate_vmap_rule = True

    @staticmethod
    def forward(x: Tensor) -> Tensor:
        """The squared norms over the last dimension."""
        return torch.linalg.vector_norm(x, dim=-1).square()

    @staticmethod
    def setup_context(ctx, inputs: tuple[Tensor], output: Tensor) -> None:
        """Keep ``x`` for the backward pass and for forward-mode differentiation."""
        ctx.save_for_backward(inputs[0])
        ctx.save_for_forward(inputs[0])

    @staticmethod
    def jvp(ctx, tangent: Tensor) -> Tensor:
        r"""$2 x^\top t$ over the last dimension (forward mode, ``torch.func.jacfwd``)."""
        (x,) = ctx.saved_tensors
        return 2.0 * (x * tangent).sum(dim=-1)

    @staticmethod
    def backward(ctx, grad: Tensor) -> Tensor:
        """$2 g x$, ``g`` broadcast over the last dimension."""
        (x,) = ctx.saved_tensors
        return x * (2.0 * grad).unsqueeze(-1)


def safe_sqrt(x: Tensor) -> Tensor:
    """Square root with a finite gradient at zero: of ``x`` plus the smallest normal number.

    ``x`` is float32 or float64 (`compute_dtype`). For a non-negative ``x`` (a squared
    norm) the shift changes nothing above ~1e-31 in float32 (~1e-292 in float64); autograd
    keeps only the result. (The constants are ``torch.finfo(dtype).tiny``, which TorchScript
    cannot call.)
    """
    tiny = 2.2250738585072014e-308 if x.dtype == torch.float64 else 1.1754943508222875e-38
    return (x + tiny).sqrt()


def rescale(score: Tensor, factor: Tensor) -> Tensor:
    """``score * factor`` computed in ``factor``'s dtype, returned in ``score``'s."""
    return (score.to(factor.dtype) * factor).to(score.dtype)


def quadratic_scale(u: Tensor, v: Tensor, w: Tensor) -> Tensor:
    r"""The denominator of the paper's Eq. (19), $\max\{uv, uw, vw\}$, elementwise."""
    return torch.maximum(torch.maximum(u * v, u * w), v * w)


@overload
def source_target(x: Tensor | tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]: ...


@overload
def source_target(x: Tensor | tuple[Tensor, Tensor | None]) -> tuple[Tensor, Tensor | None]: ...


def source_target(x: Tensor | tuple[Tensor, Tensor | None]) -> tuple[Tensor, Tensor | None]:
    """``(x_src, x_dst)``: a pair as given (bipartite graphs), or one tensor for both."""
    return (x[0], x[1]) if isinstance(x, tuple | list) else (x, x)


def edge_ends(edge_index: Tensor | tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
    """``(source, target)`` of every edge: the rows of an ``edge_index`` ``[2, E]``, or a pair."""
    if isinstance(edge_index, Tensor):
        return edge_index[0], edge_index[1]
    return edge_index


def max_row_sq(
    src_sq: Tensor,
    edge_index: Tensor | tuple[Tensor, Tensor],
    num_targets: int,
    edge_sq: Tensor | None = None,
) -> Tensor:
    r"""Per target $i$, $\max_{j \in \mathcal{N}(i)} (\|x_j\|^2 + \|e_{ij}\|^2)$.

    The part of the squared norm of the row $[x_i \,\|\, x_j \,\|\, e_{ij}]$ that
    changes with the neighbour: per source node (``src_sq`` ``[N_src, *]``) plus, with edge
    features, per edge (``edge_sq`` ``[E, *]``). Without edge features the maximum is taken
    over nodes (`neighbourhood_max`), with them over edges (`target_max`).

    Returns:
        Tensor: ``[num_targets, *]``; targets without in-edges get 0.
    """
    if edge_sq is None:
        return neighbourhood_max(src_sq, edge_index, num_targets)
    src, dst = edge_index
    return target_max(src_sq.index_select(0, src) + edge_sq, dst, num_targets)


def target_max(edge_values: Tensor, index: Tensor, num_nodes: int) -> Tensor:
    r"""Per target node, the maximum of non-negative per-edge values ``[E, *]`` over its in-edges.

    $$
    m_i = \max_{e \,:\, \text{index}_e = i} \; \text{edge\_values}_e
    $$

    ``index`` holds the target of every edge; nodes without in-edges get 0. ``num_nodes`` is
    given so that no device sync is needed. The gradient of $m_i$ flows to one maximising
    edge (among ties, the last one), a subgradient of the maximum like the even split of
    ``torch.amax``.

    Returns:
        Tensor: ``[num_nodes, *]``.
    """
    return gather_positions(edge_values, argmax_positions(edge_values, None, index, num_nodes))


def neighbourhood_max(
    values: Tensor, edge_index: Tensor | tuple[Tensor, Tensor], num_nodes: int
) -> Tensor:
    r"""Per target node, the maximum of a non-negative per-node quantity over its in-neighbours.

    $$
    m_i = \max_{j \,:\, (j, i) \in \mathcal{E}} \; \text{values}_j
    $$

    The maximum is gathered from ``values`` at the maximising neighbour, so its gradient flows
    to that neighbour only (among ties, the one with the largest index): a subgradient of the
    maximum, as the even split of ``torch.amax`` among ties is.

    Args:
        values (Tensor): per-source-node values ``[N_src, *]``, non-negative (norms).
        edge_index (Tensor): ``[2, E]`` edges ``(source j, target i)``; self-loops included
            make $\mathcal{N}(i)$ contain $i$.
        num_nodes (int): number of target nodes (``N_src`` unless the graph is bipartite).

    Returns:
        Tensor: ``[num_nodes, *]``; nodes without in-edges get 0.
    """
    src, dst = edge_index
    return gather_positions(values, argmax_positions(values, src, dst, num_nodes))


def argmax_positions(values: Tensor, rows: Tensor | None, index: Tensor, num_nodes: int) -> Tensor:
    """Per target and column, where in ``values`` the largest value offered to the target is.

    Edge ``e`` offers row ``rows[e]`` of ``values`` (row ``e`` when ``rows`` is ``None``) to
    target ``index[e]``; among equal values the largest row wins. The bits of a non-negative
    float, read as a signed integer, order as the float does (NaN above infinity, as
    ``torch.amax`` lets NaN win), so integer maxima, faster than float ones, select it exactly.
    For floats of 32 bits or fewer, value and position are packed into one 64-bit key and one
    scatter finds both; 64-bit floats take a second scatter over the edges that attain the
    maximum. The scatters run over the flattened ``[E * K]`` keys, several times faster than
    over ``[E, K]`` rows. Nothing here is differentiated.

    Returns:
        Tensor: ``[num_nodes, *values.shape[1:]]`` positions in ``values.flatten()`` (int64);
        ``values.numel()`` where the target has no edge.
    """
    with torch.no_grad():
        shape = with_rows(values, num_nodes)
        width = _row_width(values)
        keys = _as_signed_ints(values.abs()).long()  # abs: -0.0, -NaN
        keys = keys.reshape(values.size(0), width)
        positions = torch.arange(values.numel(), device=values.device).view_as(keys)
        targets = torch.add(
            torch.arange(width, device=index.device), index.view(-1, 1), alpha=width
        ).view(-1)
        if values.element_size() <= 4 and values.numel() < 2**32:
            keys = keys.bitwise_left_shift_(32).bitwise_or_(positions)
            keys = keys if rows is None else keys.index_select(0, rows)
            # no edge: a negative key (abs cleared the sign bits of the others) whose low bits
            # are the position past the end
            empty = values.numel() - (1 << 32)
            return _scatter_amax(keys, targets, shape, empty) & 0xFFFFFFFF
        if rows is not None:
            keys, positions = keys.index_select(0, rows), positions.index_select(0, rows)
        best = _scatter_amax(keys, targets, shape, -1)
        attained = keys.reshape(-1) == best.view(-1).index_select(0, targets)
        best = _scatter_amax(torch.where(attained, positions.view(-1), -1), targets, shape, -1)
        return torch.where(best < 0, values.numel(), best)


def with_rows(values: Tensor, rows: int) -> list[int]:
    """The shape of ``values`` with ``rows`` rows: ``[rows, *values.shape[1:]]``."""
    return [rows] + list(values.shape[1:])


def _row_width(values: Tensor) -> int:
    """Elements per row of ``values``: the product of ``values.shape[1:]`` (1 for a vector)."""
    width = 1
    for size in values.shape[1:]:
        width *= size
    return width


def _as_signed_ints(values: Tensor) -> Tensor:
    """The bits of ``values`` read as signed integers of the same width (a view in Python)."""
    dtype = _signed_int(values.element_size())
    if torch.jit.is_scripting():  # TorchScript resolves Tensor.view(dtype) to view(size)
        return torch.view_copy(values, dtype=dtype)
    else:
        return _view_as(values, dtype)


@torch.jit.unused
def _view_as(values: Tensor, dtype: torch.dtype) -> Tensor:
    """``values.view(dtype)``, or a copy where ``torch.func.vmap`` cannot batch the view.

    torch 2.13 batches ``Tensor.view(dtype)``; earlier versions raise under vmap (seeds trained
    together, `lipnorm_exp.training.copies`) and batch ``torch.view_copy`` instead.
    """
    try:
        return values.view(dtype)
    except RuntimeError:
        return torch.view_copy(values, dtype=dtype)


def _signed_int(width: int) -> torch.dtype:
    """The signed integer dtype of ``width`` bytes (2, 4 or 8)."""
    if width == 2:
        return torch.int16
    if width == 4:
        return torch.int32
    return torch.int64


def _scatter_amax(keys: Tensor, targets: Tensor, shape: list[int], empty: int) -> Tensor:
    """Per flat target, the largest integer key offered to it; ``empty`` (smaller) for none."""
    out = keys.new_full(shape, empty)
    return out.view(-1).scatter_reduce_(0, targets, keys.reshape(-1), "amax").view(shape)


def gather_positions(values: Tensor, positions: Tensor) -> Tensor:
    """``values.flatten()`` at ``positions``, 0 at ``values.numel()``, differentiably.

    The positions are read from a copy of ``values`` with one zero appended, through an int32
    index where it fits: autograd keeps that index, four bytes per result, and nothing else.
    """
    flat = torch.cat([values.reshape(-1), values.new_zeros(1)])
    return flat.index_select(0, compact_index(positions, flat.numel()).view(-1)).view(
        positions.shape
    )


def compact_index(positions: Tensor, size: int) -> Tensor:
    """``positions`` into a tensor of ``size`` elements, as int32 where they fit, else int64.

    An index that autograd keeps for the backward pass then takes four bytes per position.
    """
    return positions.to(torch.int32 if size < 2**31 else torch.int64)
