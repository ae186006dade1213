"""The trace of one request as it is built: a tree of timed spans plus what each step saw and decided.

``TraceBuilder`` turns engine events (stages become spans; rewrite, routing, agent steps, notices and the answer
are kept) and reports from below the event stream (retrievals, model calls, library spans) into one trace.
Every handler is guarded: the first failure is logged, the trace is marked ``recorder_error`` and recording of
that request goes on as best it can.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ragapp.core.events import (
    AgentStepEvent,
    AnswerEvent,
    CachedEvent,
    ClarifyEvent,
    EngineEvent,
    EvidenceEvent,
    EvidenceWithdrawnEvent,
    ExperienceEvent,
    MemoryEvent,
    ModeEvent,
    NoticeEvent,
    RetrievalEvent,
    RewriteEvent,
    RoutingEvent,
    StageEvent,
    WaitEvent,
)
from ragapp.core.serial import dump
from ragapp.core.turn import Turn
from ragapp.core.types import IngestResult, LLMCall, RetrievalResult, Said
from ragapp.tracing.model import (
    AnswerRecord,
    CitationRecord,
    ClarifyRecord,
    EvidenceRecord,
    IngestFileRecord,
    LLMCallRecord,
    RoutingRecord,
    Span,
    SupportRecord,
    Trace,
)
from ragapp.tracing.records import chunk_ref, leaf_record, retrieval_record

log = logging.getLogger(__name__)


class TraceBuilder:
    """The trace of one request, built in ``self.trace``. Thread-safe: tool threads report too."""

    def __init__(self, owner: str, kind: str, question: str, mode: str) -> None:
        self._t0 = time.perf_counter()
        self._lock = threading.RLock()
        self._open: list[int] = []  # ids of the spans still open, innermost last
        self.failures = 0
        self.trace = Trace(
            id=uuid.uuid4().hex[:16],
            owner=owner,
            kind=kind,
            started_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            question=question,
            mode=mode,
        )
        self.turn = Turn(question=question)  # the engine's events, folded
        self._root = self.open(kind, "request", {"question": question, "mode": mode})

    # -- spans ---------------------------------------------------------------------------------

    def now(self) -> float:
        return time.perf_counter() - self._t0

    def open(self, name: str, kind: str, attributes: dict[str, Any] | None = None, start: float | None = None) -> int:
        with self._lock:
            span = Span(
                id=len(self.trace.spans),
                parent=self._open[-1] if self._open else None,
                name=name,
                kind=kind,
                start_s=round(self.now() if start is None else start, 6),
                status="running",
                attributes=attributes or {},
            )
            self.trace.spans.append(span)
            self._open.append(span.id)
            return span.id

    def close(
        self,
        span_id: int,
        status: str = "ok",
        duration_s: float | None = None,
        error: str | None = None,
        attributes: dict[str, Any] | None = None,
    ) -> None:
        with self._lock:
            span = self.trace.spans[span_id]
            span.duration_s = round(duration_s if duration_s is not None else self.now() - span.start_s, 6)
            span.status = status
            span.error = error
            span.attributes.update(attributes or {})
            if span_id in self._open:  # children left open (a stage that never reported back) close with it
                for inner in self._open[self._open.index(span_id) + 1 :]:
                    self.close(inner, "unfinished")
                self._open.remove(span_id)
            if error:
                self.trace.errors.append(f"{span.name}: {error}")

    def leaf(self, name: str, kind: str, start: float, duration: float, attributes: dict[str, Any], **kw: Any) -> None:
        """A span whose start and length are already known (a channel, a model call)."""
        with self._lock:
            span_id = self.open(name, kind, attributes, start=start)
            self.close(span_id, duration_s=duration, **kw)

    def _find_open(self, name: str) -> int | None:
        for span_id in reversed(self._open):
            if self.trace.spans[span_id].name == name:
                return span_id
        return None

    # -- events from the engine ------------------------------------------------------------------

    def on(self, event: EngineEvent) -> None:
        """Record ``event``; never raises. The turn folds it; the trace keeps its own shape of what it adds."""
        try:
            with self._lock:
                self.turn.apply(event)
                handler = _HANDLERS.get(type(event))
                if handler is not None:
                    handler(self, event)
        except Exception:
            self._failed("event " + type(event).__name__)

    def _failed(self, what: str) -> None:
        self.failures += 1
        if self.failures == 1:
            log.warning("trace recording failed at %s; the request goes on", what, exc_info=True)
        self.trace.recorder_error = f"recording failed at {what}"

    def _stage(self, e: StageEvent) -> None:
        if e.status == "started":
            self.open(e.stage, "stage", dump(e.detail))
            return
        span_id = self._find_open(e.stage)
        if span_id is None:  # a stage that reports only its end
            start = self.now() - (e.duration_s or 0.0)
            span_id = self.open(e.stage, "stage", start=max(0.0, start))
        status = "failed" if e.status == "failed" else "ok"
        self.close(span_id, status, e.duration_s, e.error, dump(e.detail))

    def _wait(self, e: WaitEvent) -> None:
        """A queued step: how long it waited for the model and behind how many, on the span of the stage that
        waited (the innermost open one)."""
        stages = [i for i in self._open if self.trace.spans[i].kind == "stage"]
        if not stages:
            return
        attributes = self.trace.spans[stages[-1]].attributes
        if e.ahead > 0:
            attributes["queued behind"] = max(int(attributes.get("queued behind", 0)), e.ahead)
        elif "queued behind" in attributes and "queued s" not in attributes:  # its turn came
            attributes["queued s"] = round(e.seconds, 2)

    def _degraded(self, message: str, said: Sequence[Said] = ()) -> None:
        if message not in self.trace.degradations:
            self.trace.degradations.append(message)
        if said and message not in self.trace.degradations_said:
            self.trace.degradations_said[message] = list(said)

    def _agent_step(self, e: AgentStepEvent) -> None:
        name = f"tool {e.tool}"
        if e.status == "started":
            self.open(name, "tool", {"step": e.step, "arguments": dump(e.arguments), "thought": e.thought})
            return
        span_id = self._find_open(name)
        if span_id is None:
            span_id = self.open(name, "tool", {"step": e.step, "arguments": dump(e.arguments)})
        self.close(span_id, "failed" if e.status == "failed" else "ok", e.duration_s, e.error)
        ended = next(s for s in self.turn.agent_steps if s.step == e.step)  # with its start's arguments
        self.trace.agent_steps.append(replace(ended, arguments=dump(ended.arguments)))

    def _notice(self, e: NoticeEvent) -> None:
        self.trace.notices = self.turn.notices
        if e.level == "warning":
            self._degraded(e.message, e.said)

    def _context(self, e: RetrievalEvent) -> None:
        self.trace.context = [chunk_ref(c, scored=True) for c in self.turn.retrieved]
        for message in e.degraded:
            self._degraded(message)

    def _routing(self, e: RoutingEvent) -> None:
        intents, scores = [leaf_record(s) for s in e.intents], [leaf_record(s) for s in e.scores]
        record = RoutingRecord(
            e.question, e.action, e.reason, intents, scores, e.fit, list(e.also), e.fit_min, list(e.said)
        )
        self.trace.routing.append(record)

    def _clarify(self, e: ClarifyEvent) -> None:
        self.trace.clarify = ClarifyRecord(e.ambiguous, [leaf_record(c) for c in e.choices])

    def _mode(self, _e: ModeEvent) -> None:
        self.trace.mode, self.trace.mode_reason = self.turn.mode, self.turn.mode_reason

    def _evidence(self, e: EvidenceEvent) -> None:
        chunk = e.citation.chunk
        self.trace.evidence = EvidenceRecord(e.quote, e.citation.number, chunk.source, chunk.chunk_id)

    def _cached(self, e: CachedEvent) -> None:
        """The answer came from the answer cache: a span says so, with when it was first answered and the trace
        of that request (the model calls and searches behind the answer are there, not here)."""
        attributes: dict[str, Any] = {"hit": True, "answered_at": e.answered_at, "answered in trace": e.trace_id}
        if e.question:  # kept for another wording of the question
            attributes |= {"kept for": e.question, "similarity": e.similarity}
        self.leaf("answer cache", "cache", self.now(), 0.0, attributes)

    def _answer(self, _e: AnswerEvent) -> None:
        self.trace.answer = _answer_record(self.turn)

    # -- reports from below the event stream -------------------------------------------------------

    def retrieval(self, result: RetrievalResult, seconds: float) -> None:
        """A search finished just now, after ``seconds``: its spans and everything the fused table needs."""
        try:
            with self._lock:
                self._retrieval(result, seconds)
        except Exception:
            self._failed("retrieval")

    def _retrieval(self, result: RetrievalResult, seconds: float) -> None:
        start = max(0.0, self.now() - seconds)
        settings = result.settings
        span = self.open("search", "retrieval", {"query": result.query, "cached": result.cached}, start=start)
        if not result.cached:
            for channel in result.channel_results:
                self.leaf(
                    f"channel {channel.channel}", "channel", start, channel.duration_s, {"hits": len(channel.hits)}
                )
            after = start + max((c.duration_s for c in result.channel_results), default=0.0)
            fusion = result.timings.get("fusion", 0.0)
            self.leaf("fusion", "fusion", after, fusion, {"method": settings.get("fusion")})
            self.leaf(
                "rerank",
                "rerank",
                after + fusion,
                result.timings.get("rerank", 0.0),
                {"reranker": settings.get("reranker")},
            )
        self.close(span, "degraded" if result.degraded else "ok", seconds)
        for message in result.degraded:
            self._degraded(message, result.degraded_said.get(message, ()))
        self.trace.retrievals.append(retrieval_record(result, seconds))

    def llm_call(self, call: LLMCall, started: float) -> None:
        try:
            with self._lock:
                index = len(self.trace.llm_calls)
                self.trace.llm_calls.append(LLMCallRecord.of(call, index))
                attributes = {
                    "call": index,
                    "model": call.model,
                    "prompt_tokens": call.prompt_tokens,
                    "completion_tokens": call.completion_tokens,
                }
                status = "failed" if call.error else "ok"
                self.leaf(
                    "llm",
                    "llm",
                    max(0.0, started - self._t0),
                    call.seconds,
                    attributes,
                    status=status,
                    error=call.error,
                )
        except Exception:
            self._failed("llm call")

    def library_span(self, name: str, started: float, seconds: float, error: str | None) -> None:
        """A span reported by a library's own instrumentation (LlamaIndex)."""
        try:
            self.leaf(
                name,
                "library",
                max(0.0, started - self._t0),
                seconds,
                {},
                status="failed" if error else "ok",
                error=error,
            )
        except Exception:
            self._failed("library span")

    # -- the end -----------------------------------------------------------------------------------

    def ingested(self, results: Sequence[IngestResult]) -> None:
        """What an upload did with each file; a file that failed degrades the upload."""
        try:
            with self._lock:
                self.trace.ingest = [IngestFileRecord(r.name, r.status, r.message, r.chunks) for r in results]
                for r in results:
                    if r.status == "failed":
                        self._degraded(r.message, (r.said,) if r.said is not None else ())
        except Exception:
            self._failed("ingest results")

    def finish(self, status: str | None = None, error: str | None = None) -> Trace:
        with self._lock:
            if error:
                self.trace.errors.append(error)
            self.close(self._root, "failed" if error else "ok", error=None)
            self.trace.total_s = round(self.now(), 4)
            self.trace.status = status or self._status()
            return self.trace

    def _status(self) -> str:
        t = self.trace
        if t.clarify:
            return "clarified"
        if t.errors or any(s.status == "failed" for s in t.spans):
            return "failed" if t.answer is None else "degraded"
        if t.degradations:
            return "degraded"
        if t.answer is not None and not t.answer.grounded and t.retrievals and not t.context:
            return "not found"
        if t.answer is not None and t.answer.abstained:  # passages found, and they do not say (the check or the model)
            return "refused"
        return "ok"


