r"""The contract between an attention layer and the normalisation of its scores.

An attention layer divides the raw score of every edge $(j, i)$ by a denominator of its
target $i$ and scales it by $\alpha$, so that the normalised scores lie in
$[-\alpha, \alpha]$ (paper Eqs. 15, 17 and 19). A score normalisation is any object that
gives the layer these two things ([`ScoreNorm`][lipnorm_exp.nn.score_norm.ScoreNorm]): the bound
``alpha`` and the ``denominator`` per target node. What the layer passes to ``denominator`` depends
on its score, so each kind of layer has its own protocol naming those inputs
([`GATScoreNorm`][lipnorm_exp.nn.score_norm.GATScoreNorm],
[`GATv2ScoreNorm`][lipnorm_exp.nn.score_norm.GATv2ScoreNorm],
[`GTScoreNorm`][lipnorm_exp.nn.score_norm.GTScoreNorm],
[`DenseScoreNorm`][lipnorm_exp.nn.score_norm.DenseScoreNorm]); a layer declares its protocol as
``score_contract`` and takes any object that keeps it
([`resolve_norm`][lipnorm_exp.nn.score_norm.resolve_norm]). The LipschitzNorm of each protocol,
which ``norm="lip"`` builds, is written once, in `LIPSCHITZ_NORMS`.
"""

import inspect
from typing import Any, Protocol, runtime_checkable

from torch import Tensor, nn
from typing_extensions import get_protocol_members

from lipnorm_exp.nn.dense_lipschitz_norm import DenseLipschitzNorm
from lipnorm_exp.nn.gat_lipschitz_norm import GATLipschitzNorm
from lipnorm_exp.nn.gt_lipschitz_norm import GTLipschitzNorm
from lipnorm_exp.nn.lipschitz_norm import LipschitzNormBase
from lipnorm_exp.nn.score_lipschitz_norm import ScoreLipschitzNorm

__all__ = [
    "LIPSCHITZ_NORMS",
    "DenseScoreNorm",
    "GATScoreNorm",
    "GATv2ScoreNorm",
    "GTScoreNorm",
    "ScoreNorm",
    "breaches",
    "lipschitz_norm",
    "norm_label",
    "resolve_norm",
]


@runtime_checkable
class ScoreNorm(Protocol):
    r"""What every attention layer needs of a score normalisation.

    Attributes:
        alpha (float): the bound of the normalised scores, $|s_{ij}| \le \alpha$; the
            layers' softmax relies on it (`bounded_softmax`).
    """

    alpha: float

    def denominator(self, *inputs: Any, **options: Any) -> Tensor | None:
        r"""Per target node $i$ and head, the $c_i$ the scores are divided by.

        The normalised score is $s_{ij} = \alpha \, e_{ij} / c_i$. ``None`` where the
        denominator differs per edge: the layer then calls the normalisation on its scores.
        """


class GATScoreNorm(ScoreNorm, Protocol):
    r"""A normalisation of GAT's linear score $a_h^\top [z_i \,\|\, z_j]$ (Eq. 17).

    See [`GATLipschitzNorm`][lipnorm_exp.nn.gat_lipschitz_norm.GATLipschitzNorm] for the inputs'
    shapes.
    """

    def denominator(
        self,
        x: Tensor | tuple[Tensor, Tensor | None],
        att: Tensor,
        edge_index: Tensor | tuple[Tensor, Tensor],
        edge_attr: Tensor | None = None,
        num_targets: int | None = None,
    ) -> Tensor | None:
        """``[N_t, H]`` per target, or ``None`` where it differs per edge."""

    def __call__(
        self,
        score: Tensor,
        x: Tensor | tuple[Tensor, Tensor | None],
        att: Tensor,
        edge_index: Tensor | tuple[Tensor, Tensor],
        edge_attr: Tensor | None = None,
        num_targets: int | None = None,
    ) -> Tensor:
        """The normalised scores ``[E, H]`` (called where ``denominator`` gives ``None``)."""


class GATv2ScoreNorm(ScoreNorm, Protocol):
    r"""A normalisation of GATv2's score, any Lipschitz function of $[x_i \,\|\, x_j]$.

    The paper's general rule, Eq. 15; see
    [`ScoreLipschitzNorm`][lipnorm_exp.nn.score_lipschitz_norm.ScoreLipschitzNorm] for the inputs'
    shapes.
    """

    def denominator(
        self,
        score: Tensor,
        x: Tensor | tuple[Tensor, Tensor],
        lipschitz: Tensor,
        edge_index: Tensor,
        edge_attr: Tensor | None = None,
    ) -> Tensor:
        """``[N_t, H]`` per target."""

    def __call__(
        self,
        score: Tensor,
        x: Tensor | tuple[Tensor, Tensor],
        lipschitz: Tensor,
        edge_index: Tensor,
        edge_attr: Tensor | None = None,
    ) -> Tensor:
        """The normalised scores ``[E, H]``."""


