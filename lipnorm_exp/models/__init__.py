"""Models by config name (``model.name``): one class per module, registered on import.

Every module of this package is imported here, so a model's module registers it
(``@MODELS.register("<name>")``) by being in the package: nothing else lists the models. Models
take typed keyword arguments; :func:`lipnorm_exp.config.build_model` builds one from the
``model`` and ``norm`` config groups.
"""

import importlib
import pkgutil

from lipnorm_exp.models.base import MODELS, DepthwiseGNN

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["MODELS", "DepthwiseGNN"]