def _answer_record(turn: Turn) -> AnswerRecord:
    e = turn.answer
    assert e is not None
    citations = [CitationRecord(c.number, c.chunk.source, c.chunk.doc_id, c.chunk.chunk_id) for c in e.citations]
    support = [
        SupportRecord(s.text, s.status, list(s.cited), list(s.passages), list(s.facts), list(s.missing), s.overlap)
        for s in e.support
    ]
    confidence = e.confidence
    checks = list(confidence.checks) if confidence else []
    return AnswerRecord(e.text, e.grounded, citations, e.abstained, support, confidence.level if confidence else "",
                        checks, confidence.probability if confidence else None, e.not_sure, e.guess)  # fmt: skip


_HANDLERS: dict[type, Callable[[TraceBuilder, Any], None]] = {
    StageEvent: TraceBuilder._stage,
    WaitEvent: TraceBuilder._wait,
    RewriteEvent: lambda b, _e: setattr(b.trace, "rewrite", b.turn.rewrite),
    RoutingEvent: TraceBuilder._routing,
    ClarifyEvent: TraceBuilder._clarify,
    NoticeEvent: TraceBuilder._notice,
    RetrievalEvent: TraceBuilder._context,
    ModeEvent: TraceBuilder._mode,
    MemoryEvent: lambda b, _e: setattr(b.trace, "memory", b.turn.memory),
    AgentStepEvent: TraceBuilder._agent_step,
    EvidenceEvent: TraceBuilder._evidence,
    EvidenceWithdrawnEvent: lambda b, _e: setattr(b.trace, "evidence", None),
    AnswerEvent: TraceBuilder._answer,
    CachedEvent: TraceBuilder._cached,
    ExperienceEvent: lambda b, e: setattr(b.trace, "experience", e),
}
