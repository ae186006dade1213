"""Failed sign-ins counted per key (a name, a client address) in a sliding window."""

from __future__ import annotations

import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable


class LoginThrottle:
    """A key with ``max_failures`` failures within ``window_s`` waits out the rest of that window."""

    def __init__(self, max_failures: int, window_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._max = max_failures
        self._window = window_s
        self._clock = clock
        self._failures: dict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def wait_s(self, *keys: str) -> float:
        """Seconds until ``keys`` may try again (0: now)."""
        now = self._clock()
        with self._lock:
            waits = [self._wait(key, now) for key in keys]
        return max(waits, default=0.0)

    def failed(self, *keys: str) -> None:
        now = self._clock()
        with self._lock:
            for key in keys:
                self._failures[key].append(now)

    def succeeded(self, name_key: str) -> None:
        with self._lock:
            self._failures.pop(name_key, None)

    def _wait(self, key: str, now: float) -> float:
        times = self._failures.get(key)
        if not times:
            return 0.0
        while times and now - times[0] >= self._window:
            times.popleft()
        if len(times) < self._max:
            return 0.0
        return self._window - (now - times[-self._max])
