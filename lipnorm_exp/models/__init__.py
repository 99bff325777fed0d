"""Models by config name (``model.name``): one class per file, registered on import."""

from lipnorm_exp.models import gat, gatv2, gcn, gcnii, ggnn, gin, gt  # noqa: F401
from lipnorm_exp.models.base import MODELS, DepthwiseGNN, build_model

__all__ = ["MODELS", "DepthwiseGNN", "build_model"]
