"""A record's config completed with the keys added to the configs since the record was made."""

from dataclasses import fields
from typing import get_type_hints

from omegaconf import DictConfig

from lipnorm_exp.config.schema import Config
from lipnorm_exp.config.validate import group_schema
from lipnorm_exp.records.identity import ADDED_KEYS

__all__ = ["with_added_keys"]


def with_added_keys(config: DictConfig) -> DictConfig:
    """A record's ``config`` with each key added since it was made, at its value before the key.

    A key of `ADDED_KEYS` is added to a group that lacks it
    where the group's schema has it (``dataset.feature_layout`` to a Planetoid dataset, not to
    TREES), so that the config composes the run the record made, as it made it.
    """
    hints = get_type_hints(Config, include_extras=True)
    for (group, key), before in ADDED_KEYS.items():
        node = config.get(group)
        if not isinstance(node, DictConfig) or key in node:
            continue
        schema, _ = group_schema(node, group, hints[group])
        if key in {field.name for field in fields(schema)}:
            node[key] = before
    return config
