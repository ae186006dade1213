"""First come, first served access to one model, with each waiting call told its place in line.

A local model answers one call at a time (one llama.cpp context, two cores): the others wait. A plain lock
would let them wait blind and in any order; this queue serves them in arrival order and reports each waiting
call's position to whoever listens in that call's context (``listen``), so the app can show "1 answer ahead
of yours" instead of a frozen spinner.
"""

from __future__ import annotations

import contextvars
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Generic, TypeVar

from ragapp.models.pool import STEPS

T = TypeVar("T")

WaitListener = Callable[[int], None]

# Set by the code that runs a model call (see ``stream_within``): it hears ``ahead`` (calls before this one,
# the one being served included) each time it changes, and 0 when this call's turn comes after a wait.
_listener: contextvars.ContextVar[WaitListener | None] = contextvars.ContextVar("model_wait_listener", default=None)


@contextmanager
def listen(listener: WaitListener) -> Iterator[None]:
    """Report the waits of the model calls made inside this block (in this context) to ``listener``."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


class ModelQueue:
    """A FIFO lock: ``acquire`` waits behind the calls that came first; ``release`` lets the next one in."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._line: deque[object] = deque()  # the first ticket holds the model; the others wait in order

    def waiting(self) -> int:
        """Calls in line behind the one being served."""
        with self._changed:
            return max(0, len(self._line) - 1)

    def acquire(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` seconds) for this call's turn; False when time ran out (it leaves the line)."""
        ticket = object()
        listener = _listener.get()
        deadline = time.monotonic() + timeout
        with self._changed:
            self._line.append(ticket)
            told: int | None = None
            while self._line[0] is not ticket:
                ahead = self._line.index(ticket)
                if ahead != told and listener is not None:
                    listener(ahead)
                told = ahead
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._line.remove(ticket)
                    self._changed.notify_all()  # the ones behind move up
                    return False
                self._changed.wait(remaining)
        if told is not None and listener is not None:
            listener(0)
        return True

    def release(self) -> None:
        with self._changed:
            self._line.popleft()
            self._changed.notify_all()


_DONE = object()


def run_observed(call: Callable[[], T]) -> Iterator[int | Outcome[T]]:
    """Run ``call`` (which may wait for the model) on a worker of ``STEPS``, yielding each ``ahead`` its model
    calls hear while they wait in line, then its ``Outcome``. The worker runs in a copy of the caller's context,
    so what ``call`` reports (traces) still reaches the caller's request. The worker starts at once, before the
    first item is asked for: the caller may do other work meanwhile (the pipeline searches while routing's
    model call runs) and read the items after."""
    heard: queue.Queue[object] = queue.Queue()
    outcome: Outcome[T] = Outcome()

    def work() -> None:
        with listen(heard.put):
            try:
                outcome.value = call()
            except BaseException as exc:  # raised again in the caller's thread
                outcome.error = exc
        heard.put(_DONE)

    STEPS.run(work)
    return _observed(heard, outcome)


def _observed(heard: queue.Queue[object], outcome: Outcome[T]) -> Iterator[int | Outcome[T]]:
    while (item := heard.get()) is not _DONE:
        yield int(item)  # type: ignore[call-overload]
    yield outcome


@dataclass
class Outcome(Generic[T]):
    value: T | None = None
    error: BaseException | None = None

    def get(self) -> T:
        if self.error is not None:
            raise self.error
        return self.value  # type: ignore[return-value]
