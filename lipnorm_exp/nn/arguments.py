"""Checks of the layers' arguments and inputs: a `ValueError` naming the argument.

Where PyG's or PyTorch's counterpart refuses an argument or an input (``heads=1.5``, a
negative channel count, an ``edge_index`` naming a node the graph does not have), the layers
of `lipnorm_exp.nn` refuse it too, with a one-line `ValueError` saying which
argument, its value and what is allowed, before anything is allocated or indexed.
"""

import math
import numbers
from typing import TypeGuard

import torch
from torch import Tensor
from torch_geometric.utils import is_torch_sparse_tensor

__all__ = ["EdgeIndexError", "check_channels", "check_count", "check_edge_index", "check_scale"]


class EdgeIndexError(ValueError, IndexError):
    """An ``edge_index`` naming a node outside the graph (an ``IndexError`` too, as in PyG)."""


def _is_int(value: object) -> TypeGuard[int]:
    """Whether ``value`` is an integer (``int`` or a NumPy integer, compared as ``int``)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_count(owner: str, name: str, value: object) -> None:
    """Refuse a ``value`` of ``name`` that is not an integer >= 1 (``heads``, ``num_heads``)."""
    if not _is_int(value) or value < 1:
        raise ValueError(f"{owner}: {name} must be an integer >= 1, got {value!r}")


def check_channels(owner: str, name: str, value: object, lazy: bool = True) -> None:
    """Refuse a channel count that is not an integer >= 1 (or -1, PyG's lazy size, if ``lazy``).

    A pair (a bipartite layer's ``(source, target)`` sizes) is checked item by item.
    """
    for item in value if isinstance(value, tuple | list) else (value,):
        if not _is_int(item) or not (item >= 1 or (lazy and item == -1)):
            allowed = "an integer >= 1 or -1 (inferred)" if lazy else "an integer >= 1"
            raise ValueError(f"{owner}: {name} must be {allowed}, got {value!r}")


def check_scale(owner: str, name: str, value: object) -> None:
    """Refuse a ``value`` of ``name`` that is not a finite number > 0 (``alpha``, ``eps``)."""
    if (
        not isinstance(value, numbers.Real)
        or isinstance(value, bool)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValueError(f"{owner}: {name} must be a finite number > 0, got {value!r}")


def check_edge_index(owner: str, edge_index: Tensor, size: tuple[int, int], flow: str) -> None:
    """Refuse an ``edge_index`` ``[2, E]`` naming a node outside ``size`` = (sources, targets).

    Skipped for a sparse adjacency (its shape is its size). The layers skip the call for a
    tensor they found within the same size before (`LastInput`).

    Raises:
        EdgeIndexError: naming the row, the node and the nodes allowed.
    """
    if is_torch_sparse_tensor(edge_index):
        return
    if edge_index.numel() == 0:
        return
    rows = (0, 1) if flow == "source_to_target" else (1, 0)
    bounds: list[int] = torch.stack(
        [edge_index.min(), edge_index[rows[0]].max(), edge_index[rows[1]].max()]
    ).tolist()
    low, high_src, high_dst = bounds
    sides = ((rows[0], high_src, size[0], "source"), (rows[1], high_dst, size[1], "target"))
    for row, high, nodes, what in sides:
        if low < 0 or high >= nodes:
            allowed = f"0 to {nodes - 1}" if nodes > 0 else "none"
            raise EdgeIndexError(
                f"{owner}: edge_index holds node {low if low < 0 else high} (row {row}, the "
                f"{what}s), but the graph has {nodes} {what} nodes; allowed: {allowed}"
            )
