"""What a config value may be: a type and its limits, checked without converting the value.

A schema field (`lipnorm_exp.config.schema`) is annotated with a Python type (``int``,
``float``, ``bool``, ``str``, ``list[...]``, ``dict[...]``, ``X | None``) and, through
``typing.Annotated``, with limits (`AtLeast`, `Between`, `OneOf`,
`Matches`, `Folder`) and the markers `MAY_BE_ABSENT` and `ByName`.

Values are checked as they are and never converted: the command line and the YAML files give
``1`` and ``1.0`` as different values, and a run's identity hashes them as they are. A ``float``
field takes integers too, and finite numbers only (no ``inf``, ``-inf`` or ``nan``); a boolean
is neither an integer nor a number, and only ``true`` and ``false`` are booleans (not ``no``,
``1`` or ``"false"``).
"""

import math
import re
import types
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

__all__ = [
    "MAY_BE_ABSENT",
    "NAME_MAX",
    "Dropout",
    "Fraction",
    "NonNegative",
    "NonNegativeNumber",
    "Positive",
    "PositiveNumber",
    "AtLeast",
    "Between",
    "ByName",
    "Folder",
    "Matches",
    "OneOf",
    "describe",
    "fits",
    "fits_type",
    "may_be_absent",
    "show",
    "split",
]


class _MayBeAbsent:
    """Marks a key that a config may leave out (set only by some protocols or presets)."""

    def __repr__(self) -> str:
        return "MAY_BE_ABSENT"


#: an ``Annotated`` marker: the key may be missing from the config
MAY_BE_ABSENT = _MayBeAbsent()
#: the longest name of a file or folder most file systems take, in bytes (a path's every part)
NAME_MAX = 255
#: a longer string is shown in a refusal by its start and its length
SHOWN_CHARACTERS = 80


@dataclass(frozen=True)
class ByName:
    """A group whose keys depend on its ``name``: the schema of each name."""

    schemas: Mapping[str, type]


@dataclass(frozen=True)
class AtLeast:
    """A number ``>= low`` (``> low`` when ``strict``)."""

    low: float
    strict: bool = False

    def __call__(self, value: Any) -> bool:
        """Whether ``value`` keeps within this limit."""
        return value > self.low if self.strict else value >= self.low

    def describe(self, kind: str) -> str:
        """``kind`` with this limit: ``an integer >= 1``."""
        return f"{kind} {'>' if self.strict else '>='} {_number(self.low)}"


@dataclass(frozen=True)
class Between:
    """A number in an interval; ``open_low`` / ``open_high`` leave out an end."""

    low: float
    high: float
    open_low: bool = False
    open_high: bool = False

    def __call__(self, value: Any) -> bool:
        """Whether ``value`` keeps within this limit."""
        above = value > self.low if self.open_low else value >= self.low
        below = value < self.high if self.open_high else value <= self.high
        return above and below

    def describe(self, kind: str) -> str:
        """``kind`` with this limit: ``a number in [0, 1)``."""
        left, right = "(" if self.open_low else "[", ")" if self.open_high else "]"
        return f"{kind} in {left}{_number(self.low)}, {_number(self.high)}{right}"


@dataclass(frozen=True)
class OneOf:
    """One of a set of names (a registry's keys, a tuple of options)."""

    names: tuple[str, ...]

    def __call__(self, value: Any) -> bool:
        """Whether ``value`` keeps within this limit."""
        return value in self.names

    def describe(self, kind: str) -> str:
        """``quick or paper``, or ``one of elu, relu, none``."""
        if len(self.names) == 2:
            return f"{self.names[0]} or {self.names[1]}"
        return f"one of {', '.join(self.names)}"


@dataclass(frozen=True)
class Matches:
    """A string matching ``pattern`` as a whole, described by ``text``."""

    pattern: str
    text: str

    def __call__(self, value: Any) -> bool:
        """Whether ``value`` keeps within this limit."""
        return re.fullmatch(self.pattern, value) is not None

    def describe(self, kind: str) -> str:
        """The description given."""
        return self.text


@dataclass(frozen=True)
class Folder:
    """A non-empty path that is a folder or can be made one (no file in the way).

    An empty path is refused: it would name the working folder without saying so.
    """

    def __call__(self, value: Any) -> bool:
        """Whether ``value`` keeps within this limit."""
        if not value.strip():
            return False
        path = Path(value).expanduser().absolute()
        if any(len(part.encode()) > NAME_MAX for part in path.parts):
            return False
        while not path.exists() and path != path.parent:
            path = path.parent
        return path.is_dir()

    def describe(self, kind: str) -> str:
        """What a folder path is."""
        return (
            f"a folder (a non-empty path with no file in the way, each of its names at most "
            f"{NAME_MAX} bytes)"
        )


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else str(value)


