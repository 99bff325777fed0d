"""Every key the schema knows, and the closest of them to a mistyped one.

The keys are walked from `Config`: a group's keys are those
of every option of it (``model.beta`` is a key of ``model`` through ``gt``), so a typo is
matched against what some composition accepts.
"""

import difflib
from dataclasses import fields, is_dataclass
from functools import cache
from typing import cast, get_type_hints

from lipnorm_exp.config.schema import Config
from lipnorm_exp.util.constraints import ByName, may_be_absent, split

__all__ = ["CUTOFF", "closest_keys", "known_keys", "options_with_key"]

#: how alike (difflib's ratio) a known key must be to be suggested: ``model.depth`` for
#: ``model.depht`` (0.91), not ``model.dropout`` (0.75)
CUTOFF = 0.8


def _keys(schema: type, prefix: str) -> list[str]:
    found = []
    hints = get_type_hints(schema, include_extras=True)
    for field in fields(schema):
        key = f"{prefix}{field.name}"
        found.append(key)
        base, extras = split(hints[field.name])
        options = [
            s for extra in extras if isinstance(extra, ByName) for s in extra.schemas.values()
        ]
        for option in ([base] if is_dataclass(base) else []) + [s for s in options if s]:
            found += _keys(cast(type, option), f"{key}.")  # a schema: a dataclass
    return found


@cache
def known_keys() -> tuple[str, ...]:
    """Every dotted key of the schema (``seed``, ``model``, ``model.depth``, ...), sorted."""
    return tuple(sorted(set(_keys(Config, ""))))


def closest_keys(key: str, count: int = 3) -> list[str]:
    """Up to ``count`` known keys closest to ``key`` (by `difflib`'s ratio), best first."""
    return difflib.get_close_matches(key, known_keys(), n=count, cutoff=CUTOFF)


def _reads(schema: type | None, field_name: str) -> bool:
    """Whether an option of schema ``schema`` reads its key ``field_name`` (not `Absent`)."""
    if schema is None:
        return False
    hints = get_type_hints(schema, include_extras=True)
    return field_name in hints and not may_be_absent(hints[field_name])


def options_with_key(key: str) -> tuple[str, list[str]] | None:
    """The group of ``key`` and those of its options that read it, or ``None``.

    ``("model", ["gat", "gatv2", "gt"])`` for ``model.message_path``: a key that only some
    options of a group read (`ByName`; a key its schema marks `Absent` is not read). ``None``
    where ``key`` is not a key of such a group, or every option reads it.
    """
    group, _, field_name = key.partition(".")
    hints = get_type_hints(Config, include_extras=True)
    if group not in hints or not field_name or "." in field_name:
        return None
    schemas = next((e.schemas for e in split(hints[group])[1] if isinstance(e, ByName)), None)
    if schemas is None:
        return None
    having = [name for name, schema in schemas.items() if _reads(schema, field_name)]
    return (group, having) if having and len(having) < len(schemas) else None
