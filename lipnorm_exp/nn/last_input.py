"""What a layer derived from its last few input tensors, reused while a tensor is unchanged.

A layer called again and again on one ``edge_index`` tensor (every epoch of a run) checks it and
replaces its self-loops once; one called on a few tensors in turn (mini-batches of a few shapes,
each shape's graph shared by its batches, and an evaluation graph) does so once per tensor. Each
layer keeps its own `LastInput`, so nothing is kept at module level, and holds the inputs
only weakly: a tensor is freed as soon as its owner drops it, and a tensor changed in place since
(another ``_version``) is not taken for it.
"""

import weakref
from collections.abc import Hashable
from typing import Any, NamedTuple

from torch import Tensor

__all__ = ["LastInput"]

#: how many inputs a `LastInput` remembers (the most recent ones)
REMEMBERED = 4


class _Kept(NamedTuple):
    source: weakref.ref
    version: int
    key: Hashable
    value: Any
    value_version: int


def _alive_and_not(kept: Tensor | None, source: Tensor) -> bool:
    """Whether a kept input still lives and is another tensor than ``source`` (by identity)."""
    return kept is not None and kept is not source


class LastInput:
    """The last few input tensors of a layer (held weakly), a key each was used with, and results.

    A tensor result is reused only while it too is unchanged. Copies (``copy.deepcopy``,
    pickling) start empty.

    Args:
        remembered: how many inputs are kept, the most recent ones. (default:
            `REMEMBERED`)
    """

    def __init__(self, remembered: int = REMEMBERED) -> None:
        self.remembered = remembered
        self._kept: list[_Kept] = []

    def get(self, source: Tensor, key: Hashable) -> Any:
        """The result kept for this very tensor, unchanged, and ``key``; else ``None``."""
        for kept in self._kept:
            if kept.source() is not source:
                continue
            if source._version != kept.version or key != kept.key:
                return None
            if isinstance(kept.value, Tensor) and kept.value._version != kept.value_version:
                return None
            return kept.value
        return None

    def keep(self, source: Tensor, key: Hashable, value: Any) -> None:
        """Remember ``value`` as the result for ``source`` (as it is now) and ``key``.

        It replaces what was kept for ``source``; the oldest input is forgotten beyond
        `remembered`.
        """
        version = value._version if isinstance(value, Tensor) else -1
        others = [kept for kept in self._kept if _alive_and_not(kept.source(), source)]
        kept = _Kept(weakref.ref(source), source._version, key, value, version)
        self._kept = [kept, *others][: self.remembered]

    def __len__(self) -> int:
        """How many inputs it holds that still live."""
        return sum(kept.source() is not None for kept in self._kept)

    def __getstate__(self) -> dict[str, Any]:
        return {"remembered": self.remembered}

    def __setstate__(self, state: dict[str, Any]) -> None:
        LastInput.__init__(self, state.get("remembered", REMEMBERED))
