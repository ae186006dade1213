"""Small name -> factory registries for pluggable parts (embedders, LLMs, rerankers, parsers...).

Built-ins register themselves like add-ons would, so adding a backend is one new module plus one
``@REGISTRY.register("name")`` line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

from ragapp.core.errors import UnknownComponentError

F = TypeVar("F", bound=Callable[..., object])


class Registry(Generic[F]):
    """Maps names to factories; an unknown name lists the known ones."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._factories: dict[str, F] = {}

    def register(self, name: str) -> Callable[[F], F]:
        def decorator(factory: F) -> F:
            if name in self._factories:
                raise ValueError(f"{self.kind} {name!r} is registered twice")
            self._factories[name] = factory
            return factory

        return decorator

    def unregister(self, name: str) -> F:
        """Remove ``name`` and return its factory (an unknown name raises like ``get``)."""
        factory = self.get(name)
        del self._factories[name]
        return factory

    @contextmanager
    def registered(self, name: str, factory: F) -> Iterator[F]:
        """``factory`` under ``name`` for the length of a ``with`` block (tests, a plug-in tried out)."""
        self.register(name)(factory)
        try:
            yield factory
        finally:
            self._factories.pop(name, None)

    def get(self, name: str) -> F:
        try:
            return self._factories[name]
        except KeyError:
            known = ", ".join(sorted(self._factories)) or "none"
            raise UnknownComponentError(f"Unknown {self.kind} {name!r}. Known {self.kind}s: {known}.") from None

    def names(self) -> list[str]:
        return sorted(self._factories)

    def in_order(self) -> list[str]:
        """The names in the order they were registered (where order matters: enrichment steps)."""
        return list(self._factories)

    def __contains__(self, name: object) -> bool:
        return name in self._factories
