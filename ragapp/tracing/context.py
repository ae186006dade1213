"""The trace a piece of work belongs to, found without passing it through every call.

The recorder runs each step of a request inside its own ``contextvars.Context`` holding the trace being built;
parts deep inside (the retrieval pipeline, the LLM wrapper) report to whatever ``current()`` returns, and
report nothing when no request is being traced (evaluations, tests, warm-up). Work handed to a thread pool
keeps the trace by being submitted through ``in_context``.

Reporting never raises: a recorder bug costs a trace, never an answer.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable
from typing import Protocol, TypeVar

from ragapp.core.types import LLMCall, RetrievalResult

log = logging.getLogger(__name__)
T = TypeVar("T")


class Observer(Protocol):
    def retrieval(self, result: RetrievalResult, seconds: float) -> None: ...

    def llm_call(self, call: LLMCall, started: float) -> None: ...

    def library_span(self, name: str, started: float, seconds: float, error: str | None) -> None: ...


CURRENT: contextvars.ContextVar[Observer | None] = contextvars.ContextVar("ragapp_trace", default=None)


def current() -> Observer | None:
    return CURRENT.get()


def report(action: Callable[[Observer], None]) -> None:
    """Tell the current trace something; a no-op without one, and never an exception."""
    observer = CURRENT.get()
    if observer is None:
        return
    try:
        action(observer)
    except Exception:
        log.warning("trace recording failed; the request goes on", exc_info=True)


def in_context(work: Callable[[], T]) -> Callable[[], T]:
    """``work`` bound to the caller's context, so a pool thread reports to the caller's trace."""
    ctx = contextvars.copy_context()
    return lambda: ctx.run(work)
