"""Stand-ins for ``torch_scatter`` and ``torch_sparse`` in plain torch, for the authors' code.

The authors' ``DeepGAT`` (https://github.com/gdasoulas/LipschitzNorm) imports
``torch_scatter.scatter`` (and its ``utils.py`` ``scatter_mean``) and
``torch_sparse.SparseTensor, set_diag``: compiled extensions this environment may lack.
`install` registers the modules below in ``sys.modules`` for the process that calls it, and only
for a package that is not installed (a real one is always used where present).

``scatter`` follows torch_scatter 2.0.5's documented semantics (the version of the authors'
``requirements.txt``): the ``index`` (1-D) is broadcast along ``dim`` over ``src``; the output
has ``dim_size`` rows along ``dim`` (default ``index.max() + 1``); for row ``i``,

.. math::
    \\mathrm{out}_i = \\operatorname{reduce}_{e : \\mathrm{index}_e = i} \\mathrm{src}_e,

with ``reduce`` one of ``sum``/``add``, ``mean``, ``max``, ``min``, and 0 where no ``e`` falls in
row ``i``. As in torch_scatter, ``max`` and ``min`` send the gradient of a row to one element
only, the first in ``index`` order among equal extremes (torch's own ``scatter_reduce`` would
share it among them). ``mul`` and the ``out=`` argument are not provided (the authors' code uses
neither): a call with them fails.

``torch_sparse`` provides only names here: ``SparseTensor`` is PyG's own stand-in (whose
constructor says torch_sparse is missing) and ``set_diag`` raises, since ``DeepGATConv`` reaches it
only for a ``SparseTensor`` adjacency and the authors' scripts pass an ``edge_index``.
"""

import importlib.metadata
import importlib.util
import sys
import types

import torch
from torch import Tensor

#: the docstring of a stand-in module (how `install` tells one from the real package)
STAND_IN = "plain-torch stand-in (scripts/authors_shims.py)"
REDUCTIONS = {"sum": "sum", "add": "sum", "mean": "mean", "max": "amax", "min": "amin"}


def _broadcast(index: Tensor, src: Tensor, dim: int) -> Tensor:
    """``index`` (1-D, along ``dim``) expanded to ``src``'s shape, as torch_scatter does."""
    shape = [1] * src.dim()
    shape[dim] = -1
    return index.view(shape).expand_as(src)


def _first_extreme(src: Tensor, index: Tensor, dim: int, out: Tensor) -> Tensor:
    """Each row's extreme taken from ``src`` at the first position holding it, 0 in empty rows.

    ``out`` holds the extremes' values (``scatter_reduce`` with ``include_self=False`` over a
    zero tensor); gathering ``src`` at one position per row routes the gradient there only.
    """
    length = src.size(dim)
    if length == 0:
        return out
    hit = src.detach() == out.gather(dim, index)
    shape = [1] * src.dim()
    shape[dim] = -1
    positions = torch.arange(length, device=src.device).view(shape).expand_as(src)
    positions = torch.where(hit, positions, torch.full_like(positions, length))
    first = torch.full_like(out, length, dtype=torch.long)
    first = first.scatter_reduce(dim, index, positions, "amin", include_self=True)
    empty = first == length
    return src.gather(dim, first.clamp(max=length - 1)).masked_fill(empty, 0)


def scatter(
    src: Tensor,
    index: Tensor,
    dim: int = -1,
    dim_size: int | None = None,
    reduce: str = "sum",
) -> Tensor:
    """``torch_scatter.scatter`` for ``reduce`` in ``sum``/``add``, ``mean``, ``max``, ``min``.

    Args:
        src (Tensor): the values.
        index (Tensor): int64, 1-D along ``dim`` or ``src``'s shape: each value's output row.
        dim (int): the axis scattered along. (default: ``-1``)
        dim_size (int, optional): rows of the output along ``dim``. (default:
            ``index.max() + 1``, 0 for an empty ``index``)
        reduce (str): how a row's values combine. (default: ``"sum"``)

    Returns:
        Tensor: ``src``'s shape with ``dim_size`` rows along ``dim``; 0 in rows no value reaches.

    Raises:
        ValueError: ``reduce`` not one of those above.
    """
    if reduce not in REDUCTIONS:
        raise ValueError(f"reduce={reduce!r}: the stand-in scatter takes {sorted(REDUCTIONS)}")
    dim = dim + src.dim() if dim < 0 else dim
    if index.dim() == 1:
        index = _broadcast(index, src, dim)
    size = list(src.shape)
    if dim_size is None:
        dim_size = int(index.max()) + 1 if index.numel() else 0
    size[dim] = dim_size
    zeros = src.new_zeros(size)
    if reduce in ("sum", "add"):
        return zeros.scatter_add(dim, index, src)
    if reduce == "mean":
        return zeros.scatter_reduce(dim, index, src, "mean", include_self=False)
    extremes = zeros.scatter_reduce(
        dim, index, src.detach(), REDUCTIONS[reduce], include_self=False
    )
    return _first_extreme(src, index, dim, extremes)


def scatter_mean(src: Tensor, index: Tensor, dim: int = -1, dim_size: int | None = None) -> Tensor:
    """``torch_scatter.scatter_mean``: `scatter` with ``reduce="mean"``."""
    return scatter(src, index, dim, dim_size, reduce="mean")


def set_diag(*args: object, **kwargs: object) -> None:
    """``torch_sparse.set_diag`` is not provided: it needs a real ``SparseTensor``.

    Raises:
        NotImplementedError: always.
    """
    raise NotImplementedError(
        "torch_sparse.set_diag: torch_sparse is not installed and the stand-in takes no "
        "SparseTensor; pass an edge_index"
    )


def _torch_scatter() -> types.ModuleType:
    module = types.ModuleType("torch_scatter", STAND_IN)
    module.scatter = scatter  # type: ignore[attr-defined]
    module.scatter_mean = scatter_mean  # type: ignore[attr-defined]
    return module


def _torch_sparse() -> types.ModuleType:
    from torch_geometric.typing import SparseTensor

    module = types.ModuleType("torch_sparse", STAND_IN)
    module.SparseTensor = SparseTensor  # type: ignore[attr-defined]
    module.set_diag = set_diag  # type: ignore[attr-defined]
    return module


def install() -> dict[str, str]:
    """Register a stand-in for each of torch_scatter and torch_sparse that is not installed.

    PyG is imported first, so that it has seen the packages' real absence and never takes a
    stand-in for the extension.

    Returns:
        dict[str, str]: package → ``"stand-in"``, or the installed version where it is real.
    """
    import torch_geometric.nn  # noqa: F401  (PyG decides on the extensions at import)

    used = {}
    for name, build in (("torch_scatter", _torch_scatter), ("torch_sparse", _torch_sparse)):
        module = sys.modules.get(name)
        if module is None and importlib.util.find_spec(name) is None:
            module = sys.modules[name] = build()
        stand_in = module is not None and module.__doc__ == STAND_IN
        used[name] = "stand-in" if stand_in else importlib.metadata.version(name.replace("_", "-"))
    return used
