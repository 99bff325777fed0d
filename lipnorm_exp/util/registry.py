"""Name → object registries for datasets, models and normalisations."""

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from lipnorm_exp.util.errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    """A mapping from short config names to objects, filled by a decorator.

    Args:
        key (str): the config key whose value is looked up here (``"model.name"``); it is
            named in the error for an unknown value.
    """

    def __init__(self, key: str):
        self.key = key
        self._entries: dict[str, T] = {}
        self._labels: dict[str, str] = {}

    def register(self, name: str, label: str | None = None) -> Callable[[T], T]:
        """Decorator that files an object under ``name``; a name is taken once only.

        ``label`` is the name's display spelling (``ogbn_arxiv`` → ``ogbn-arxiv``), where
        the object itself has none.
        """

        def add(obj: T) -> T:
            if name in self._entries:
                raise ValueError(f"{self.key} '{name}' is registered twice")
            self._entries[name] = obj
            if label is not None:
                self._labels[name] = label
            return obj

        return add

    def get(self, name: str) -> T:
        """The object filed under ``name``, or a :class:`ConfigError` listing the names."""
        if name not in self._entries:
            raise ConfigError(f"{self.key}: unknown value '{name}'; allowed: {', '.join(self)}")
        return self._entries[name]

    def label(self, name: str) -> str:
        """The display spelling of ``name`` given at registration, else ``name`` itself."""
        return self._labels.get(name, name)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))
