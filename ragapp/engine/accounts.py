"""Signing in: names and passwords checked against the users file, failed attempts throttled and logged.

A name, or a client address, with ``max_failures`` failed sign-ins within ``window_s`` is refused for the rest
of that window, even with the right password (so guessing gains nothing). Every refusal says the same thing
whether the name exists or not, and costs the same bcrypt check (``UserStore.verify``), so error messages and
timing name no users.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable

from ragapp.config import AuthSettings
from ragapp.core.access import Actor
from ragapp.core.errors import LoginRefused
from ragapp.store.users import UserStore

log = logging.getLogger(__name__)

WRONG = "Wrong name or password."


class LoginThrottle:
    """Failed sign-ins per key (a name, a client address) in a sliding window."""

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


class Accounts:
    def __init__(self, store: UserStore, settings: AuthSettings, clock: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self._throttle = LoginThrottle(settings.max_failed_logins, settings.lockout_s, clock)

    def login(self, name: str, password: str, client: str = "") -> Actor:
        """The user signing in, or ``LoginRefused`` with a message that names no user."""
        name = name.strip()
        keys = (f"name:{name.lower()}", f"client:{client}")
        wait = self._throttle.wait_s(*keys)
        if wait > 0:
            log.warning("sign-in refused (throttled) for %r from %s", name, client or "?")
            raise LoginRefused(f"Too many failed sign-ins; try again in {wait:.0f} s.")
        record = self.store.verify(name, password)
        if record is None:
            self._throttle.failed(*keys)
            log.warning("failed sign-in for %r from %s", name, client or "?")
            raise LoginRefused(WRONG)
        self._throttle.succeeded(keys[0])
        log.info("%s signed in from %s", name, client or "?")
        return record.actor
