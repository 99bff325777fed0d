"""What a layer derived from the last tensor it was given, reused while that tensor is unchanged.

A layer called again and again on one ``edge_index`` tensor (every epoch of a run) checks it and
replaces its self-loops once. Each layer keeps its own :class:`LastInput`, so nothing is kept at
module level, and holds the input only weakly: the tensor is freed as soon as its owner drops
it, and a tensor changed in place since (another ``_version``) is not taken for it.
"""

import weakref
from collections.abc import Hashable
from typing import Any

from torch import Tensor

__all__ = ["LastInput"]


class LastInput:
    """The last input tensor of a layer (held weakly), a key it was used with, and the result.

    A tensor result is reused only while it too is unchanged. Copies (``copy.deepcopy``,
    pickling) start empty.
    """

    def __init__(self) -> None:
        self._source: weakref.ref | None = None
        self._version = -1
        self._key: Hashable = None
        self._value: Any = None
        self._value_version = -1

    def get(self, source: Tensor, key: Hashable) -> Any:
        """The result kept for this very tensor, unchanged, and ``key``; else ``None``."""
        if self._source is None or self._source() is not source:
            return None
        if source._version != self._version or key != self._key:
            return None
        if isinstance(self._value, Tensor) and self._value._version != self._value_version:
            return None
        return self._value

    def keep(self, source: Tensor, key: Hashable, value: Any) -> None:
        """Remember ``value`` as the result for ``source`` (as it is now) and ``key``."""
        self._source, self._version, self._key = weakref.ref(source), source._version, key
        self._value = value
        self._value_version = value._version if isinstance(value, Tensor) else -1

    def __getstate__(self) -> dict[str, Any]:
        return {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        LastInput.__init__(self)
