"""``validate(cfg)``: a composed config checked against the schema before anything runs.

Every key is resolved on its own (so an interpolation that fails names its key), checked
against its field of `lipnorm_exp.config.schema` without being converted, and refused when
the group has no such field; then the rules between keys (`lipnorm_exp.config.rules`) run.
The first problem raises a `ConfigError` whose one line names the
key, the value and what is allowed.
"""

from dataclasses import fields, is_dataclass
from typing import Any, cast, get_type_hints

from omegaconf import DictConfig, ListConfig, OmegaConf, open_dict
from omegaconf.errors import OmegaConfBaseException

from lipnorm_exp.config.rules import check_rules
from lipnorm_exp.config.schema import Config
from lipnorm_exp.util.constraints import ByName, describe, fits, may_be_absent, show, split
from lipnorm_exp.util.errors import ConfigError

__all__ = ["LOCAL_GROUP", "check_keys", "drop_empty_local", "group_schema", "validate"]

#: the group of one's own config file (``configs/config.yaml``: ``optional local: default``)
LOCAL_GROUP = "local"


def check_keys(cfg: DictConfig) -> dict[str, Any]:
    """Check every key of ``cfg`` (a composed config without Hydra's own keys) on its own.

    Returns:
        dict: the config resolved into plain containers.

    Raises:
        ConfigError: the first key that is unknown, missing, unresolvable, of the wrong type or
            out of its limits.
    """
    return _check_group(cfg, Config, "", "the config")


def drop_empty_local(cfg: DictConfig) -> None:
    """Remove the ``local`` key that an empty personal file leaves in ``cfg``.

    A ``configs/local/default.yaml`` without keys (empty, or comments only) sets nothing, so its
    runs are those of the defaults, under the same run ids.
    """
    if LOCAL_GROUP in cfg and not cfg[LOCAL_GROUP]:
        with open_dict(cfg):
            del cfg[LOCAL_GROUP]


def validate(cfg: DictConfig, machine: bool = True) -> dict[str, Any]:
    """`check_keys`, then the rules between keys (`lipnorm_exp.config.rules`).

    ``machine=False`` leaves out the rules of what this machine can run (they import torch):
    for runs whose finished records stand for them.

    Returns:
        dict: the config resolved into plain containers.

    Raises:
        ConfigError: the first key or rule that fails.
    """
    resolved = check_keys(cfg)
    check_rules(resolved, machine)
    return resolved


def _resolve(node: DictConfig, name: str, key: str) -> Any:
    """``node[name]`` resolved into plain Python values."""
    try:
        value = node[name]
        if isinstance(value, DictConfig | ListConfig):
            return OmegaConf.to_container(value, resolve=True)
        return value
    except OmegaConfBaseException as error:
        first_line = str(error).strip().splitlines()[0]
        raise ConfigError(f"{key} cannot be resolved: {first_line}") from None


def group_schema(node: DictConfig, key: str, annotation: Any) -> tuple[type, str]:
    """The dataclass a group's keys are checked against, and how the group is named."""
    base, extras = split(annotation)
    by_name = next((extra for extra in extras if isinstance(extra, ByName)), None)
    if by_name is None:
        return base, key
    name: Any = _resolve(node, "name", f"{key}.name") if "name" in node else None
    if name not in by_name.schemas:
        options = ", ".join(sorted(by_name.schemas))
        raise ConfigError(f"{key}.name must be one of {options}, got {show(name, str)}")
    return by_name.schemas[name], f"{key} {name}"


def _is_group(annotation: Any) -> bool:
    base, extras = split(annotation)
    return is_dataclass(base) or any(isinstance(extra, ByName) for extra in extras)


def _check_group(node: DictConfig, schema: type, prefix: str, what: str) -> dict[str, Any]:
    """The keys of ``node`` checked against the fields of ``schema``, resolved."""
    hints = get_type_hints(schema, include_extras=True)
    names = [field.name for field in fields(schema)]
    unknown: list[Any] = [key for key in node.keys() if key not in hints]
    if not prefix and LOCAL_GROUP in unknown and not node[LOCAL_GROUP]:  # `drop_empty_local`
        unknown.remove(LOCAL_GROUP)
    if unknown == [LOCAL_GROUP] and not prefix:  # the personal file without its package line
        raise ConfigError(
            f"configs/{LOCAL_GROUP}/default.yaml sets its keys under {LOCAL_GROUP}. "
            "instead of at the top; allowed: `# @package _global_` as its first line"
        )
    if unknown:
        value = cast(dict[str, Any], OmegaConf.to_container(node, resolve=False))[unknown[0]]
        raise ConfigError(
            f"{prefix}{unknown[0]}={show(value)} is not a key of {what}; "
            f"allowed: {', '.join(sorted(names))}"
        )
    resolved: dict[str, Any] = {}
    for name in names:
        key, annotation = f"{prefix}{name}", hints[name]
        if name not in node:
            if may_be_absent(annotation):
                continue
            raise ConfigError(f"{key} is missing; it must be {describe(annotation)}")
        if _is_group(annotation):
            group = node[name]
            if not isinstance(group, DictConfig):
                raise ConfigError(f"{key} must be a group of keys, got {show(group)}")
            schema_of, group_name = group_schema(group, key, annotation)
            resolved[name] = _check_group(group, schema_of, f"{key}.", group_name)
            continue
        value = _resolve(node, name, key)
        if not fits(annotation, value):
            raise ConfigError(
                f"{key} must be {describe(annotation)}, got {show(value, annotation)}"
            )
        resolved[name] = value
    return resolved