class GTScoreNorm(ScoreNorm, Protocol):
    r"""A normalisation of the graph transformer's dot product $q_i^\top k_j$ (Eq. 19).

    See [`GTLipschitzNorm`][lipnorm_exp.nn.gt_lipschitz_norm.GTLipschitzNorm] for the inputs'
    shapes.
    """

    def denominator(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        edge_index: Tensor | tuple[Tensor, Tensor],
        per_edge: bool = False,
    ) -> Tensor:
        """``[N_t, H]`` per target."""


class DenseScoreNorm(ScoreNorm, Protocol):
    r"""A normalisation of the dot products of dense multi-head attention (Eq. 19).

    See [`DenseLipschitzNorm`][lipnorm_exp.nn.dense_lipschitz_norm.DenseLipschitzNorm] for the
    inputs' shapes.
    """

    def denominator(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        """``[*, L, 1]`` per query."""

    def __call__(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        """The normalised scores plus the mask, ``[*, L, S]``."""


#: the LipschitzNorm of each kind of attention score: the one ``norm="lip"`` builds
LIPSCHITZ_NORMS: dict[type[ScoreNorm], type[LipschitzNormBase]] = {
    GATScoreNorm: GATLipschitzNorm,
    GATv2ScoreNorm: ScoreLipschitzNorm,
    GTScoreNorm: GTLipschitzNorm,
    DenseScoreNorm: DenseLipschitzNorm,
}


def lipschitz_norm(
    contract: type[ScoreNorm], alpha: float = 1.0, eps: float = 1e-12, variant: str = "paper"
) -> LipschitzNormBase:
    """The LipschitzNorm that keeps ``contract`` (`LIPSCHITZ_NORMS`).

    ``variant`` is passed to the norms that have variants (GAT's and GT's) and ignored by the
    others (the general rule, Eq. 15, and the dense Eq. 19 have one form).
    """
    norm_class = LIPSCHITZ_NORMS[contract]
    if norm_class.has_variants:
        return norm_class(alpha, eps, variant=variant)
    return norm_class(alpha, eps)


def breaches(norm: object, contract: type[ScoreNorm]) -> list[str]:
    """How ``norm`` fails to keep ``contract``; empty if it keeps it.

    A breach is a missing member, or a method that does not take the inputs the protocol names
    (by keyword, as the layers pass them; an ``nn.Module`` is called through its ``forward``).
    """
    found = []
    for name in sorted(get_protocol_members(contract)):
        if not hasattr(norm, name):
            found.append(f"has no {name}")
            continue
        expected = getattr(contract, name, None)
        if not callable(expected):
            continue
        parameters = list(inspect.signature(expected).parameters.values())[1:]  # less self
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters):
            continue  # the protocol leaves this method's inputs open
        inputs = [p.name for p in parameters]
        method = norm.forward if name == "__call__" and isinstance(norm, nn.Module) else None
        try:
            inspect.signature(method or getattr(norm, name)).bind(**dict.fromkeys(inputs))
        except TypeError:
            found.append(f"{name} does not take ({', '.join(inputs)})")
    return found


def resolve_norm(layer: str, norm: object, contract: type[ScoreNorm]) -> Any:
    """Turn a layer's ``norm`` argument into its score normalisation (or ``None``).

    Args:
        layer: the layer's class name, for messages.
        norm: ``None`` or ``"none"`` (no normalisation), ``"lip"`` (the LipschitzNorm of
            ``contract`` with defaults), or any object that keeps ``contract``.
        contract: the layer's protocol.

    Raises:
        ValueError: for a string other than ``none`` and ``lip``.
        TypeError: for an object that does not keep ``contract``, naming what it lacks.
    """
    if norm is None or norm == "none":
        return None
    if norm == "lip":
        return lipschitz_norm(contract)
    if isinstance(norm, str):
        raise ValueError(
            f"{layer}: unknown norm {norm!r}; allowed: none, lip, or a {contract.__name__}"
        )
    found = breaches(norm, contract)
    if found:
        raise TypeError(
            f"{layer}: norm {type(norm).__name__} is not a {contract.__name__}: {'; '.join(found)}"
        )
    return norm


def norm_label(norm: object, contract: type[ScoreNorm]) -> str:
    """Short name of a layer's norm for ``repr``: ``none``, ``lip`` (defaults) or the object."""
    if norm is None:
        return "none"
    return "lip" if repr(norm) == repr(lipschitz_norm(contract)) else repr(norm)
