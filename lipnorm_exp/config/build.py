"""Objects built from config groups: the one place where group keys become keyword arguments."""

from typing import get_type_hints

from omegaconf import DictConfig, OmegaConf

from lipnorm_exp.config import schema
from lipnorm_exp.constraints import may_be_absent
from lipnorm_exp.models import MODELS, DepthwiseGNN

__all__ = ["build_model"]


def build_model(
    model: DictConfig, norm: DictConfig, in_channels: int, out_channels: int
) -> DepthwiseGNN:
    """The model named ``model.name``, its keys and the ``norm`` group's as keyword arguments.

    Every key of the ``model`` group but ``name`` is a keyword argument of the model class
    (``depth=10, hidden=64, ...``), except the keys its schema marks as ignored (the attention
    keys a protocol sets for every model); ``norm.name`` is its ``norm`` and the other keys of
    the ``norm`` group its ``norm_options``.
    """
    options = OmegaConf.to_container(model, resolve=True)
    norm_options = OmegaConf.to_container(norm, resolve=True)
    name, norm_name = options.pop("name"), norm_options.pop("name")
    hints = get_type_hints(schema.MODELS[name], include_extras=True)
    ignored = {key for key, hint in hints.items() if may_be_absent(hint)}
    keywords = {key: value for key, value in options.items() if key not in ignored}
    return MODELS.get(name)(
        in_channels, out_channels, norm=norm_name, norm_options=norm_options, **keywords
    )
