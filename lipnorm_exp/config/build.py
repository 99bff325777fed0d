"""Objects built from config groups: the one place where group keys become keyword arguments."""

import copy
from typing import TYPE_CHECKING, Any, cast

from omegaconf import DictConfig, ListConfig, OmegaConf

from lipnorm_exp.config.schema import unread_model_keys
from lipnorm_exp.models import MODELS

if TYPE_CHECKING:
    from lipnorm_exp.models.base import DepthwiseGNN

__all__ = ["build_model"]


def build_model(
    model: DictConfig, norm: DictConfig, in_channels: int, out_channels: int
) -> "DepthwiseGNN":
    """The model named ``model.name``, its keys and the ``norm`` group's as keyword arguments.

    Every key of the ``model`` group but ``name`` is a keyword argument of the model class
    (``depth=10, hidden=64, ...``), except those it does not read (`unread_model_keys`: the
    attention keys a protocol sets for every model); ``norm.name`` is its ``norm`` and the other
    keys of the ``norm`` group its ``norm_options``.
    """
    options = cast(dict[str, Any], OmegaConf.to_container(model, resolve=True))
    norm_options = cast(dict[str, Any], OmegaConf.to_container(norm, resolve=True))
    name, norm_name = options.pop("name"), norm_options.pop("name")
    ignored = unread_model_keys(name)
    keywords = {key: value for key, value in options.items() if key not in ignored}
    return MODELS.get(name)(
        in_channels, out_channels, norm=norm_name, norm_options=norm_options, **keywords
    )


def member_configs(cfg: DictConfig) -> list[DictConfig]:
    """The configs of ``cfg``'s runs: one per seed of a seed list, or ``cfg`` itself."""
    if not isinstance(cfg.seed, ListConfig):
        return [cfg]
    members = []
    for seed in cfg.seed:
        member = copy.deepcopy(cfg)
        member.seed = seed
        members.append(member)
    return members
