"""The chat renderer turns engine events into messages; tested with synthetic events, no model, no browser."""

from __future__ import annotations

from ragapp.tracing.events import AnswerEvent, NoticeEvent, RetrievalEvent, StageEvent, TokenEvent
from ragapp.types import Chunk, Citation, RetrievedChunk
from ragapp.ui.render import TurnView, citation_title
from ragapp.ui.state import Session

CHUNK = Chunk("d1-0000", "d1", 0, "Batteries are covered for 12 months.", "warranty.pdf", page=3, heading="Battery")
RETRIEVED = RetrievedChunk(CHUNK, 0.03, {"vector": 1}, {"vector": 0.9})


def _contents(view: TurnView) -> list[str]:
    return [str(m.content) for m in view.messages()]


def test_stage_is_pending_then_done_with_duration_and_summary() -> None:
    view = TurnView()
    view.apply(StageEvent("retrieve", "started"))
    (step,) = view.messages()
    assert step.metadata == {"title": "🔎 Searching the knowledge base", "status": "pending"}
    view.apply(
        StageEvent(
            "retrieve",
            "finished",
            duration_s=0.123,
            detail={"channels": {"vector": 20, "keyword": 7}, "candidates": 22, "relevant": 5, "reranker": "off"},
        )
    )
    (step,) = view.messages()
    assert step.metadata["status"] == "done"
    assert step.metadata["duration"] == 0.12
    assert step.content == "vector: 20 hits, keyword: 7 hits · 22 fused candidates · 5 relevant · reranker: off"


def test_failed_stage_is_marked_with_its_error() -> None:
    view = TurnView()
    view.apply(StageEvent("generate", "started"))
    view.apply(StageEvent("generate", "failed", duration_s=1.0, error="model server unreachable"))
    (step,) = view.messages()
    assert step.metadata["title"].startswith("❌")
    assert step.content == "model server unreachable"


def test_tokens_stream_into_one_answer_then_citations_follow() -> None:
    view = TurnView()
    view.apply(RetrievalEvent((RETRIEVED,)))
    for piece in ["Batteries ", "are covered ", "for 12 months [1]."]:
        view.apply(TokenEvent(piece))
    assert _contents(view) == ["Batteries are covered for 12 months [1]."]
    view.apply(AnswerEvent("Batteries are covered for 12 months [1].", (Citation(1, CHUNK),), grounded=True))
    answer, citation = view.messages()
    assert answer.content == "Batteries are covered for 12 months [1]."
    assert citation.metadata["title"] == "📄 [1] warranty.pdf · p. 3 · Battery"
    assert citation.content == "Batteries are covered for 12 months."


def test_answer_without_citations_lists_the_passages_consulted() -> None:
    view = TurnView()
    view.apply(RetrievalEvent((RETRIEVED,)))
    view.apply(AnswerEvent("Twelve months.", (), grounded=True))
    _answer, consulted = view.messages()
    assert "Passages consulted" in consulted.metadata["title"]
    assert consulted.content == "- warranty.pdf · p. 3 · Battery"


def test_not_found_answer_has_no_sources() -> None:
    view = TurnView()
    view.apply(RetrievalEvent(()))
    view.apply(AnswerEvent("Not in the knowledge base.", (), grounded=False))
    assert _contents(view) == ["Not in the knowledge base."]


def test_notice_is_shown_as_a_warning_line() -> None:
    view = TurnView()
    view.apply(NoticeEvent("keyword search timed out after 5 s", level="warning"))
    assert _contents(view) == ["⚠️ keyword search timed out after 5 s"]


def test_citation_passage_markup_is_escaped() -> None:
    hostile = Chunk("d2-0000", "d2", 0, "<img src=x onerror=alert(1)>", "evil.html")
    view = TurnView()
    view.apply(AnswerEvent("See [1].", (Citation(1, hostile),), grounded=True))
    _answer, citation = view.messages()
    assert "<img" not in str(citation.content)
    assert citation_title(Citation(1, hostile)) == "[1] evil.html"


def test_session_keeps_only_the_most_recent_turns() -> None:
    session = Session(max_turns=2)
    for n in range(4):
        session.remember(f"q{n}", f"a{n}")
    assert [t.content for t in session.recent()] == ["q2", "a2", "q3", "a3"]
