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
from lipnorm_exp.util.constraints import ByName, split

__all__ = ["CUTOFF", "closest_keys", "known_keys"]

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
        options = [extra.schemas.values() for extra in extras if isinstance(extra, ByName)]
        for option in [base] if is_dataclass(base) else [s for group in options for s in group]:
            found += _keys(cast(type, option), f"{key}.")  # a schema: a dataclass
    return found


@cache
def known_keys() -> tuple[str, ...]:
    """Every dotted key of the schema (``seed``, ``model``, ``model.depth``, ...), sorted."""
    return tuple(sorted(set(_keys(Config, ""))))


def closest_keys(key: str, count: int = 3) -> list[str]:
    """Up to ``count`` known keys closest to ``key`` (by `difflib`'s ratio), best first."""
    return difflib.get_close_matches(key, known_keys(), n=count, cutoff=CUTOFF)
