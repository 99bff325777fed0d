r"""Pieces shared by the LipschitzNorm modules and the attention layers that use them.

Every LipschitzNorm divides the raw attention scores of target node :math:`i` by a scalar
:math:`c_i` built from norms over its neighbourhood :math:`\mathcal{N}(i)` (in-neighbours and
:math:`i` itself). The per-node norms are computed once per node, the neighbourhood maximum
with one scatter over the edges, and the result is gathered back per edge once.
"""

import torch
from torch import Tensor, nn

from lipnorm_exp.errors import ConfigError

__all__ = [
    "VARIANTS",
    "check_norm_options",
    "neighbourhood_max",
    "norm_label",
    "resolve_norm",
    "safe_sqrt",
    "squared_norm",
    "target_max",
]

VARIANTS = ("paper", "published")
"""``paper``: the paper's equations (default); ``published``: the authors' public code."""


def check_norm_options(name: str, alpha: float, eps: float, variant: str | None = None) -> None:
    """Raise a one-line :class:`ConfigError` for a negative ``alpha``/``eps`` or unknown variant."""
    if alpha < 0:
        raise ConfigError(f"{name}: alpha must be >= 0, got {alpha}")
    if eps < 0:
        raise ConfigError(f"{name}: eps must be >= 0, got {eps}")
    if variant is not None and variant not in VARIANTS:
        raise ConfigError(f"{name}: unknown variant '{variant}'; allowed: {', '.join(VARIANTS)}")


def squared_norm(x: Tensor) -> Tensor:
    """Squared 2-norm over the last dimension: ``[..., C] -> [...]``."""
    return x.pow(2).sum(dim=-1)


def safe_sqrt(x: Tensor) -> Tensor:
    """Square root with a finite gradient at zero (the input is floored at the smallest normal)."""
    return x.clamp_min(torch.finfo(x.dtype).tiny).sqrt()


def target_max(edge_values: Tensor, index: Tensor, num_nodes: int) -> Tensor:
    """Per target node, the maximum of per-edge values ``[E, *]`` over its in-edges: ``[N, *]``.

    ``index`` holds the target of every edge; nodes without in-edges get 0. ``num_nodes`` is
    given so that no device sync is needed. This is what ``torch_geometric.utils.scatter(...,
    reduce="max")`` runs without ``torch-scatter``, called directly because that function warns
    on CUDA tensors that need gradients.
    """
    shape = (-1,) + (1,) * (edge_values.dim() - 1)
    out = edge_values.new_zeros((num_nodes, *edge_values.shape[1:]))
    return out.scatter_reduce_(
        0, index.view(shape).expand_as(edge_values), edge_values, "amax", include_self=False
    )


def neighbourhood_max(values: Tensor, edge_index: Tensor, num_nodes: int) -> Tensor:
    r"""Per target node, the maximum of a per-node quantity over its in-neighbours.

    .. math::
        m_i = \max_{j \,:\, (j, i) \in \mathcal{E}} \; \text{values}_j

    Args:
        values (Tensor): per-node values ``[N, *]``.
        edge_index (Tensor): ``[2, E]`` edges ``(source j, target i)``; self-loops included
            make :math:`\mathcal{N}(i)` contain :math:`i`.
        num_nodes (int): number of nodes ``N``.

    Returns:
        Tensor: ``[N, *]``; nodes without in-edges get 0.
    """
    src, dst = edge_index
    return target_max(values[src], dst, num_nodes)


def resolve_norm(norm: str | nn.Module | None, default: type[nn.Module]) -> nn.Module | None:
    """Turn a layer's ``norm`` argument into a module (or ``None``).

    Args:
        norm: ``None`` or ``"none"`` (no normalisation), ``"lip"`` (``default()``), or an
            instance of ``default``.
        default: the LipschitzNorm class of the layer.

    Raises:
        ConfigError: for any other value; the message lists the allowed values.
    """
    if norm is None or norm == "none":
        return None
    if norm == "lip":
        return default()
    if isinstance(norm, default):
        return norm
    raise ConfigError(
        f"norm: unknown value {norm!r}; allowed: none, lip, or a {default.__name__} instance"
    )


def norm_label(norm: nn.Module | None, default: type[nn.Module]) -> str:
    """Short name of a layer's norm for ``repr``: ``none``, ``lip`` (defaults) or the module."""
    if norm is None:
        return "none"
    return "lip" if repr(norm) == repr(default()) else repr(norm)
