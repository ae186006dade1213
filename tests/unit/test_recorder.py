"""The trace recorder: engine events and reports from below the event stream -> one trace per request.

Pure Python with synthetic events, hand-built retrieval results and a fake LLM; the store is an in-memory fake
(the seam the recorder writes through), except in one end-to-end test with the real SQLite ``TraceStore``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from typing import Any

import pytest

from ragapp.config import RetrievalSettings
from ragapp.core.events import (
    AgentStepEvent,
    AnswerEvent,
    ClarifyEvent,
    EngineEvent,
    NoticeEvent,
    RetrievalEvent,
    StageEvent,
    TokenEvent,
    TraceEvent,
    WaitEvent,
)
from ragapp.core.types import (
    ChannelHit,
    ChannelResult,
    ChatTurn,
    Chunk,
    Citation,
    IngestProgress,
    IngestResult,
    LeafScore,
    RetrievalResult,
    RetrievedChunk,
    ToolCall,
)
from ragapp.models.llm import ToolCallingLLM, ToolReply
from ragapp.models.recording import recording
from ragapp.retrieval.fusion import contributions
from ragapp.tracing import builder as builder_module
from ragapp.tracing import context
from ragapp.tracing.builder import TraceBuilder
from ragapp.tracing.ingest import IngestPhases
from ragapp.tracing.model import Trace
from ragapp.tracing.recorder import TraceRecorder
from ragapp.tracing.records import retrieval_record
from ragapp.tracing.store import TraceStore

OWNER = "alice"


class FakeStore:
    """Collects what the recorder saves, as the store would write it (``to_dict``)."""

    def __init__(self) -> None:
        self.saved: list[dict[str, Any]] = []

    def save(self, trace: Trace) -> None:
        self.saved.append(trace.to_dict())


class BrokenStore:
    def save(self, trace: Trace) -> None:
        raise OSError("disk full")


def _record(events: Iterable[EngineEvent], store: Any = None) -> tuple[list[EngineEvent], dict[str, Any]]:
    """Run ``events`` through a recorder; the events that came out and the one trace saved."""
    store = store or FakeStore()
    first, *out = TraceRecorder(store).chat(iter(events), owner=OWNER, question="how long?", mode="workflow")
    assert len(store.saved) == 1
    assert first == TraceEvent(store.saved[0]["id"])  # first, the id of the trace the request leaves
    return out, store.saved[0]


def _spans(trace: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [s for s in trace["spans"] if s["name"] == name]


def _span(trace: dict[str, Any], name: str) -> dict[str, Any]:
    (span,) = _spans(trace, name)
    return span


def _children(trace: dict[str, Any], span: dict[str, Any]) -> list[str]:
    return [s["name"] for s in trace["spans"] if s["parent"] == span["id"]]


# -- a hand-built search --------------------------------------------------------------------------

CHUNKS = {
    "d1": Chunk("d1-0000", "d1", 0, "Batteries last ten hours.", "a.pdf", page=3, heading="Battery"),
    "d2": Chunk("d2-0000", "d2", 0, "Charging takes two hours.", "b.pdf"),
    "d3": Chunk("d3-0000", "d3", 0, "The case is aluminium.", "c.pdf"),
    "d4": Chunk("d4-0000", "d4", 0, "Unrelated text.", "d.pdf"),
}
VECTOR = ChannelResult(
    "vector",
    (
        ChannelHit("d1-0000", 1, 0.91),
        ChannelHit("d2-0000", 2, 0.88),
        ChannelHit("d3-0000", 3, 0.80),
        ChannelHit("d4-0000", 4, 0.75),
    ),
    0.003,
)
KEYWORD = ChannelResult("keyword", (ChannelHit("d2-0000", 1, 7.5), ChannelHit("d3-0000", 2, 4.0)), 0.002)
# RRF, k=60, weights 1: d2 = 1/62 + 1/61, d3 = 1/63 + 1/62, d1 = 1/61, d4 = 1/64 -> fused order d2, d3, d1, d4.
FUSED = {
    "d1": 1 / 61,
    "d2": 1 / 62 + 1 / 61,
    "d3": 1 / 63 + 1 / 62,
    "d4": 1 / 64,
}
RERANK = {"d1": 0.9, "d2": 0.5, "d3": -1.0, "d4": -2.0}  # the reranker's order: d1, d2, d3, d4


def _candidate(doc: str) -> RetrievedChunk:
    ranks = {c.channel: h.rank for c in (VECTOR, KEYWORD) for h in c.hits if h.chunk_id == f"{doc}-0000"}
    scores = {c.channel: h.score for c in (VECTOR, KEYWORD) for h in c.hits if h.chunk_id == f"{doc}-0000"}
    return RetrievedChunk(CHUNKS[doc], FUSED[doc], ranks, scores, RERANK[doc])


def _result(**changes: Any) -> RetrievalResult:
    candidates = tuple(_candidate(d) for d in ("d1", "d2", "d3", "d4"))
    fields: dict[str, Any] = {
        "query": "battery life",
        "chunks": candidates[:2],
        "candidates": candidates,
        "channel_results": (VECTOR, KEYWORD),
        "timings": {"fusion": 0.001, "rerank": 0.002},
        "settings": RetrievalSettings().model_dump() | {"fusion": "rrf", "reranker": "x", "top_k": 5},
    }
    fields |= changes
    # What each channel added to each fused score, worked out from the channels' hits as the pipeline does.
    rankings = {c.channel: c.hits for c in fields["channel_results"]}
    known = {k: v for k, v in fields["settings"].items() if k in RetrievalSettings.model_fields}
    fields.setdefault("contributions", contributions(rankings, RetrievalSettings(**known)))
    return RetrievalResult(**fields)


# -- nesting --------------------------------------------------------------------------------------


def test_stages_nest_under_the_enclosing_open_span_and_the_root_is_the_request() -> None:
    _, trace = _record(
        [
            StageEvent("answer", "started"),
            StageEvent("retrieve", "started", detail={"kbs": ("a", "b")}),
            StageEvent("retrieve", "finished", duration_s=0.002, detail={"candidates": 4}),
            StageEvent("generate", "started"),
            StageEvent("generate", "finished"),
            StageEvent("answer", "finished"),
        ]
    )
    root, answer, retrieve, generate = trace["spans"]
    assert (root["name"], root["kind"], root["parent"]) == ("chat", "request", None)
    assert root["attributes"] == {"question": "how long?", "mode": "workflow"}
    assert (answer["name"], answer["parent"]) == ("answer", root["id"])
    assert (retrieve["name"], retrieve["parent"], retrieve["kind"]) == ("retrieve", answer["id"], "stage")
    assert (generate["name"], generate["parent"]) == ("generate", answer["id"])
    assert retrieve["attributes"] == {"kbs": ["a", "b"], "candidates": 4}  # started and finished details merged
    assert {s["status"] for s in trace["spans"]} == {"ok"}
    assert trace["kind"] == "chat" and trace["owner"] == OWNER


def test_an_agent_step_becomes_a_tool_span_under_the_open_stage() -> None:
    _, trace = _record(
        [
            StageEvent("agent", "started"),
            AgentStepEvent(1, "started", "search", {"query": "battery"}, thought="look it up"),
            AgentStepEvent(1, "finished", "search", {"query": "battery"}, preview="3 chunks", duration_s=0.5),
            StageEvent("agent", "finished"),
        ]
    )
    agent = _span(trace, "agent")
    tool = _span(trace, "tool search")
    assert (tool["kind"], tool["parent"], tool["status"], tool["duration_s"]) == ("tool", agent["id"], "ok", 0.5)
    assert tool["attributes"] == {"step": 1, "arguments": {"query": "battery"}, "thought": "look it up"}
    assert _children(trace, agent) == ["tool search"]
    (step,) = trace["agent_steps"]
    assert step["tool"] == "search" and step["status"] == "finished" and step["preview"] == "3 chunks"


def test_a_queued_answer_records_its_wait_on_the_generate_span() -> None:
    _, trace = _record(
        [
            StageEvent("generate", "started", detail={"passages": 2}),
            WaitEvent(2, 0.1),
            WaitEvent(1, 3.0),
            WaitEvent(0, 7.5),  # its turn
            WaitEvent(0, 8.5),  # the model reading its prompt
            StageEvent("generate", "finished"),
        ]
    )
    assert _span(trace, "generate")["attributes"] == {"passages": 2, "queued behind": 2, "queued s": 7.5}


def test_a_failed_agent_step_that_only_reports_its_end_gets_a_failed_span() -> None:
    _, trace = _record([AgentStepEvent(2, "failed", "lookup", {"x": 1}, error="unknown tool")])
    tool = _span(trace, "tool lookup")
    assert (tool["status"], tool["error"], tool["parent"]) == ("failed", "unknown tool", 0)
    assert trace["errors"] == ["tool lookup: unknown tool"]
    assert trace["agent_steps"][0]["error"] == "unknown tool"


def test_a_stage_that_only_reports_finished_still_gets_a_span() -> None:
    _, trace = _record(
        [
            StageEvent("answer", "started"),
            StageEvent("rerank", "finished", 0.25, {"n": 3}),
            StageEvent("answer", "finished"),
        ]
    )
    rerank = _span(trace, "rerank")
    assert rerank["parent"] == _span(trace, "answer")["id"]
    assert (rerank["status"], rerank["duration_s"], rerank["attributes"]) == ("ok", 0.25, {"n": 3})
    assert rerank["start_s"] >= 0.0


def test_a_stage_left_open_is_closed_unfinished_when_its_parent_closes() -> None:
    _, trace = _record(
        [
            StageEvent("answer", "started"),
            StageEvent("generate", "started"),
            StageEvent("stream", "started"),
            StageEvent("answer", "finished"),
            StageEvent("late", "started"),  # still open when the request ends
        ]
    )
    assert _span(trace, "answer")["status"] == "ok"
    for name in ("generate", "stream", "late"):
        span = _span(trace, name)
        assert span["status"] == "unfinished", name
        assert span["duration_s"] is not None and span["duration_s"] >= 0
    assert _span(trace, "late")["parent"] == 0
    assert trace["spans"][0]["status"] == "ok"


# -- timing ---------------------------------------------------------------------------------------


def test_a_span_takes_its_duration_from_the_event_when_given() -> None:
    def events() -> Iterator[EngineEvent]:
        yield StageEvent("given", "started")
        time.sleep(0.01)
        yield StageEvent("given", "finished", duration_s=0.5)
        yield StageEvent("measured", "started")
        time.sleep(0.01)
        yield StageEvent("measured", "finished")

    _, trace = _record(events())
    assert _span(trace, "given")["duration_s"] == 0.5
    assert _span(trace, "measured")["duration_s"] >= 0.01


def test_spans_start_in_order_and_lie_inside_the_request() -> None:
    def events() -> Iterator[EngineEvent]:
        for name in ("rewrite", "retrieve", "generate"):
            yield StageEvent(name, "started")
            time.sleep(0.002)
            yield StageEvent(name, "finished")

    _, trace = _record(events())
    spans = trace["spans"]
    starts = [s["start_s"] for s in spans]
    assert starts == sorted(starts)
    assert [s["name"] for s in spans] == ["chat", "rewrite", "retrieve", "generate"]
    for earlier, later in pairwise(spans[1:]):
        assert earlier["start_s"] + earlier["duration_s"] <= later["start_s"] + 1e-5
    total = trace["total_s"]
    assert total > 0
    for span in spans:
        assert 0 <= span["start_s"] <= span["start_s"] + span["duration_s"] <= total + 1e-4


# -- errors and the final status -------------------------------------------------------------------


def test_a_failed_stage_fails_its_span_and_the_request() -> None:
    _, trace = _record([StageEvent("generate", "started"), StageEvent("generate", "failed", error="LLMError: down")])
    span = _span(trace, "generate")
    assert (span["status"], span["error"]) == ("failed", "LLMError: down")
    assert trace["errors"] == ["generate: LLMError: down"]
    assert trace["status"] == "failed"


def test_a_failed_stage_before_an_answer_degrades_the_request() -> None:
    _, trace = _record(
        [
            StageEvent("rewrite", "failed", error="timeout"),
            AnswerEvent("Ten hours.", (), grounded=True),
        ]
    )
    assert trace["errors"] == ["rewrite: timeout"]
    assert trace["status"] == "degraded"


def test_a_warning_notice_is_a_degradation_and_an_info_notice_is_not() -> None:
    _, trace = _record(
        [
            NoticeEvent("keyword search timed out", "warning"),
            NoticeEvent("keyword search timed out", "warning"),
            NoticeEvent("answering from 3 chunks"),
            AnswerEvent("Ten hours.", (), grounded=True),
        ]
    )
    assert trace["degradations"] == ["keyword search timed out"]
    assert [n["level"] for n in trace["notices"]] == ["warning", "warning", "info"]
    assert trace["status"] == "degraded"


def test_a_clean_request_is_ok_and_keeps_the_answer_and_the_context() -> None:
    chunk = CHUNKS["d1"]
    _, trace = _record(
        [
            RetrievalEvent((_candidate("d1"),)),
            TokenEvent("Ten "),
            AnswerEvent("Ten hours [1].", (Citation(1, chunk),), grounded=True),
        ]
    )
    assert trace["status"] == "ok"
    assert trace["answer"] == {
        "text": "Ten hours [1].",
        "grounded": True,
        "citations": [{"number": 1, "source": "a.pdf", "doc_id": "d1", "chunk_id": "d1-0000"}],
    }
    assert [c["chunk_id"] for c in trace["context"]] == ["d1-0000"]
    assert trace["context"][0]["location"] == "p. 3 · Battery"
    assert trace["errors"] == [] and trace["degradations"] == []


def test_a_refusal_over_passages_found_is_refused() -> None:
    chunk = CHUNKS["d1"]
    refusals = [  # the check refused the reply; the model itself said the passages do not say
        AnswerEvent("The documents do not say.", (Citation(1, chunk),), grounded=False, abstained=True),
        AnswerEvent("The passages do not mention it [1].", (Citation(1, chunk),), grounded=True, abstained=True),
    ]
    for refusal in refusals:
        _, trace = _record([RetrievalEvent((_candidate("d1"),)), refusal])
        assert trace["status"] == "refused"


def test_degraded_retrieval_event_messages_are_degradations() -> None:
    _, trace = _record(
        [RetrievalEvent((_candidate("d1"),), degraded=("vector search failed",)), AnswerEvent("x", (), True)]
    )
    assert trace["degradations"] == ["vector search failed"]
    assert trace["status"] == "degraded"


def test_an_exception_from_the_engine_reaches_the_consumer_and_the_trace_is_failed() -> None:
    def events() -> Iterator[EngineEvent]:
        yield StageEvent("generate", "started")
        raise RuntimeError("boom")

    store = FakeStore()
    seen: list[EngineEvent] = []
    with pytest.raises(RuntimeError, match="boom"):
        for event in TraceRecorder(store).chat(events(), owner=OWNER, question="q", mode="workflow"):
            seen.append(event)
    assert seen[1:] == [StageEvent("generate", "started")]
    (trace,) = store.saved
    assert seen[0] == TraceEvent(trace["id"])
    assert trace["status"] == "failed"
    assert "RuntimeError: boom" in trace["errors"]
    assert trace["spans"][0]["status"] == "failed"
    assert _span(trace, "generate")["status"] == "unfinished"


def test_a_clarify_event_makes_the_request_clarified() -> None:
    choice = LeafScore("K1", "Lumen > Battery", "KB", "Lumen", 0.61)
    _, trace = _record([ClarifyEvent("which battery?", ("which battery?",), "which battery?", (choice,))])
    assert trace["status"] == "clarified"
    assert trace["clarify"] == {
        "ambiguous": "which battery?",
        "choices": [{"code": "K1", "path": "Lumen > Battery", "kind": "KB", "score": 0.61}],
    }


def test_a_consumer_that_stops_early_leaves_a_cancelled_trace() -> None:
    produced: list[str] = []

    def events() -> Iterator[EngineEvent]:
        for name in ("retrieve", "generate"):
            produced.append(name)
            yield StageEvent(name, "started")

    store = FakeStore()
    stream = TraceRecorder(store).chat(events(), owner=OWNER, question="q", mode="workflow")
    assert isinstance(next(stream), TraceEvent)
    assert next(stream) == StageEvent("retrieve", "started")
    assert store.saved == []  # still running
    stream.close()
    (trace,) = store.saved
    assert trace["status"] == "cancelled"
    assert produced == ["retrieve"]
    assert _span(trace, "retrieve")["status"] == "unfinished"
    assert trace["total_s"] is not None


def test_a_consumer_that_stops_early_closes_the_engine_generator_inside_the_trace() -> None:
    closed: list[bool] = []

    def events() -> Iterator[EngineEvent]:
        try:
            yield StageEvent("retrieve", "started")
            yield StageEvent("retrieve", "finished")
        finally:  # the engine's own clean-up (stop the model's stream), still reporting to this request
            closed.append(isinstance(context.current(), TraceBuilder))

    engine = events()  # the caller may well keep a reference to it
    stream = TraceRecorder(FakeStore()).chat(engine, owner=OWNER, question="q", mode="workflow")
    next(stream)  # the trace id
    next(stream)
    stream.close()
    assert closed == [True]


# -- recording never breaks a request ----------------------------------------------------------------


def test_a_failing_handler_costs_the_trace_never_the_events(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(_builder: TraceBuilder, _event: AnswerEvent) -> None:
        raise KeyError("bug")

    monkeypatch.setitem(builder_module._HANDLERS, AnswerEvent, broken)
    events: list[EngineEvent] = [
        StageEvent("generate", "started"),
        TokenEvent("Ten"),
        StageEvent("generate", "finished"),
        AnswerEvent("Ten.", (), grounded=True),
        NoticeEvent("after the failure", "warning"),
    ]
    out, trace = _record(events)
    assert out == events
    assert all(a is b for a, b in zip(out, events, strict=True))
    assert trace["recorder_error"] == "recording failed at event AnswerEvent"
    assert _span(trace, "generate")["status"] == "ok"
    assert trace["degradations"] == ["after the failure"]  # recording went on after the failure


def test_a_store_that_cannot_save_does_not_break_the_request() -> None:
    events: list[EngineEvent] = [StageEvent("generate", "started"), AnswerEvent("x", (), True)]
    trace_id, *out = TraceRecorder(BrokenStore()).chat(iter(events), owner=OWNER, question="q", mode="m")
    assert out == events and isinstance(trace_id, TraceEvent)


@pytest.mark.parametrize("recorder", [TraceRecorder(None), TraceRecorder(FakeStore(), enabled=False)])
def test_a_disabled_recorder_passes_events_untouched_and_saves_nothing(recorder: TraceRecorder) -> None:
    seen: list[object] = []

    def events() -> Iterator[EngineEvent]:
        seen.append(context.current())
        yield StageEvent("generate", "started")
        yield AnswerEvent("x", (), True)

    out = list(recorder.chat(events(), owner=OWNER, question="q", mode="m"))
    assert out == [StageEvent("generate", "started"), AnswerEvent("x", (), True)]
    assert seen == [None]
    results = [IngestResult("a.txt", "added", "ok", "d1", 3)]

    def run(progress: Callable[[IngestProgress], None]) -> list[IngestResult]:
        progress(IngestProgress("a.txt", "parse", 0.5, "parsing"))
        return results

    assert recorder.ingest(run, owner=OWNER, files=["a.txt"]) == results
    assert recorder.store is None or recorder.store.saved == []


# -- reports from below the event stream ----------------------------------------------------------


def test_outside_a_request_there_is_no_current_trace_and_report_does_nothing() -> None:
    called: list[object] = []
    assert context.current() is None
    context.report(called.append)
    assert called == []


def test_code_inside_the_request_reports_its_retrieval_to_the_request() -> None:
    result = _result()
    seen: list[object] = []

    def events() -> Iterator[EngineEvent]:
        yield StageEvent("retrieve", "started")
        seen.append(context.current())
        context.report(lambda observer: observer.retrieval(result, 0.01))
        yield StageEvent("retrieve", "finished")
        yield RetrievalEvent(result.chunks)

    _, trace = _record(events())
    (builder,) = seen
    assert isinstance(builder, TraceBuilder) and builder.trace.to_dict() == trace
    assert context.current() is None  # the request's context never leaked out

    search = _span(trace, "search")
    assert (search["kind"], search["parent"], search["duration_s"]) == (
        "retrieval",
        _span(trace, "retrieve")["id"],
        0.01,
    )
    assert search["attributes"] == {"query": "battery life", "cached": False}
    assert _children(trace, search) == ["channel vector", "channel keyword", "fusion", "rerank"]
    vector, keyword = _span(trace, "channel vector"), _span(trace, "channel keyword")
    assert (vector["duration_s"], vector["attributes"]) == (0.003, {"hits": 4})
    assert (keyword["duration_s"], keyword["attributes"]) == (0.002, {"hits": 2})
    fusion, rerank = _span(trace, "fusion"), _span(trace, "rerank")
    assert fusion["attributes"] == {"method": "rrf"} and rerank["attributes"] == {"reranker": "x"}
    assert vector["start_s"] == keyword["start_s"] == search["start_s"]  # channels run side by side
    assert fusion["start_s"] == pytest.approx(search["start_s"] + 0.003, abs=1e-5)  # after the slowest channel
    assert rerank["start_s"] == pytest.approx(fusion["start_s"] + 0.001, abs=1e-5)

    (record,) = trace["retrievals"]
    assert record["query"] == "battery life" and record["seconds"] == 0.01
    assert [c["channel"] for c in record["channels"]] == ["vector", "keyword"]
    assert record["channels"][1]["hits"] == [
        {"chunk_id": "d2-0000", "rank": 1, "score": 7.5},
        {"chunk_id": "d3-0000", "rank": 2, "score": 4.0},
    ]
    rows = {c["chunk_id"]: c for c in record["candidates"]}
    assert [c["chunk_id"] for c in record["candidates"]] == ["d1-0000", "d2-0000", "d3-0000", "d4-0000"]
    assert {cid: (r["fused_rank"], r["final_rank"]) for cid, r in rows.items()} == {
        "d1-0000": (3, 1),
        "d2-0000": (1, 2),
        "d3-0000": (2, 3),
        "d4-0000": (4, 4),
    }
    assert rows["d2-0000"]["channel_ranks"] == {"vector": 2, "keyword": 1}
    assert rows["d1-0000"]["channel_ranks"] == {"vector": 1}
    assert rows["d2-0000"]["contributions"] == {"vector": round(1 / 62, 6), "keyword": round(1 / 61, 6)}
    assert rows["d1-0000"]["contributions"] == {"vector": round(1 / 61, 6)}
    assert rows["d2-0000"]["fused_score"] == round(FUSED["d2"], 6)
    assert [r["rerank_score"] for r in rows.values()] == [0.9, 0.5, -1.0, -2.0]
    assert [r["in_prompt"] for r in rows.values()] == [True, True, False, False]
    assert record["settings"]["fusion"] == "rrf" and record["settings"]["top_k"] == 5
    assert [c["chunk_id"] for c in trace["context"]] == ["d1-0000", "d2-0000"]


def test_contributions_follow_the_channel_weights() -> None:
    settings = RetrievalSettings().model_dump() | {"fusion": "rrf", "rrf_k": 10, "weights": {"vector": 2.0}}
    record = retrieval_record(_result(settings=settings), 0.01).to_dict()
    rows = {c["chunk_id"]: c for c in record["candidates"]}
    assert rows["d2-0000"]["contributions"] == {"vector": round(2 / 12, 6), "keyword": round(1 / 11, 6)}


def test_a_cached_degraded_search_is_one_span_and_names_what_degraded() -> None:
    result = _result(cached=True, degraded=("keyword search timed out",))

    def events() -> Iterator[EngineEvent]:
        context.report(lambda observer: observer.retrieval(result, 0.001))
        yield AnswerEvent("x", (), True)

    _, trace = _record(events())
    search = _span(trace, "search")
    assert search["status"] == "degraded" and search["attributes"]["cached"] is True
    assert _children(trace, search) == []
    assert trace["degradations"] == ["keyword search timed out"]
    assert trace["retrievals"][0]["cached"] is True


def test_a_failing_report_does_not_break_the_request() -> None:
    def events() -> Iterator[EngineEvent]:
        context.report(lambda _observer: {}["missing"])  # an action that fails on its own
        context.report(lambda observer: observer.retrieval(None, 0.1))
        yield AnswerEvent("x", (), True)

    out, trace = _record(events())
    assert out == [AnswerEvent("x", (), True)]
    assert trace["recorder_error"] == "recording failed at retrieval"


def test_in_context_carries_the_trace_into_a_pool_thread() -> None:
    result = _result()
    seen: dict[str, object] = {}

    def search() -> None:
        seen["thread"] = context.current()
        context.report(lambda observer: observer.retrieval(result, 0.01))

    def events() -> Iterator[EngineEvent]:
        seen["request"] = context.current()
        with ThreadPoolExecutor(max_workers=1) as pool:
            seen["bare"] = pool.submit(context.current).result()
            pool.submit(context.in_context(search)).result()
        yield AnswerEvent("x", (), True)

    _, trace = _record(events())
    assert isinstance(seen["request"], TraceBuilder)
    assert seen["thread"] is seen["request"]
    assert seen["bare"] is None  # a pool thread does not inherit the context on its own
    assert len(trace["retrievals"]) == 1
    assert _span(trace, "search")["parent"] == 0


def test_two_requests_report_to_their_own_traces() -> None:
    store = FakeStore()
    recorder = TraceRecorder(store)

    def events(query: str) -> Iterator[EngineEvent]:
        yield StageEvent("retrieve", "started")
        context.report(lambda observer: observer.retrieval(_result(query=query), 0.01))
        yield StageEvent("retrieve", "finished")

    first = recorder.chat(events("one"), owner=OWNER, question="one", mode="m")
    second = recorder.chat(events("two"), owner=OWNER, question="two", mode="m")
    assert next(first) != next(second)  # each its own trace id
    for a, b in zip(first, second, strict=True):  # interleaved, as two users' requests would be
        assert a == b
    assert [t["question"] for t in store.saved] == ["one", "two"]
    assert [[r["query"] for r in t["retrievals"]] for t in store.saved] == [["one"], ["two"]]


# -- model calls ----------------------------------------------------------------------------------


class FakeLLM:
    name = "fake-model"
    context_size = 4096

    def __init__(self, pieces: Sequence[str] = ("Ten ", "hours."), error: Exception | None = None) -> None:
        self.pieces = list(pieces)
        self.error = error
        self.kwargs: list[dict[str, Any]] = []

    def stream_chat(self, messages: list[ChatTurn], **kwargs: Any) -> Iterator[str]:
        self.kwargs.append(kwargs)
        yield from self.pieces
        if self.error is not None:
            raise self.error


class FakeToolLLM(FakeLLM):
    def complete_with_tools(self, messages: list[ChatTurn], tools: list[dict[str, Any]], **kwargs: Any) -> ToolReply:
        return ToolReply("", (ToolCall("search", {"query": "battery"}, "c1"),))


MESSAGES = [
    ChatTurn("system", "Answer from the passages."),
    ChatTurn("assistant", "", tool_calls=(ToolCall("search", {"query": "battery"}, "c1"),)),
    ChatTurn("tool", "[1] Batteries last ten hours.", tool_call_id="c1"),
    ChatTurn("user", "How long does the battery last?"),
]
WIRE = [
    {"role": "system", "content": "Answer from the passages."},
    {"role": "assistant", "content": "", "tool_calls": [{"name": "search", "arguments": {"query": "battery"}}]},
    {"role": "tool", "content": "[1] Batteries last ten hours.", "tool_call_id": "c1"},
    {"role": "user", "content": "How long does the battery last?"},
]


def _llm_request(call: Callable[[], object]) -> tuple[list[object], dict[str, Any]]:
    """Run ``call`` inside a recorded request, within a "generate" stage; what it returned and the trace."""
    got: list[object] = []

    def events() -> Iterator[EngineEvent]:
        yield StageEvent("generate", "started")
        got.append(call())
        yield StageEvent("generate", "finished")
        yield AnswerEvent("Ten hours.", (), True)

    _, trace = _record(events())
    return got, trace


def test_a_model_call_inside_a_request_is_recorded_exactly() -> None:
    inner = FakeLLM()
    llm = recording(inner)
    got, trace = _llm_request(lambda: list(llm.stream_chat(MESSAGES, json=True, max_tokens=64)))
    assert got == [["Ten ", "hours."]]  # the pieces pass through unchanged
    assert inner.kwargs == [{"json": True, "max_tokens": 64}]
    (call,) = trace["llm_calls"]
    assert call["model"] == "fake-model" and call["index"] == 0
    assert call["messages"] == WIRE
    assert call["completion"] == "Ten hours."
    assert call["prompt_tokens"] > 0 and call["completion_tokens"] > 0
    assert call["json"] is True and call["error"] is None and call["usage_reported"] is False
    span = _span(trace, "llm")
    assert (span["kind"], span["status"], span["parent"]) == ("llm", "ok", _span(trace, "generate")["id"])
    assert span["attributes"] == {
        "call": 0,
        "model": "fake-model",
        "prompt_tokens": call["prompt_tokens"],
        "completion_tokens": call["completion_tokens"],
    }
    assert trace["status"] == "ok"


def test_a_failing_model_call_is_recorded_and_still_raises() -> None:
    llm = recording(FakeLLM(("Ten",), error=RuntimeError("connection reset")))

    def call() -> str:
        with pytest.raises(RuntimeError, match="connection reset"):
            list(llm.stream_chat(MESSAGES))
        return "raised"

    got, trace = _llm_request(call)
    assert got == ["raised"]
    (record,) = trace["llm_calls"]
    assert record["completion"] == "Ten" and record["error"] == "RuntimeError: connection reset"
    assert _span(trace, "llm")["status"] == "failed"
    assert trace["errors"] == ["llm: RuntimeError: connection reset"]
    assert trace["status"] == "degraded"  # an answer still came


def test_a_model_call_outside_a_request_only_passes_through() -> None:
    llm = recording(FakeLLM())
    assert list(llm.stream_chat(MESSAGES)) == ["Ten ", "hours."]
    assert llm.name == "fake-model"
    assert llm.context_size == 4096  # whatever the backend offers


def test_recording_keeps_native_tool_calling_only_where_the_backend_has_it() -> None:
    plain = recording(FakeLLM())
    tools = recording(FakeToolLLM())
    assert not isinstance(FakeLLM(), ToolCallingLLM)
    assert not isinstance(plain, ToolCallingLLM)
    assert not hasattr(plain, "complete_with_tools")
    assert isinstance(tools, ToolCallingLLM)


def test_a_tool_calling_model_call_is_recorded_with_its_tools_and_calls() -> None:
    llm = recording(FakeToolLLM())
    assert isinstance(llm, ToolCallingLLM)
    schema = [{"type": "function", "function": {"name": "search", "parameters": {}}}, {"name": "finish"}]
    got, trace = _llm_request(lambda: llm.complete_with_tools(MESSAGES, schema))
    assert got == [ToolReply("", (ToolCall("search", {"query": "battery"}, "c1"),))]
    (call,) = trace["llm_calls"]
    assert call["tools"] == ["search", "finish"]
    assert call["tool_calls"] == [{"name": "search", "arguments": {"query": "battery"}}]
    assert call["messages"] == WIRE
    assert _span(trace, "llm")["status"] == "ok"


# -- ingestion ------------------------------------------------------------------------------------

PROGRESS = [
    IngestProgress("a.txt", "parse", 0.0, "parsing"),
    IngestProgress("a.txt", "embed", 0.1, "3 chunks", 0, 3),
    IngestProgress("a.txt", "embed", 0.2, "embedded 1/3 chunks", 1, 3),
    IngestProgress("a.txt", "embed", 0.4, "embedded 3/3 chunks", 3, 3),
    IngestProgress("b.txt", "parse", 0.5, "parsing"),
    IngestProgress(None, "index", 1.0, "updating keyword index"),
]
RESULTS = [
    IngestResult("a.txt", "added", "a.txt: 3 chunks added.", "d1", 3),
    IngestResult("b.txt", "failed", "b.txt: no text found."),
]


def _ingest(store: FakeStore, results: list[IngestResult] = RESULTS) -> list[IngestResult]:
    def run(progress: Callable[[IngestProgress], None]) -> list[IngestResult]:
        for update in PROGRESS:
            progress(update)
        return results

    return TraceRecorder(store).ingest(run, owner=OWNER, files=["a.txt", "b.txt"])


def test_ingest_records_one_span_per_file_with_its_phases() -> None:
    store = FakeStore()
    assert _ingest(store) == RESULTS
    (trace,) = store.saved
    assert (trace["kind"], trace["mode"], trace["question"]) == ("ingest", "ingest", "a.txt, b.txt")
    a, b = _span(trace, "a.txt"), _span(trace, "b.txt")
    assert a["kind"] == b["kind"] == "file"
    assert a["parent"] == b["parent"] == 0
    # "N chunks" is where embedding starts; the embedding messages that follow stay in that one phase
    assert _children(trace, a) == ["parse + chunk", "embed"]
    assert _children(trace, b)[0] == "parse + chunk"
    assert _span(trace, "embed")["attributes"] == {"message": "3 chunks"}
    assert all(s["status"] == "ok" and s["duration_s"] is not None for s in trace["spans"])
    assert a["start_s"] + a["duration_s"] <= b["start_s"] + 1e-5
    assert trace["ingest"] == [
        {"name": "a.txt", "status": "added", "message": "a.txt: 3 chunks added.", "chunks": 3},
        {"name": "b.txt", "status": "failed", "message": "b.txt: no text found.", "chunks": 0},
    ]
    assert trace["degradations"] == ["b.txt: no text found."]
    assert trace["status"] == "degraded"


def test_the_keyword_index_update_is_not_part_of_the_last_file() -> None:
    store = FakeStore()
    _ingest(store)
    (trace,) = store.saved
    assert _span(trace, "index")["parent"] == 0


def test_a_clean_ingest_is_ok() -> None:
    store = FakeStore()
    _ingest(store, RESULTS[:1])
    assert store.saved[0]["status"] == "ok"


def test_an_ingest_that_raises_saves_a_failed_trace_and_reraises() -> None:
    store = FakeStore()

    def run(progress: Callable[[IngestProgress], None]) -> list[IngestResult]:
        progress(IngestProgress("a.txt", "parse", 0.1, "parsing"))
        raise ValueError("bad knowledge base name")

    with pytest.raises(ValueError, match="bad knowledge base name"):
        TraceRecorder(store).ingest(run, owner=OWNER, files=["a.txt"])
    (trace,) = store.saved
    assert trace["status"] == "failed"
    assert trace["errors"] == ["ValueError: bad knowledge base name"]
    assert "ingest" not in trace
    assert _span(trace, "a.txt")["status"] == "ok" and _span(trace, "parse + chunk")["status"] == "ok"
    assert trace["spans"][0]["status"] == "failed"


def test_ingest_phases_ignore_what_they_cannot_read() -> None:
    builder = TraceBuilder(OWNER, "ingest", "a.txt", "ingest")
    phases = IngestPhases(builder)
    phases.progress(IngestProgress("a.txt", "parse", 0.1, "parsing"))
    phases.progress(None)  # type: ignore[arg-type]
    phases.done()
    trace = builder.finish().to_dict()
    assert trace["recorder_error"] == "recording failed at ingest progress"
    assert [s["name"] for s in trace["spans"]] == ["ingest", "a.txt", "parse + chunk"]


# -- with the real store ---------------------------------------------------------------------------


def test_a_recorded_request_round_trips_through_the_trace_store(store_target: Callable[[str], Any]) -> None:
    store = TraceStore(store_target("traces")).start()
    builders: list[Any] = []
    llm = recording(FakeLLM())

    def events() -> Iterator[EngineEvent]:
        builders.append(context.current())
        yield StageEvent("retrieve", "started")
        context.report(lambda observer: observer.retrieval(_result(), 0.01))
        yield StageEvent("retrieve", "finished")
        yield TokenEvent("".join(llm.stream_chat(MESSAGES)))
        yield AnswerEvent("Ten hours [1].", (Citation(1, CHUNKS["d1"]),), True)

    try:
        list(TraceRecorder(store).chat(events(), owner=OWNER, question="how long?", mode="workflow"))
        store.flush()
        trace = builders[0].trace.to_dict()
        found = store.get(trace["id"], OWNER)
        got = None if found is None else found.to_dict()
        assert got == json.loads(json.dumps(trace))
        assert got["status"] == "ok" and got["llm_calls"][0]["messages"] == WIRE
        assert store.get(trace["id"], "bob") is None
        (summary,) = store.list(OWNER)
        assert (summary.id, summary.status, summary.question) == (trace["id"], "ok", "how long?")
    finally:
        store.close()
