"""Normalisations by config name (``norm.name``): one registry for both kinds.

A normalisation is a dataclass of its config keys (``configs/norm/<name>.yaml``, which is also
its schema, `lipnorm_exp.config.schema.NORMS`), registered in `NORMS`. It is one of
two kinds:

- a **node normalisation** (PairNorm, LayerNorm) builds a module for the node features after
  each graph layer, before its activation, as in the PairNorm paper's baselines
  (`Normalisation.node_module`);
- an **attention-score normalisation** (``on_scores = True``: LipschitzNorm, the paper's
  Eqs. 15, 17 and 19) leaves the node features alone and builds, for each attention layer, the
  module that normalises its scores (`Normalisation.score_module`); only attention
  models take it (`lipnorm_exp.config.rules`).

Adding either kind is one class here and one YAML file. torch and PyG are imported by the
methods that build modules, so the config is checked against these classes without them.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from lipnorm_exp.util.constraints import OneOf, PositiveNumber
from lipnorm_exp.util.registry import Registry
from lipnorm_exp.util.variants import VARIANTS

if TYPE_CHECKING:
    from torch import nn

__all__ = [
    "NORMS",
    "LayerNormalisation",
    "LipschitzNormalisation",
    "NoNormalisation",
    "Normalisation",
    "PairNormalisation",
    "node_norm",
    "normalisation",
]


@dataclass
class Normalisation:
    """One ``norm`` config group option: its keys as fields, where it acts, its label."""

    name: str

    #: acts on the attention scores inside attention layers (not on the node features)
    on_scores = False

    def node_module(self, channels: int) -> "nn.Module":
        """The module applied to the ``channels`` node features after each graph layer."""
        from lipnorm_exp.models.no_norm import NoNorm

        return NoNorm()

    def score_module(self, model: Any) -> "nn.Module | None":
        """The module normalising one attention layer's scores, or ``None``: scores as they are.

        ``model`` is the `AttentionGNN` building the layer.
        """
        return None

    @staticmethod
    def label_suffix(options: Mapping[str, Any]) -> str:
        """What the normalisation adds to a model's label (``-PN``), from its config keys."""
        return ""


NORMS: Registry[type[Normalisation]] = Registry("norm.name")


@NORMS.register("none")
@dataclass
class NoNormalisation(Normalisation):
    """No normalisation (``configs/norm/none.yaml``)."""


@NORMS.register("lip")
@dataclass
class LipschitzNormalisation(Normalisation):
    """LipschitzNorm of the attention scores (``configs/norm/lip.yaml``; paper Eqs. 15, 17, 19).

    ``alpha`` scales the normalised scores, ``eps`` guards every division, ``variant`` is the
    paper's (Eqs. 17, 19) or the authors' published code's.
    """

    alpha: PositiveNumber
    eps: PositiveNumber
    variant: Annotated[str, OneOf(VARIANTS)]

    on_scores = True

    def score_module(self, model: Any) -> "nn.Module":
        """The LipschitzNorm of the model's layer: Eq. 17 for GAT, Eq. 19 for GT, Eq. 15 for GATv2.

        One table pairs them: `LIPSCHITZ_NORMS`.
        """
        from lipnorm_exp.nn.score_norm import lipschitz_norm

        return lipschitz_norm(model.layer_class.score_contract, self.alpha, self.eps, self.variant)

    @staticmethod
    def label_suffix(options: Mapping[str, Any]) -> str:
        return "-Lip(pub)" if options.get("variant") == "published" else "-Lip"


@NORMS.register("pairnorm")
@dataclass
class PairNormalisation(Normalisation):
    """PairNorm (Zhao & Akoglu, 2020; ``configs/norm/pairnorm.yaml``).

    Centre, then rescale to mean row norm ``scale`` (PN) or each row to ``scale`` (PN-SI).
    """

    scale: PositiveNumber
    scale_individually: bool

    def node_module(self, channels: int) -> "nn.Module":
        from torch_geometric.nn import PairNorm

        return PairNorm(scale=self.scale, scale_individually=self.scale_individually)

    @staticmethod
    def label_suffix(options: Mapping[str, Any]) -> str:
        return "-PN-SI" if options.get("scale_individually") else "-PN"


@NORMS.register("layernorm")
@dataclass
class LayerNormalisation(Normalisation):
    """LayerNorm of each node's feature vector (``configs/norm/layernorm.yaml``)."""

    affine: bool

    def node_module(self, channels: int) -> "nn.Module":
        from torch_geometric.nn import LayerNorm

        return LayerNorm(channels, affine=self.affine, mode="node")

    @staticmethod
    def label_suffix(options: Mapping[str, Any]) -> str:
        return "-LN"


def normalisation(name: str, **options: Any) -> Normalisation:
    """The normalisation ``name`` with its config keys ``options``."""
    return NORMS.get(name)(name=name, **options)


def node_norm(name: str, channels: int, **options: Any) -> "nn.Module":
    """The node-feature module of normalisation ``name`` (the identity for a score norm)."""
    return normalisation(name, **options).node_module(channels)
