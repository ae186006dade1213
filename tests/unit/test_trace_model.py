"""Typed traces: what the builder records survives ``to_dict`` -> JSON -> ``from_dict`` unchanged, rows from older
versions (missing keys, odd values, keys this version does not know) still read back, and typed ingest progress
becomes a span per file with a child per phase."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ragapp.core.events import (
    AgentStepEvent,
    AnswerEvent,
    ClarifyEvent,
    EvidenceEvent,
    MemoryEvent,
    ModeEvent,
    NoticeEvent,
    RetrievalEvent,
    RewriteEvent,
    RoutingEvent,
    StageEvent,
)
from ragapp.core.types import (
    ChannelHit,
    ChannelResult,
    Chunk,
    Citation,
    Confidence,
    ConfidenceCheck,
    IngestProgress,
    IngestResult,
    LeafScore,
    LLMCall,
    RetrievalResult,
    RetrievedChunk,
    SentenceSupport,
)
from ragapp.tracing.builder import TraceBuilder
from ragapp.tracing.ingest import IngestPhases
from ragapp.tracing.model import AnswerRecord, Span, Trace
from ragapp.tracing.store import TraceStore

CHUNK = Chunk("d1-0000", "d1", 0, "Batteries last ten hours.", "a.pdf", page=3, heading="Battery")
CANDIDATE = RetrievedChunk(CHUNK, 1 / 61, {"keyword": 1}, {"keyword": 7.0}, 0.7)
LEAF = LeafScore("K1", "Lumen > Battery", "KB", "Lumen", 0.61)


def _full_trace() -> Trace:
    """A trace with every part the builder fills in."""
    builder = TraceBuilder("alice", "chat", "how long?", "auto")
    result = RetrievalResult(
        "battery life",
        (CANDIDATE,),
        (CANDIDATE,),
        (ChannelResult("keyword", (ChannelHit("d1-0000", 1, 7.0),), 0.002),),
        degraded=("vector search failed",),
        timings={"fusion": 0.001},
        settings={"fusion": "rrf", "rrf_k": 60, "top_k": 5},
        kbs=("manuals",),
        contributions={"d1-0000": {"keyword": 1 / 61}},
    )
    call = LLMCall("m", [{"role": "user", "content": "q"}], "Ten hours.", 12, 3, 0.2, tools=["search"])
    for event in (
        ModeEvent("agent", "several parts"),
        MemoryEvent("earlier turns", 2),
        RewriteEvent("and it?", "battery life?", ("battery life?",)),
        RoutingEvent("battery life?", "route", (LEAF,), "clear", (LEAF,)),
        ClarifyEvent("q", ("q",), "which one?", (LEAF,)),
        NoticeEvent("vector search failed", "warning"),
        StageEvent("agent", "started"),
        AgentStepEvent(1, "started", "search", {"query": ("battery",)}, thought="look"),
        AgentStepEvent(1, "finished", "search", {"query": ("battery",)}, preview="1 chunk", duration_s=0.1),
        StageEvent("agent", "finished", detail={"steps": 1}),
        RetrievalEvent((CANDIDATE,)),
        AnswerEvent("Ten hours [1].", (Citation(1, CHUNK),), grounded=True),
    ):
        builder.on(event)
    builder.retrieval(result, 0.01)
    builder.llm_call(call, builder._t0)
    builder.library_span("llamaindex SentenceSplitter", builder._t0, 0.001, None)
    builder.ingested([IngestResult("a.pdf", "failed", "a.pdf: no text found.")])
    builder._failed("a test")
    return builder.finish()


def test_a_trace_round_trips_through_its_json_form() -> None:
    trace = _full_trace()
    stored = json.loads(json.dumps(trace.to_dict()))
    assert Trace.from_dict(stored) == trace
    assert Trace.from_dict(stored).to_dict() == stored
    # every optional part was set, so every key is there
    assert {"clarify", "memory", "mode_reason", "ingest", "recorder_error"} <= set(stored)
    assert stored["llm_calls"][0]["index"] == 0 and stored["llm_calls"][0]["tools"] == ["search"]
    assert stored["agent_steps"][0]["arguments"] == {"query": ["battery"]}
    assert stored["retrievals"][0]["candidates"][0]["location"] == "p. 3 · Battery"


def test_a_fresh_trace_leaves_the_optional_keys_out() -> None:
    stored = TraceBuilder("alice", "chat", "q", "workflow").finish().to_dict()
    assert not {"clarify", "memory", "mode_reason", "ingest", "recorder_error"} & set(stored)
    assert Trace.from_dict(stored).to_dict() == stored


def test_an_old_or_partial_row_reads_back_with_empty_parts() -> None:
    old = {
        "id": "t1",
        "question": "q",
        "spans": [{"id": 0, "name": "chat"}, "not a span"],
        "retrievals": [{"query": "q", "candidates": [{"chunk_id": "d1-0000", "rerank_score": None}]}],
        "answer": {"text": "hi"},
        "notices": "oops",
        "total_s": "soon",
        "surprise": {"kept": True},
    }
    trace = Trace.from_dict(old)
    assert (trace.id, trace.question, trace.mode, trace.total_s, trace.notices) == ("t1", "q", "", None, [])
    assert trace.spans == [Span(0, None, "chat", "", 0.0, None, "", None, {})]
    (search,) = trace.retrievals
    assert search.channels == [] and search.kbs is None
    assert search.candidates[0].chunk_id == "d1-0000" and search.candidates[0].rerank_score is None
    assert trace.answer is not None and trace.answer.citations == [] and not trace.answer.grounded
    assert trace.ingest is None and trace.clarify is None
    assert trace.to_dict()["surprise"] == {"kept": True}  # what this version does not know is not lost


def test_the_store_serialises_a_trace_and_returns_it_typed(store_target: Callable[[str], Any]) -> None:
    store = TraceStore(store_target("traces")).start()
    trace = _full_trace()
    try:
        store.save(trace)
        store.flush()
        assert store.get(trace.id, "alice") == trace
        assert store.get(trace.id, "bob") is None
        (summary,) = store.list("alice")
        assert (summary.id, summary.status, summary.kind) == (trace.id, trace.status, "chat")
    finally:
        store.close()


def _phases(updates: list[IngestProgress]) -> Trace:
    builder = TraceBuilder("alice", "ingest", "a.txt", "ingest")
    phases = IngestPhases(builder)
    for update in updates:
        phases.progress(update)
    phases.done()
    return builder.finish()


def _children(trace: Trace, name: str) -> list[str]:
    (parent,) = [s for s in trace.spans if s.name == name]
    return [s.name for s in trace.spans if s.parent == parent.id]


def test_typed_progress_of_a_file_becomes_its_phase_spans() -> None:
    trace = _phases(
        [
            IngestProgress("a.txt", "parse", 0.05, "parsing"),
            IngestProgress("a.txt", "chunk", 0.08, "chunking"),  # the same span as parsing
            IngestProgress("a.txt", "embed", 0.1, "3 chunks", 0, 3),
            IngestProgress("a.txt", "embed", 0.9, "embedded 3/3 chunks", 3, 3),
            IngestProgress("a.txt", "index", 0.95, "indexing"),
        ]
    )
    assert _children(trace, "ingest") == ["a.txt"]
    assert _children(trace, "a.txt") == ["parse + chunk", "embed", "index"]
    embed = next(s for s in trace.spans if s.name == "embed")
    assert embed.attributes == {"message": "3 chunks"}
    assert trace.recorder_error is None and {s.status for s in trace.spans} == {"ok"}


def test_progress_without_a_file_belongs_to_the_batch() -> None:
    trace = _phases(
        [
            IngestProgress("a.txt", "parse", 0.1, "parsing"),
            IngestProgress("b.txt", "parse", 0.5, "parsing"),
            IngestProgress(None, "index", 1.0, "updating keyword index"),
            IngestProgress(None, "index", 1.0, "updating keyword index"),
        ]
    )
    assert _children(trace, "ingest") == ["a.txt", "b.txt", "index"]
    assert _children(trace, "b.txt") == ["parse + chunk"]


def test_the_line_a_user_sees_names_the_file() -> None:
    assert IngestProgress("a.txt", "embed", 0.5, "embedded 1/3 chunks", 1, 3).text == "a.txt: embedded 1/3 chunks"
    assert IngestProgress(None, "index", 1.0, "updating keyword index").text == "updating keyword index"


def test_the_answer_keeps_its_support_check_and_reads_odd_rows() -> None:
    builder = TraceBuilder("alice", "chat", "q", "workflow")
    support = (
        SentenceSupport("90 minutes [1].", "supported", (2,), (1,), ("90",), (), 1.0, ("It lasts 90 minutes.",)),
        SentenceSupport("300 in eco mode.", "unsupported", (), (), ("300",), ("300",), 0.5),
    )
    builder.on(AnswerEvent("90 minutes [1]. 300 in eco mode.", (), True, False, support))
    stored = json.loads(json.dumps(builder.finish().to_dict()))
    answer = stored["answer"]
    assert "abstained" not in answer  # stored only when set, as answers were before
    assert answer["support"][1] == {
        "text": "300 in eco mode.",
        "status": "unsupported",
        "cited": [],
        "passages": [],
        "facts": ["300"],
        "missing": ["300"],
        "overlap": 0.5,
    }
    assert Trace.from_dict(stored).to_dict() == stored
    odd = AnswerRecord.from_dict({"text": "no", "abstained": True, "support": [{"cited": [1, "x", True]}, "junk"]})
    assert odd.abstained and odd.support[0].cited == [1] and odd.support[0].status == ""


def test_the_quote_shown_first_is_kept_with_where_it_came_from() -> None:
    builder = TraceBuilder("alice", "chat", "How long does the battery last?", "workflow")
    chunk = Chunk("d1-0003", "d1", 3, "The battery lasts 90 minutes. Charging takes two hours.", "manual.pdf", page=4)
    builder.on(
        EvidenceEvent("The battery lasts 90 minutes.", Citation(2, chunk, 0.9, ("The battery lasts 90 minutes.",)))
    )
    stored = json.loads(json.dumps(builder.finish().to_dict()))
    assert stored["evidence"] == {
        "quote": "The battery lasts 90 minutes.",
        "number": 2,
        "source": "manual.pdf",
        "chunk_id": "d1-0003",
    }
    assert Trace.from_dict(stored).to_dict() == stored
    assert "evidence" not in TraceBuilder("alice", "chat", "q", "workflow").finish().to_dict()  # only when shown
    assert Trace.from_dict({"evidence": "junk"}).evidence is None


def test_the_answer_keeps_its_confidence_and_its_checks() -> None:
    builder = TraceBuilder("alice", "chat", "How many days?", "workflow")
    checks = (ConfidenceCheck("supported", True, "1 of 1"), ConfidenceCheck("fits", False, "no number"))
    builder.on(AnswerEvent("Regularly [1].", (), True, confidence=Confidence("low", checks)))
    stored = json.loads(json.dumps(builder.finish().to_dict()))
    assert stored["answer"]["confidence"] == "low"
    assert stored["answer"]["checks"][1] == {"check": "fits", "passed": False, "detail": "no number"}
    assert Trace.from_dict(stored).to_dict() == stored
    unassessed = AnswerRecord.from_dict({"text": "No.", "confidence": "sure", "checks": ["junk"]})
    assert unassessed.confidence == "" and unassessed.checks == [] and "confidence" not in unassessed.to_dict()


def test_the_prompt_passages_keep_their_scores_and_the_calls_their_log_probabilities() -> None:
    """What the calibrator read, kept for a replay: the scores each passage had in the prompt (a cross-language
    passage the reranker did not judge keeps None) and the answer tokens' log-probabilities."""
    builder = TraceBuilder("alice", "chat", "电池能用多久？", "workflow")
    unjudged = RetrievedChunk(CHUNK, 0.02, {"vector": 1}, {"vector": 0.86}, None)
    builder.on(RetrievalEvent((unjudged,)))
    call = LLMCall("m", [{"role": "user", "content": "q"}], "十小时 [1]。", 12, 3, 0.2, logprobs=[-0.25, -1.5])
    builder.llm_call(call, builder._t0)
    stored = json.loads(json.dumps(builder.finish().to_dict()))
    assert stored["context"][0]["scores"] == {
        "fused_score": 0.02, "channel_ranks": {"vector": 1}, "channel_scores": {"vector": 0.86}, "rerank_score": None,
    }  # fmt: skip
    assert stored["llm_calls"][0]["logprobs"] == [-0.25, -1.5]
    assert Trace.from_dict(stored).to_dict() == stored
    old = Trace.from_dict({"context": [{"chunk_id": "d1-0000", "text": "x"}], "llm_calls": [{"completion": "x"}]})
    assert old.context[0].scores is None and old.llm_calls[0].logprobs == []  # written before they were kept
