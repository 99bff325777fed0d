"""An epoch's FLOP bound: its dense products' FLOPs over the GEMM rate measured at their shapes.

The products of one evaluation pass (a forward pass over the whole graph) are recorded as torch
dispatches them (``mm``, ``addmm``, ``bmm`` of strided tensors: the sparse-dense products of the
CSR messages and of a sparse input are left out). A training epoch does about three times a
forward pass's products (forward, and two products per product backward) and the evaluation
one more, so the bound is four times the sum, over the recorded products, of the seconds one
``torch.mm`` (``bmm``) of that shape takes on this machine, timed here on the calling thread
(``time.thread_time``). ``bench_reproduce`` divides a cell's CPU seconds per epoch by it.
"""

import statistics
import time
from collections import Counter
from collections.abc import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode

__all__ = ["PASSES_PER_EPOCH", "epoch_bound", "product_shapes"]

#: forward passes' products per epoch: training forward + backward (about 3) + evaluation
PASSES_PER_EPOCH = 4
#: a product's shape: (batch, rows, inner, columns); batch 1 for mm and addmm
Shape = tuple[int, int, int, int]
MATMULS = {torch.ops.aten.mm.default, torch.ops.aten.addmm.default, torch.ops.aten.bmm.default}
#: seconds of products timed per shape (at least), repeated this many times (median)
TIMED_S, REPEATS = 0.05, 3


class _Products(TorchDispatchMode):
    """Counts the dense products dispatched within, by shape."""

    def __init__(self):
        super().__init__()
        self.shapes: Counter[Shape] = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in MATMULS:
            a, b = args[-2], args[-1]
            if a.layout == torch.strided and b.layout == torch.strided:
                batch = a.shape[0] if a.dim() == 3 else 1
                self.shapes[(batch, a.shape[-2], a.shape[-1], b.shape[-1])] += 1
        return func(*args, **(kwargs or {}))


def product_shapes(forward: Callable[[], object]) -> Counter[Shape]:
    """The dense products ``forward()`` dispatches, counted by shape."""
    with torch.no_grad(), _Products() as products:
        forward()
    return products.shapes


def _seconds(shape: Shape) -> float:
    """CPU seconds of one product of ``shape`` (median of :data:`REPEATS` timed loops)."""
    batch, rows, inner, columns = shape
    a, b = torch.randn(batch, rows, inner), torch.randn(batch, inner, columns)
    product = (lambda: torch.mm(a[0], b[0])) if batch == 1 else (lambda: torch.bmm(a, b))
    product()
    times = []
    for _ in range(REPEATS):
        calls, start = 0, time.thread_time()
        while time.thread_time() - start < TIMED_S:
            product()
            calls += 1
        times.append((time.thread_time() - start) / calls)
    return statistics.median(times)


def epoch_bound(forward: Callable[[], object]) -> dict[str, float]:
    """An epoch's dense GFLOP, the GEMM rate measured at its shapes and the bound in seconds."""
    shapes = product_shapes(forward)
    flop = sum(2 * b * m * k * n * count for (b, m, k, n), count in shapes.items())
    seconds = sum(_seconds(shape) * count for shape, count in shapes.items())
    return {
        "GFLOP": PASSES_PER_EPOCH * flop / 1e9,
        "GEMM GFLOP/s": flop / seconds / 1e9 if seconds else float("nan"),
        "bound s": PASSES_PER_EPOCH * seconds,
    }
