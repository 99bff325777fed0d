"""Display names: one label per model configuration, and the names of datasets and settings.

A model label is the paper's name of the layer, then the normalisation, then the residual
connections: ``GAT``, ``GAT-Lip``, ``GAT-Lip(pub)`` (the published code's variant),
``GAT-PN``, ``GAT-PN-SI`` (PairNorm scaling each node), ``GAT-LN`` (LayerNorm),
``GAT-Lip-res``; a residual inside Alon & Yahav's block (``model.post_layernorm``, every model
of the TREES protocol has it) is part of the architecture and not marked. Every table row,
legend entry and summary line uses `model_label`; the layer's name is its model class's
``label``, the normalisation's suffix its class's ``label_suffix``
(`lipnorm_exp.models.norms`), and a dataset's spelling the one its loader was registered with
(`lipnorm_exp.data.DATASETS`).
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lipnorm_exp.data import DATASETS
from lipnorm_exp.models import MODELS
from lipnorm_exp.models.norms import NORMS

METRIC_NAMES = {"accuracy": "accuracy", "rocauc": "ROC-AUC"}


def model_label(config: Mapping[str, Any]) -> str:
    """The display label of the model a run config describes.

    Args:
        config (Mapping): a run's resolved config (``model`` and ``norm`` sections are read).

    Returns:
        str: e.g. ``"GAT-Lip-res"`` for ``model.name=gat``, ``norm.name=lip``,
        ``model.residual=true``.
    """
    model = config.get("model", {})
    name = model.get("name", "?")
    layer = MODELS.get(name).label if name in MODELS else name
    norm = config.get("norm", {})
    norm_name = norm.get("name", "none")
    suffix = NORMS.get(norm_name).label_suffix(norm) if norm_name in NORMS else f"-{norm_name}"
    label = layer + suffix
    marked = model.get("residual") and not model.get("post_layernorm")
    return label + "-res" if marked else label


@dataclass(frozen=True)
class ModelConfig:
    """A model configuration named in code (a claim, a published number), labelled here.

    Args:
        name (str): ``model.name``, a registered model.
        norm (str, optional): ``norm.name``, a registered normalisation. (default: ``"none"``)
        residual (bool, optional): ``model.residual``. (default: `False`)
    """

    name: str
    norm: str = "none"
    residual: bool = False

    @property
    def label(self) -> str:
        """Its `model_label`, which the runs of this configuration carry.

        Raises:
            ConfigError: ``name`` is no registered model or ``norm`` no registered
                normalisation (one line naming the key, the value and the allowed values).
        """
        MODELS.get(self.name)
        NORMS.get(self.norm)
        return model_label(
            {"model": {"name": self.name, "residual": self.residual}, "norm": {"name": self.norm}}
        )


def dataset_label(name: str) -> str:
    """The paper's spelling of a dataset name (``pubmed`` → ``PubMed``)."""
    return DATASETS.label(name)


def missing_label(rate: float) -> str:
    """A missing-vector fraction as a percentage (``1.0`` → ``100%``)."""
    return f"{rate:.0%}"


def metric_label(metric: str) -> str:
    """The name of a summary metric (``rocauc`` → ``ROC-AUC``)."""
    return METRIC_NAMES.get(metric, metric)


__all__ = ["ModelConfig", "dataset_label", "metric_label", "missing_label", "model_label"]
