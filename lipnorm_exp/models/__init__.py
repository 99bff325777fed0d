"""Models by config name (``model.name``): one class per module, imported when first used.

`MODELS` names each model's class where it is defined; the class (and torch with it) is imported
when a run builds it, so the command line checks a config, and says its keys, without torch
(``tests/models/test_models.py`` checks that every model class of the package is listed). Models
take typed keyword arguments; `lipnorm_exp.config.build_model` builds one from the ``model`` and
``norm`` config groups.
"""

from typing import TYPE_CHECKING

from lipnorm_exp.util.registry import Registry

if TYPE_CHECKING:
    from lipnorm_exp.models.base import DepthwiseGNN

__all__ = ["ACTIVATIONS", "MODELS"]

MODELS: "Registry[type[DepthwiseGNN]]" = Registry(
    "model.name",
    {
        "gat": "lipnorm_exp.models.gat.GAT",
        "gatv2": "lipnorm_exp.models.gatv2.GATv2",
        "gcn": "lipnorm_exp.models.gcn.GCN",
        "gcnii": "lipnorm_exp.models.gcnii.GCNII",
        "ggnn": "lipnorm_exp.models.ggnn.GGNN",
        "gin": "lipnorm_exp.models.gin.GIN",
        "gt": "lipnorm_exp.models.gt.GT",
    },
)

#: ``model.activation`` → the ``torch.nn`` module applied after each graph layer
ACTIVATIONS = {"elu": "ELU", "relu": "ReLU", "none": "Identity"}
