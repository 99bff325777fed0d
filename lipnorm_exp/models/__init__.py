"""Models by config name (``model.name``): one class per file, registered on import.

Models take typed keyword arguments; :func:`lipnorm_exp.config.build_model` builds one from
the ``model`` and ``norm`` config groups.
"""

from lipnorm_exp.models import gat, gatv2, gcn, gcnii, ggnn, gin, gt  # noqa: F401
from lipnorm_exp.models.base import MODELS, DepthwiseGNN

__all__ = ["MODELS", "DepthwiseGNN"]
