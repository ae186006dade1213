"""The Traces tab's views, charts and test-case scoring: pure functions over hand-built trace dicts and
retrieval results (no engine, no model, no gradio)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
import pytest

from ragapp.core.events import AnswerEvent
from ragapp.core.serial import dump, load
from ragapp.core.types import (
    ChannelHit,
    ChannelResult,
    Chunk,
    Confidence,
    ConfidenceCheck,
    LLMCall,
    RelevanceDecision,
    RetrievalResult,
    RetrievedChunk,
    Said,
    Scope,
)
from ragapp.qa.answer_check import composed
from ragapp.testcases.scoring import CaseReport, CaseResult, documents_ranked, evaluate_cases
from ragapp.testcases.store import TestCase
from ragapp.tracing.builder import TraceBuilder
from ragapp.tracing.model import Trace
from ragapp.tracing.records import RetrievalRecord
from ragapp.tracing.store import TraceSummary
from ragapp.ui import trace_charts as charts
from ragapp.ui import trace_views
from tests.text import English, shown

views = English(trace_views)  # results as an English page shows them

# -- a hand-built search ---------------------------------------------------------------------------
# vector: doca, docb, docc; keyword: docb, docd. RRF fuses docb, doca, docd, docc; candidate_limit 3 cuts docc.
# The reranker puts doca first; top_k 2 lets doca and docb into the prompt; docd scores below min_rerank_score.


def _candidate(doc: str, fused: int, final: int, ranks: dict[str, int], rerank: float | None, prompt: bool) -> dict:
    contributions = {ch: 1 / (60 + r) for ch, r in ranks.items()}
    return {
        "chunk_id": f"{doc}-0000",
        "doc_id": doc,
        "source": f"{doc}.pdf",
        "location": "p. 3" if doc == "doca" else "",
        "text": f"text of {doc} " * 3,
        "fused_rank": fused,
        "fused_score": sum(contributions.values()),
        "channel_ranks": ranks,
        "channel_scores": {},
        "contributions": contributions,
        "rerank_score": rerank,
        "final_rank": final,
        "in_prompt": prompt,
    }


SEARCH_JSON: dict[str, Any] = {
    "query": "battery life",
    "kbs": None,
    "cached": False,
    "seconds": 0.012,
    "degraded": [],
    "timings": {},
    "settings": {
        "fusion": "rrf",
        "rrf_k": 60,
        "weights": {"vector": 1.0, "keyword": 1.0},
        "recall_budget": 20,
        "candidate_limit": 3,
        "context_top_k": 2,
        "min_rerank_score": 0.0,
        "reranker": "x",
        "top_k": 2,
    },
    "channels": [
        {
            "channel": "vector",
            "seconds": 0.003,
            "hits": [
                {"chunk_id": "doca-0001", "rank": 1, "score": 0.91},
                {"chunk_id": "docb-0000", "rank": 2, "score": 0.85},
                {"chunk_id": "docc-0003", "rank": 3, "score": 0.80},
            ],
        },
        {
            "channel": "keyword",
            "seconds": 0.002,
            "hits": [
                {"chunk_id": "docb-0000", "rank": 1, "score": 7.5},
                {"chunk_id": "docd-0002", "rank": 2, "score": 3},
            ],
        },
    ],
    "candidates": [
        _candidate("doca", 2, 1, {"vector": 1}, 0.8, True),
        _candidate("docb", 1, 2, {"vector": 2, "keyword": 1}, 0.5, True),
        _candidate("docd", 3, 3, {"keyword": 2}, -3.0, False),
    ],
}
SEARCH = RetrievalRecord.from_dict(SEARCH_JSON)


def _trace(**extra: Any) -> Trace:
    trace: dict[str, Any] = {
        "id": "abc123",
        "kind": "chat",
        "question": "How long does the battery last?",
        "mode": "workflow",
        "status": "ok",
        "total_s": 1.5,
        "started_at": "2024-05-01T10:20:30+00:00",
        "errors": [],
        "degradations": [],
        "notices": [],
        "spans": [],
        "retrievals": [SEARCH_JSON],
        "llm_calls": [],
        "routing": [],
        "context": [],
        "answer": None,
    }
    return Trace.from_dict(trace | extra)


# -- the fused table -------------------------------------------------------------------------------


def test_fused_headers_name_each_channel_and_the_fusion() -> None:
    assert views.fused_headers(SEARCH) == [
        *views.FUSED_HEADERS_START,
        "Rank · vector",
        "Rank · keyword",
        "RRF · vector",
        "RRF · keyword",
        *views.FUSED_HEADERS_END,
    ]
    blended = dataclasses.replace(SEARCH, settings={"fusion": "zscore"})
    assert views.fused_headers(blended)[7:9] == ["zscore · vector", "zscore · keyword"]


def test_fused_rows_show_movement_channel_ranks_and_contributions() -> None:
    rows = views.fused_rows(SEARCH)
    assert len(rows[0]) == len(views.fused_headers(SEARCH))
    a, b, d = rows
    assert a[:4] == [1, "↑1", 2, "doca.pdf (p. 3)"]
    assert b[:4] == [2, "↓1", 1, "docb.pdf"]
    assert d[:4] == [3, "=", 3, "docd.pdf"]
    assert a[4] == "text of doca text of doca text of doca"  # whitespace folded
    assert a[5:9] == [1, "—", round(1 / 61, 4), "—"]
    assert b[5:9] == [2, 1, round(1 / 62, 4), round(1 / 61, 4)]
    assert d[5:9] == ["—", 2, "—", round(1 / 62, 4)]
    assert b[9] == round(1 / 62 + 1 / 61, 4)
    assert [r[10] for r in rows] == [0.8, 0.5, -3.0]
    assert [r[11] for r in rows] == ["✓", "✓", ""]


def test_fused_rows_take_the_prompt_as_recorded_and_show_a_missing_rerank_score() -> None:
    unreranked = dataclasses.replace(SEARCH, candidates=[dataclasses.replace(SEARCH.candidates[2], rerank_score=None)])
    (row,) = views.fused_rows(unreranked, in_prompt={"docd-0000"})
    assert row[10] == "—"
    assert row[11] == "✓"
    assert [r[11] for r in views.fused_rows(SEARCH, in_prompt=set())] == ["", "", ""]


def test_a_search_recorded_by_the_builder_fills_the_fused_table() -> None:
    chunk = Chunk("d1-0000", "d1", 0, "Ten hours.", "a.pdf", page=2)
    candidate = RetrievedChunk(chunk, 1 / 61, {"keyword": 1}, {"keyword": 7.0}, 0.7)
    channel = ChannelResult("keyword", (ChannelHit("d1-0000", 1, 7.0),), 0.002)
    settings = {"fusion": "rrf", "rrf_k": 60, "top_k": 5}
    result = RetrievalResult(
        "q", (candidate,), (candidate,), (channel,), settings=settings, contributions={"d1-0000": {"keyword": 1 / 61}}
    )
    builder = TraceBuilder("alice", "chat", "q", "workflow")
    builder.retrieval(result, 0.01)
    (search,) = builder.finish().retrievals
    assert views.fused_headers(search)[5:7] == ["Rank · keyword", "RRF · keyword"]
    assert views.fused_rows(search) == [[1, "=", 1, "a.pdf (p. 2)", "Ten hours.", 1, 0.0164, 0.0164, 0.7, "✓"]]
    assert views.channel_rows(search, {"d1": "a.pdf"}) == [["keyword", 1, 7.0, "a.pdf", "d1-0000"]]


# -- why not ---------------------------------------------------------------------------------------


def test_why_not_a_document_that_reached_the_prompt() -> None:
    text = views.why_not(_trace(), "doca", "a.pdf")
    assert "Why not **a.pdf**" in text
    assert "vector: best chunk at rank **1** (score 0.9100)" in text
    assert "keyword: not in its top 2" in text
    assert "after fusion: rank **2**" in text
    assert "after rerank: rank **1** (rerank score 0.8000)" in text
    assert "reached the prompt" in text


def test_why_not_a_document_a_channel_found_but_fusion_cut() -> None:
    text = views.why_not(_trace(), "docc", "c.pdf")
    assert "vector: best chunk at rank **3**" in text
    assert "fused below the 3 candidates passed to the reranker" in text
    assert "reached the prompt" not in text and "never retrieved" not in text


def test_why_not_a_document_no_channel_returned() -> None:
    text = views.why_not(_trace(), "doce", "e.pdf")
    assert "never retrieved" in text
    assert "fused below" not in text and "reached the prompt" not in text


def test_why_not_a_candidate_the_relevance_threshold_dropped() -> None:
    text = views.why_not(_trace(), "docd", "d.pdf")
    assert "dropped by the relevance threshold (min_rerank_score 0.0)" in text


def test_why_not_without_a_search() -> None:
    assert "ran no search" in views.why_not(_trace(retrievals=[]), "doca", "a.pdf")


# -- the other tables ------------------------------------------------------------------------------


def test_channel_rows_list_each_channels_hits_with_document_names() -> None:
    rows = views.channel_rows(SEARCH, {"doca": "a.pdf", "docb": "b.pdf", "docd": "d.pdf"})
    assert rows == [
        ["vector", 1, 0.91, "a.pdf", "doca-0001"],
        ["vector", 2, 0.85, "b.pdf", "docb-0000"],
        ["vector", 3, 0.8, "🗑️", "docc-0003"],
        ["keyword", 1, 7.5, "b.pdf", "docb-0000"],
        ["keyword", 2, 3, "d.pdf", "docd-0002"],
    ]


def test_intent_rows_mark_the_chosen_leaves() -> None:
    battery = {"code": "K1", "path": "Lumen > Battery", "kind": "KB", "score": 0.9}
    case = {"code": "K2", "path": "Lumen > Case", "kind": "KB", "score": 0.3}
    trace = _trace(
        routing=[
            {
                "question": "battery?",
                "action": "route",
                "reason": "clear",
                "intents": [battery],
                "scores": [battery, case],
            },
            {"question": "hello", "action": "fallback", "reason": "no leaf", "intents": [], "scores": []},
        ]
    )
    assert views.intent_rows(trace) == [
        ["battery?", "✓ Lumen > Battery", 0.9, "route", "clear"],
        ["battery?", "Lumen > Case", 0.3, "route", "clear"],
        ["hello", "—", None, "search everything", "no leaf"],  # the action in words
    ]  # a trace stored before the reasons were records: their English as it is


def test_a_routing_reason_kept_as_records_reads_back_in_both_languages() -> None:
    said = [Said("routing.routed", {"paths": "Lumen > Battery (0.90)"}), Said("routing.no_model_call", {"reply": "e"})]
    stored = {"question": "q", "action": "route", "reason": "-", "intents": [], "scores": [], "said": said}
    trace = Trace.from_dict(_trace(routing=[dump(stored)]).to_dict())
    (row,) = trace_views.intent_rows(trace)
    assert shown(row[4], "en") == "routed to Lumen &gt; Battery (0.90) (no model call: e)"
    assert shown(row[4], "zh") == "路由到 Lumen &gt; Battery (0.90)（未调用模型：e）"


def test_summary_rows() -> None:
    long = "why " * 40
    items = [
        TraceSummary("t1", "2024-05-01T10:20:30+00:00", long, "agent", "chat", 1.234, "degraded", ("a", "b")),
        TraceSummary("t2", "not a date", "q", "ingest", "ingest", None, "cancelled", ()),
    ]
    first, second = views.summary_rows(items)
    assert first[0] == "2024-05-01 10:20:30"
    assert len(first[1]) == 90 and first[1].endswith("…")
    assert first[2:] == ["agent", "1.23", "⚠️ degraded", "", "a; b"]
    assert second == ["not a date", "q", "ingest", "", "⏹️ cancelled", "", ""]


def test_summary_rows_show_the_feedback_and_the_start_of_its_comment() -> None:
    down = TraceSummary("t1", "2024-05-01T10:20:30+00:00", "q", "workflow", "chat", 1.0, "ok", (), "down", "x" * 100)
    up = TraceSummary("t2", "2024-05-01T10:20:30+00:00", "q", "workflow", "chat", 1.0, "ok", (), "up", "")
    (row_down, row_up) = views.summary_rows([down, up])
    assert row_down[5].startswith("👎 xxx") and len(row_down[5]) < 70
    assert row_up[5] == "👍"


def test_feedback_line_escapes_the_comment() -> None:
    line = views.feedback_line("down", "wrong <img src=x> [link](http://a.b)")
    assert "👎" in line and "<img" not in line and "&lt;img" in line
    assert views.feedback_line("", "") == ""


def test_header_sets_errors_and_degradations_apart() -> None:
    trace = _trace(
        status="degraded",
        mode_reason="Auto chose workflow: a single question",
        rewrite={"original": "and it?", "standalone": "battery and case?", "sub_questions": ["battery?", "case?"]},
        errors=["generate: LLMError: down"],
        degradations=["keyword search timed out"],
        notices=[{"level": "info", "message": "answering from 2 chunks"}, {"level": "warning", "message": "w"}],
        recorder_error="recording failed at retrieval",
        answer={"text": "Ten\nhours.", "grounded": True, "citations": []},
    )
    text = views.header(trace)
    assert text.startswith("### ⚠️ How long does the battery last?")
    assert "status **degraded**" in text and "total **1.50 s**" in text and "id `abc123`" in text
    assert "2024-05-01 10:20:30 UTC" in text
    assert "_Auto chose workflow: a single question_" in text
    assert "**Searched as:** battery and case?" in text and "part 2: case?" in text
    assert "> ❌ **Error:** generate: LLMError: down" in text
    assert "> ⚠️ **Degraded:** keyword search timed out" in text
    assert "> ℹ️ answering from 2 chunks" in text and "> ℹ️ w" not in text
    assert "may be incomplete: recording failed at retrieval" in text
    assert "**Answer** (grounded):" in text and text.endswith("> Ten\n> hours.")  # the answer keeps its lines


def test_header_of_an_old_trace_with_missing_keys() -> None:
    text = views.header(Trace.from_dict({"question": "q"}))
    assert "mode **?**" in text and "Error" not in text and "Degraded" not in text


def test_llm_markdown_shows_the_exact_messages_and_completion() -> None:
    builder = TraceBuilder("alice", "chat", "q", "workflow")
    stage = builder.open("generate", "stage")
    messages = [
        {"role": "system", "content": "Answer only from the passages.\n[1] Batteries last ten hours."},
        {"role": "user", "content": "How long? ```code```"},
    ]
    call = LLMCall("fake-model", messages, "Ten hours [1].", 31, 5, 0.25, json=True, error="RuntimeError: cut")
    builder.llm_call(call, builder._t0 + builder.now())
    builder.close(stage)
    text = views.llm_markdown(builder.finish())
    assert "#### Call 1 · generate · fake-model" in text
    assert "31 → 5 tokens (estimated) · 0.25 s · JSON" in text
    assert "> ❌ RuntimeError: cut" in text
    assert "**system**\n```text\nAnswer only from the passages.\n[1] Batteries last ten hours.\n```" in text
    assert "How long? ʼʼʼcodeʼʼʼ" in text  # a fence inside a message cannot close the block early
    assert "**completion**\n```text\nTen hours [1].\n```" in text


def test_llm_markdown_without_calls() -> None:
    assert views.llm_markdown(_trace()) == "_No model call in this request._"


def test_cited_documents_prefer_citations_then_the_context() -> None:
    cited = _trace(
        answer={"text": "", "citations": [{"source": "b.pdf"}, {"source": "a.pdf"}, {"source": "b.pdf"}]},
        context=[{"source": "c.pdf"}],
    )
    assert views.cited_documents(cited) == ["b.pdf", "a.pdf"]
    uncited = _trace(answer={"text": "", "citations": []}, context=[{"source": "c.pdf"}, {"source": "c.pdf"}])
    assert views.cited_documents(uncited) == ["c.pdf"]
    assert views.cited_documents(_trace()) == []


def test_doc_of_reads_the_app_chunk_ids() -> None:
    assert views.doc_of("abcdef-0012") == "abcdef"
    assert views.doc_of("my-doc-0001") == "my-doc"
    assert views.doc_of("no-ordinal") == "no-ordinal"


# -- charts ----------------------------------------------------------------------------------------


def _span(sid: int, parent: int | None, name: str, kind: str, start: float, duration: float, status: str = "ok"):
    return {
        "id": sid,
        "parent": parent,
        "name": name,
        "kind": kind,
        "start_s": start,
        "duration_s": duration,
        "status": status,
        "error": "boom" if status == "failed" else None,
        "attributes": {},
    }


SPANS = [
    _span(0, None, "chat", "request", 0.0, 1.0),
    _span(1, 0, "generate", "stage", 0.5, 0.4),
    _span(2, 0, "retrieve", "stage", 0.1, 0.3),
    _span(3, 2, "channel vector", "channel", 0.1, 0.05),
    _span(4, 1, "llm", "llm", 0.5, 0.3, "failed"),
    _span(5, 1, "stream", "stage", 0.6, 0.2, "unfinished"),
]


def test_waterfall_draws_one_bar_per_span_parents_first() -> None:
    figure = charts.waterfall(_trace(spans=SPANS))
    assert isinstance(figure, go.Figure)
    (bar,) = figure.data
    assert isinstance(bar, go.Bar)
    ids = [int(label.rsplit("#", 1)[1]) for label in bar.y]
    assert sorted(ids) == [s["id"] for s in SPANS]
    position = {sid: i for i, sid in enumerate(ids)}
    for span in SPANS:
        if span["parent"] is not None:
            assert position[span["parent"]] < position[span["id"]]
    assert ids == [0, 2, 3, 1, 4, 5]  # depth-first, siblings by start time
    assert list(bar.y)[2] == "· · channel vector #3"
    by_id = dict(zip(ids, zip(bar.base, bar.x, bar.marker.color, strict=True), strict=True))
    assert by_id[3][:2] == pytest.approx((100.0, 50.0))
    assert by_id[4][2] == by_id[5][2] == charts.FAILED
    assert by_id[0][2] == charts.KIND_COLOURS["request"] and by_id[3][2] == charts.KIND_COLOURS["channel"]
    assert charts.FAILED not in {by_id[i][2] for i in (0, 1, 2, 3)}


def test_waterfall_of_a_recorded_trace() -> None:
    builder = TraceBuilder("alice", "chat", "q", "workflow")
    outer = builder.open("answer", "stage")
    inner = builder.open("generate", "stage")
    builder.close(inner, "failed", error="boom")
    builder.close(outer)
    trace = builder.finish()
    (bar,) = charts.waterfall(trace).data
    assert list(bar.y) == ["chat #0", "· answer #1", "· · generate #2"]
    assert list(bar.marker.color)[2] == charts.FAILED


def _result(name: str, hit: bool, mrr: float, ndcg: float) -> CaseResult:
    return CaseResult(name, ("a.pdf",), ("a.pdf",), 1 if hit else None, hit, mrr, ndcg, 0.01)


def test_metrics_chart_groups_one_bar_trace_per_report() -> None:
    current = CaseReport("current", (_result("q1", True, 1.0, 1.0), _result("q2", False, 0.0, 0.0)), k=10)
    trying = CaseReport("trying", (_result("q1", True, 0.5, 0.63), _result("q2", True, 1.0, 1.0)), k=10)
    figure = charts.metrics_chart([current, trying])
    assert [t.name for t in figure.data] == ["①", "②"]  # a figure says no words: the runs are named in the table
    assert list(figure.data[0].x) == ["Hit", "MRR@10", "nDCG@10"]
    assert list(figure.data[0].y) == [0.5, 0.5, 0.5]
    assert list(figure.data[1].y) == pytest.approx([1.0, 0.75, 0.815])
    assert figure.layout.barmode == "group"
    assert figure.layout.title.text == "n = 2"  # test cases
    assert charts.metrics_chart([]).layout.title.text == "n = 0"


# -- test cases ------------------------------------------------------------------------------------


def _chunk(source: str, n: int = 0) -> RetrievedChunk:
    doc = source.removesuffix(".pdf")
    return RetrievedChunk(Chunk(f"{doc}-{n:04d}", doc, n, "text", source), 0.1, {"vector": 1}, {"vector": 0.9})


def _retrieval(query: str, candidates: Sequence[str], prompt: int) -> RetrievalResult:
    chunks = tuple(_chunk(s, i) for i, s in enumerate(candidates))
    return RetrievalResult(query, chunks[:prompt], chunks, ())


def _case(question: str, expected: tuple[str, ...], kbs: tuple[str, ...] | None = None) -> TestCase:
    return TestCase(1, "alice", question, expected, kbs, "2024-05-01T10:20:30+00:00")


class FakeRetrieve:
    def __init__(self, results: dict[str, RetrievalResult]) -> None:
        self.results = results
        self.calls: list[tuple[str, Scope]] = []

    def __call__(self, question: str, kbs: Scope) -> RetrievalResult:
        self.calls.append((question, kbs))
        return self.results[question]


def test_evaluate_cases_scores_hits_ranks_mrr_and_ndcg() -> None:
    retrieve = FakeRetrieve(
        {
            # b.pdf's best chunk is the 2nd document; a second chunk of a.pdf does not count again
            "second": _retrieval("second", ["a.pdf", "a.pdf", "b.pdf", "c.pdf"], prompt=3),
            "miss": _retrieval("miss", ["a.pdf", "c.pdf"], prompt=2),
            "ranked, not in prompt": _retrieval("ranked, not in prompt", ["a.pdf", "b.pdf"], prompt=1),
        }
    )
    cases = [
        _case("second", ("b.pdf",)),
        _case("miss", ("z.pdf",), kbs=("manuals",)),
        _case("ranked, not in prompt", ("b.pdf",)),
    ]
    report = evaluate_cases(cases, retrieve, "current", k=10, settings={"fusion": "rrf"})
    assert retrieve.calls == [("second", None), ("miss", frozenset({"manuals"})), ("ranked, not in prompt", None)]
    second, miss, unprompted = report.results
    assert second.ranked == ("a.pdf", "b.pdf", "c.pdf")
    assert (second.hit, second.first_rank, second.mrr) == (True, 2, 0.5)
    assert second.ndcg == pytest.approx(1 / math.log2(3))
    assert (miss.hit, miss.first_rank, miss.mrr, miss.ndcg) == (False, None, 0.0, 0.0)
    assert (unprompted.hit, unprompted.first_rank, unprompted.mrr) == (False, 2, 0.5)  # hit means it reached the prompt
    assert second.expected == ("b.pdf",) and second.seconds >= 0
    assert report.label == "current" and report.settings == {"fusion": "rrf"} and report.k == 10
    assert report.hit_rate == pytest.approx(1 / 3)
    assert report.mrr == pytest.approx(1 / 3)
    assert report.summary() == {"hit rate": report.hit_rate, "MRR@10": report.mrr, "nDCG@10": report.ndcg}


def test_evaluate_cases_counts_only_the_top_k_documents() -> None:
    retrieve = FakeRetrieve({"second": _retrieval("second", ["a.pdf", "b.pdf"], prompt=2)})
    (result,) = evaluate_cases([_case("second", ("b.pdf",))], retrieve, "k1", k=1).results
    assert result.ranked == ("a.pdf",)
    assert (result.first_rank, result.mrr, result.ndcg) == (None, 0.0, 0.0)
    assert result.hit is True  # the prompt still had it


def test_documents_ranked_keeps_each_document_once_at_its_best_chunk() -> None:
    result = _retrieval("q", ["b.pdf", "a.pdf", "b.pdf", "c.pdf"], prompt=1)
    assert documents_ranked(result) == ["b.pdf", "a.pdf", "c.pdf"]


def test_an_empty_report_scores_zero() -> None:
    report = CaseReport("none", (), k=5)
    assert report.summary() == {"hit rate": 0.0, "MRR@5": 0.0, "nDCG@5": 0.0}


def test_header_shows_the_support_check_per_sentence() -> None:
    support = [
        {
            "text": "90 minutes [1].",
            "status": "supported",
            "cited": [2],
            "passages": [1],
            "facts": ["90"],
            "overlap": 1,
        },
        {"text": "300 in eco mode.", "status": "unsupported", "facts": ["300"], "missing": ["300"], "overlap": 0.5},
        {"text": "Sure.", "status": "neutral"},
    ]
    trace = _trace(answer={"text": "No.", "grounded": False, "abstained": True, "citations": [], "support": support})
    text = views.header(trace)
    assert "**Answer** (refused):" in text
    assert "- ✅ “90 minutes \\[1\\].” cites [1] (facts: 90; words 100%; the model cited [2])" in text
    assert "- ⚠️ “300 in eco mode.” not in the passages (missing: 300) (facts: 300; words 50%)" in text
    assert "- · “Sure.” no key facts to check (words 0%)" in text


def test_header_shows_the_confidence_and_its_checks() -> None:
    checks = [{"check": "supported", "passed": True, "detail": "1 of 1"}, {"check": "fits", "passed": False}]
    answer = {"text": "Regularly.", "grounded": True, "citations": [], "confidence": "low", "checks": checks}
    text = views.header(_trace(answer=answer))
    assert "**Confidence: not sure**" in text and "- ✅ supported: 1 of 1" in text and "- ⚠️ fits" in text


def test_header_shows_the_quote_shown_first() -> None:
    quote = {"quote": "The battery lasts 90 *minutes*.", "number": 2, "source": "manual.pdf", "chunk_id": "d1-0003"}
    text = views.header(_trace(evidence=quote, answer={"text": "90 minutes [2].", "grounded": True, "citations": []}))
    assert "**Quoted first** [2] manual.pdf: “The battery lasts 90 \\*minutes\\*.”" in text
    assert text.index("Quoted first") < text.index("**Answer**")
    assert "Quoted first" not in views.header(_trace(answer={"text": "No.", "grounded": False, "citations": []}))


# -- the relevance gate's decisions ----------------------------------------------------------------


def test_the_relevance_decision_per_chunk_is_recorded_shown_and_read_back() -> None:
    chunk = Chunk("d1-0000", "d1", 0, "Ten hours.", "a.pdf", page=2)
    low = RetrievedChunk(chunk, 1 / 61, {"keyword": 1, "vector": 1}, {"keyword": 7.0, "vector": 0.86}, 0.1)
    other = RetrievedChunk(Chunk("d2-0000", "d2", 0, "Off topic.", "b.pdf"), 1 / 62, {"vector": 2}, {}, 0.05)
    decisions = {
        "d1-0000": RelevanceDecision(True, Said("relevance.agree", {"ranks": "keyword 1, vector 1", "rank": 1}), 0.1),
        "d2-0000": RelevanceDecision(False, Said("relevance.rerank_below", {"min": 0.2}), 0.05),
    }
    result = RetrievalResult("q", (low,), (low, other), (), settings={"top_k": 5}, decisions=decisions)
    builder = TraceBuilder("alice", "chat", "q", "workflow")
    builder.retrieval(result, 0.01)
    (search,) = builder.trace.retrievals
    assert [c.relevance for c in search.candidates] == [
        "kept: both channels agree (keyword 1, vector 1; fused rank 1)",
        "dropped: rerank score below 0.2",
    ]
    assert RetrievalRecord.from_dict(search.to_dict()) == search
    assert views.relevance_lines(search).splitlines() == [
        "- 1. a.pdf (p. 2) — kept: both channels agree (keyword 1, vector 1; fused rank 1)",
        "- 2. b.pdf — dropped: rerank score below 0.2",
    ]
    assert "relevance gate: 1 kept, 1 dropped" in views.search_note(search)
    assert shown(trace_views.relevance_lines(search), "zh").splitlines()[1] == "- 2. b.pdf — 丢弃: 重排得分低于 0.2"
    stored = search.to_dict()
    for row in stored["candidates"]:  # a trace written before the gate's records were kept: its English as is
        del row["said"]
    assert shown(trace_views.relevance_lines(RetrievalRecord.from_dict(stored)), "zh").splitlines()[1] == (
        "- 2. b.pdf — 丢弃: rerank score below 0.2"
    )
    trace = _trace(retrievals=[search.to_dict()])
    assert "⛔ relevance gate: dropped: rerank score below 0.2" in views.why_not(trace, "d2", "b.pdf")
    assert "reached the prompt** (kept: both channels agree" in views.why_not(trace, "d1", "a.pdf")


def test_a_trace_recorded_before_the_gate_gave_reasons_still_opens() -> None:
    assert [c.relevance for c in SEARCH.candidates] == ["", "", ""]  # SEARCH_JSON rows have no "relevance"
    assert views.relevance_lines(SEARCH) == ""
    assert "relevance gate" not in views.search_note(SEARCH)


def test_why_not_says_when_a_base_no_intent_covers_was_searched_and_why() -> None:
    widened = dict(SEARCH_JSON, kbs=["default", "demo"])
    routing = {
        "question": "What does foo_open return?",
        "action": "route",
        "reason": "routed to Shipping (0.12)",
        "intents": [{"code": "shipping", "path": "Shipping", "kind": "KB", "score": 0.12}],
        "scores": [],
        "fit": 0.12,
        "also": ["default"],
        "fit_min": 0.5,
    }
    weak = {"message": "…", "widened": {"added": ["manuals"], "best": 0.21, "below": 0.5}}
    trace = _trace(retrievals=[SEARCH_JSON, widened, dict(SEARCH_JSON, kbs=["demo", "manuals"])], routing=[routing])
    trace = dataclasses.replace(trace, notices=Trace.from_dict({"notices": [weak]}).notices)
    text = views.why_not(trace, "doca", "a.pdf")
    no_fit = "Also searched **default**, which no intent covers: no intent fits this question well (0.12 < 0.50)."
    assert text.count(no_fit) == 1  # on the search that read default only
    assert "held nothing strong (best 0.21 < 0.50): also searched **manuals**" in text
    chinese = trace_views.why_not(trace, "doca", "a.pdf")
    assert "没有哪个意图与这个问题足够匹配（0.12 < 0.50）" in chinese and "最高 0.21 < 0.50" in chinese
    # A trace written before (no fit, no also) reads back and says nothing of the kind.
    assert "no intent covers" not in views.why_not(_trace(routing=[{**routing, "also": []}]), "doca", "a.pdf")


def test_a_check_behind_the_confidence_is_worded_from_its_records_and_an_old_one_as_stored() -> None:
    fits = ConfidenceCheck.worded("fits", True, Said("confidence.kind_given", {"kind": "number"}))
    parts = ["How long does it last?", "What year was it made?"]
    first = AnswerEvent("It lasts 10 hours [1].", (), grounded=True, confidence=Confidence("high", (fits,)))
    answer = composed("; ".join(parts), parts, [first, AnswerEvent("Not found.", (), grounded=False, abstained=True)])
    assert answer.confidence is not None
    lines = [trace_views.check_line(c) for c in answer.confidence.checks]
    assert [shown(line, "en") for line in lines] == [
        "- ✅ fits: part 1: gives the number asked for",
        "- ⚠️ parts: 1 of 2 parts not in the documents",
    ]
    assert [shown(line, "zh") for line in lines] == [
        "- ✅ 对题: 第 1 部分：给出了所问的数字",
        "- ⚠️ 各部分: 2 个部分中有 1 个在文档中找不到",
    ]
    stored = load(ConfidenceCheck, {"check": "fits", "passed": True, "detail": "gives the number asked for"})
    assert shown(trace_views.check_line(stored), "zh") == "- ✅ 对题: gives the number asked for"


def test_a_chunk_found_through_a_written_question_says_so_in_the_trace_and_why_not() -> None:
    chunk = Chunk("d1-0000", "d1", 0, "Descale the pump every 200 hours.", "pump.txt")
    candidate = RetrievedChunk(chunk, 1 / 61, {"keyword": 1}, {"keyword": 7.0}, 0.7)
    asked = "How often is limescale removed?"
    channel = ChannelResult("keyword", (ChannelHit("d1-0000", 1, 7.0, via=asked),), 0.002)
    result = RetrievalResult("q", (candidate,), (candidate,), (channel,), settings={"fusion": "rrf", "top_k": 5})
    builder = TraceBuilder("alice", "chat", "q", "workflow")
    builder.retrieval(result, 0.01)
    trace = builder.finish()
    (search,) = trace.retrievals
    assert RetrievalRecord.from_dict(search.to_dict()) == search  # the question is kept with the hit
    assert views.channel_rows(search, {"d1": "pump.txt"}) == [["keyword", 1, 7.0, f"pump.txt ← ❓ {asked}", "d1-0000"]]
    text = views.why_not(trace, "d1", "pump.txt")
    assert f"found through a question written for it: “{asked}”" in text
    chinese = Said("search.via_question", {"question": asked}).worded(True, str)
    assert chinese == f"通过为它生成的问题找到：“{asked}”"