def split(annotation: Any) -> tuple[Any, tuple]:
    """``(type, extras)`` of an annotation: its type and what ``Annotated`` adds to it."""
    if get_origin(annotation) is Annotated:
        base, *extras = get_args(annotation)
        return base, tuple(extras)
    return annotation, ()


def _limits(extras: tuple) -> list:
    """The limits among ``extras`` (the markers left out)."""
    markers = (extra for extra in extras if extra is not MAY_BE_ABSENT)
    return [extra for extra in markers if not isinstance(extra, ByName)]


def may_be_absent(annotation: Any) -> bool:
    """Whether a field so annotated may be missing from the config."""
    return MAY_BE_ABSENT in split(annotation)[1]


def _is_union(base: Any) -> bool:
    return get_origin(base) in (Union, types.UnionType)


def fits_type(base: Any, value: Any) -> bool:
    """Whether ``value`` has the type ``base`` (limits aside), under the rules of the module."""
    if base is Any:
        return True
    if base is None or base is type(None):
        return value is None
    if _is_union(base):
        return any(fits_type(split(option)[0], value) for option in get_args(base))
    if base is bool:
        return type(value) is bool
    if base is int:
        return type(value) is int
    if base is float:
        return type(value) in (int, float) and math.isfinite(value)
    if base is str:
        return isinstance(value, str)
    origin = get_origin(base) or base
    if origin is list:
        (item,) = get_args(base) or (Any,)
        return isinstance(value, list) and all(fits(item, entry) for entry in value)
    if origin is dict:
        _, item = get_args(base) or (str, Any)
        return isinstance(value, dict) and all(fits(item, entry) for entry in value.values())
    raise TypeError(f"no rule for the type {base!r}")


def fits(annotation: Any, value: Any) -> bool:
    """Whether ``value`` has the type of ``annotation`` and keeps within its limits."""
    base, extras = split(annotation)
    if _is_union(base):
        return any(fits(option, value) for option in get_args(base))
    if not fits_type(base, value):
        return False
    return all(limit(value) for limit in _limits(extras))


_KINDS = {bool: "true or false", int: "an integer", float: "a finite number", str: "a string"}


def describe(annotation: Any) -> str:
    """What ``annotation`` allows, in words: ``null or an integer >= 1``."""
    base, extras = split(annotation)
    if _is_union(base):
        options = sorted(get_args(base), key=lambda option: option is not type(None))
        return " or ".join(describe(option) for option in options)
    if base is type(None):
        return "null"
    origin = get_origin(base) or base
    if origin is list:
        (item,) = get_args(base) or (Any,)
        text = "a list" if item is Any else f"a list (each item {describe(item)})"
    elif origin is dict:
        _, item = get_args(base) or (str, Any)
        text = "a mapping" if item is Any else f"a mapping (each value {describe(item)})"
    else:
        text = _KINDS.get(base, "anything")
    for limit in _limits(extras):
        text = limit.describe(text)
    return text


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number" if math.isfinite(value) else "not finite"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def show(value: Any, annotation: Any = Any) -> str:
    """``value`` as written on the command line, with its kind where its type does not fit.

    A value longer than `SHOWN_CHARACTERS` is shown by its start and its length.
    """
    if value is None:
        text = "null"
    elif isinstance(value, bool):
        text = str(value).lower()
    elif isinstance(value, str):
        text = value if value.strip() == value and value else repr(value)
    else:
        text = str(value)
    if len(text) > SHOWN_CHARACTERS:
        text = f"{text[: SHOWN_CHARACTERS // 2]}... ({len(text)} characters)"
    scalar = not isinstance(value, list | dict)
    if value is not None and scalar and not fits_type(split(annotation)[0], value):
        text += f" ({_kind_of(value)})"
    return text


#: the usual limits, by name
Positive = Annotated[int, AtLeast(1)]
NonNegative = Annotated[int, AtLeast(0)]
PositiveNumber = Annotated[float, AtLeast(0, strict=True)]
NonNegativeNumber = Annotated[float, AtLeast(0)]
Fraction = Annotated[float, Between(0, 1)]
Dropout = Annotated[float, Between(0, 1, open_high=True)]
