"""Turn one request into a trace: wrap the engine's work so each request leaves one in the store.

The recorder sits between the engine and whoever consumes its events: it passes every event through
unchanged and, on the side, hands them to a ``TraceBuilder``. Parts below the event stream report through
``ragapp.tracing.context``: every retrieval (with each channel's hits, the fused candidates and their rerank
scores) and every model call (exact messages, completion, token counts). When the request ends, however it
ends, the finished trace goes to the store, which writes it on its own thread.

Recording must never break or slow a request: a failure to build or save a trace is logged, never raised.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from ragapp.core.events import EngineEvent, TraceEvent
from ragapp.core.types import IngestProgress, IngestResult
from ragapp.tracing.builder import TraceBuilder
from ragapp.tracing.context import CURRENT
from ragapp.tracing.ingest import IngestPhases

if TYPE_CHECKING:
    from ragapp.tracing.store import TraceStore

log = logging.getLogger(__name__)


class TraceRecorder:
    """Wraps requests so each leaves a trace in ``store`` (None or ``enabled=False``: events pass untouched)."""

    def __init__(self, store: TraceStore | None, enabled: bool = True) -> None:
        self.store = store
        self.enabled = enabled and store is not None

    def chat(self, events: Iterator[EngineEvent], *, owner: str, question: str, mode: str) -> Iterator[EngineEvent]:
        """``events`` unchanged, recorded on the side. Each step runs in the trace's own context, so whatever
        thread the consumer pulls from, the parts below report to this request and no other."""
        if not self.enabled:
            yield from events
            return
        builder = TraceBuilder(owner, "chat", question, mode)
        ctx = contextvars.copy_context()
        ctx.run(CURRENT.set, builder)
        outcome: tuple[str | None, str | None] = ("cancelled", None)
        try:
            yield TraceEvent(builder.trace.id)  # for feedback on this answer, before anything else is shown
            while True:
                try:
                    event = ctx.run(next, events)
                except StopIteration:
                    break
                builder.on(event)
                yield event
            outcome = (None, None)
        except GeneratorExit:  # the consumer stopped listening (the user left): keep what happened so far,
            close = getattr(events, "close", None)  # and let the engine clean up now, inside this trace
            if close is not None:
                ctx.run(close)
            raise
        except Exception as exc:
            outcome = ("failed", f"{type(exc).__name__}: {exc}")
            raise
        finally:
            self._save(builder, *outcome)

    def ingest(
        self,
        run: Callable[[Callable[[IngestProgress], None]], list[IngestResult]],
        *,
        owner: str,
        files: Sequence[str],
    ) -> list[IngestResult]:
        """Run an ingestion (``run(progress)``) and record one span per file, with its phases."""
        if not self.enabled:
            return run(lambda _update: None)
        builder = TraceBuilder(owner, "ingest", ", ".join(files)[:300], "ingest")
        phases = IngestPhases(builder)
        error: str | None = None
        ctx = contextvars.copy_context()
        ctx.run(CURRENT.set, builder)
        try:
            results = ctx.run(run, phases.progress)
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            phases.done()
            if error is None:
                builder.ingested(results)
            self._save(builder, "failed" if error else None, error)
        return results

    def _save(self, builder: TraceBuilder, status: str | None, error: str | None) -> None:
        try:
            trace = builder.finish(status, error)
            if self.store is not None:
                self.store.save(trace)
        except Exception:
            log.warning("could not save a trace; the request was not affected", exc_info=True)
