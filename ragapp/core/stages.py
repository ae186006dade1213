"""Timed stages for the pipelines that yield events (the workflow, the answer writer, the agent).

A stage says it started, then finished or failed, with the seconds between::

    stage = yield from begin("rewrite")
    plan = ...
    if plan.error is not None:
        yield stage.failed(plan.error)
    else:
        yield stage.finished({"question": plan.standalone})
"""

from __future__ import annotations

import time
from collections.abc import Generator, Mapping
from typing import Any

from ragapp.core.events import StageEvent
from ragapp.core.said import Said

# The key of the model's P(yes) in the "verify" stage's detail: the writer sets it, the UI and the replay read it.
VERIFIED_YES = "yes"


class Stage:
    """A stage under way: ``finished`` and ``failed`` give its closing event, timed from its start."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._start = time.perf_counter()

    @property
    def seconds(self) -> float:
        """Seconds since the stage started."""
        return time.perf_counter() - self._start

    def finished(self, detail: Mapping[str, Any] | None = None, error: str | None = None) -> StageEvent:
        """The stage ended with a result; ``error`` notes a problem it worked around (a fallback taken)."""
        return StageEvent(self.name, "finished", self.seconds, dict(detail or {}), error)

    def failed(
        self, error: str | None, detail: Mapping[str, Any] | None = None, said: Said | None = None
    ) -> StageEvent:
        """The stage failed: ``error`` in English, ``said`` the same as a record for the page."""
        return StageEvent(self.name, "failed", self.seconds, dict(detail or {}), error, said)


def begin(name: str, detail: Mapping[str, Any] | None = None) -> Generator[StageEvent, None, Stage]:
    """Yield the stage's started event, then return the ``Stage`` that times it. The clock starts once the
    consumer has taken the started event, so the time is the stage's own, not the consumer's."""
    yield StageEvent(name, "started", detail=dict(detail or {}))
    return Stage(name)
