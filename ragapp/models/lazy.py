"""Load a heavy model once, on first use, however many threads ask for it at the same moment."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class LazyModel(Generic[T]):
    def __init__(self, load: Callable[[], T]) -> None:
        self._load = load
        self._value: T | None = None
        self._lock = threading.Lock()

    def get(self) -> T:
        if self._value is None:
            with self._lock:
                if self._value is None:  # another thread may have loaded it while we waited
                    self._value = self._load()
        return self._value
