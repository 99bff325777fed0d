"""Name → object registries for datasets, models and normalisations."""

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Generic, TypeVar

from lipnorm_exp.util.errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    """A mapping from short config names to objects, filled by a decorator or by a table.

    A table names each object by where it is defined (``"lipnorm_exp.models.gcn.GCN"``) and its
    module is imported when the object is first asked for (`get`): the registry knows its
    names, and a config can be checked against them, without importing what they name (torch,
    for a model or a dataset loader).

    Args:
        key (str): the config key whose value is looked up here (``"model.name"``); it is
            named in the error for an unknown value.
        table (Mapping[str, str]): name → dotted path of the object (module, then attribute),
            imported on first use.
        labels (Mapping[str, str]): name → display spelling (``ogbn_arxiv`` → ``ogbn-arxiv``),
            where the object itself has none.
    """

    def __init__(
        self,
        key: str,
        table: Mapping[str, str] | None = None,
        labels: Mapping[str, str] | None = None,
    ):
        self.key = key
        self._entries: dict[str, T] = {}
        self._table = dict(table or {})
        self._labels = dict(labels or {})

    def register(self, name: str, label: str | None = None) -> Callable[[T], T]:
        """Decorator that files an object under ``name``; a name is taken once only.

        ``label`` is the name's display spelling, where the object itself has none.
        """

        def add(obj: T) -> T:
            if name in self:
                raise ValueError(f"{self.key} '{name}' is registered twice")
            self._entries[name] = obj
            if label is not None:
                self._labels[name] = label
            return obj

        return add

    def get(self, name: str) -> T:
        """The object filed under ``name``, or a `ConfigError` listing the names."""
        if name not in self:
            raise ConfigError(f"{self.key}: unknown value '{name}'; allowed: {', '.join(self)}")
        if name not in self._entries:
            module, attribute = self._table[name].rsplit(".", 1)
            self._entries[name] = getattr(importlib.import_module(module), attribute)
        return self._entries[name]

    def where(self, name: str) -> str:
        """The dotted path of the object ``name`` names in the table (a ``KeyError`` if none)."""
        return self._table[name]

    def label(self, name: str) -> str:
        """The display spelling of ``name`` given at registration, else ``name`` itself."""
        return self._labels.get(name, name)

    def __contains__(self, name: object) -> bool:
        return name in self._entries or name in self._table

    def __iter__(self) -> Iterator[str]:
        return iter(sorted({*self._entries, *self._table}))
