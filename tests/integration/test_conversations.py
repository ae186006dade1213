"""Conversations and feedback through the UI handlers over a real engine (real stores and retrieval, scripted
model): a chat is kept after each answer and comes back exactly as shown, memory included; a deleted document's
citation is marked; a thumbs-down lands on the answer's trace, filters the Traces list, and becomes a test case."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import gradio as gr
import pytest

from ragapp.core.access import Actor
from ragapp.core.errors import AccessDenied
from ragapp.ui.chats import ChatHistory, Feedback
from ragapp.ui.conversation_view import DELETED_MARK, records_of
from ragapp.ui.handlers import Handlers
from ragapp.ui.state import Session
from ragapp.ui.traces import TraceHandlers
from tests.text import shown

pytestmark = pytest.mark.integration

DOC = "# Robots\n\nThe Alpha robot battery lasts 90 minutes on a full charge.\n"


@pytest.fixture
def rig(make_engine: Callable[..., Any], tmp_path: Path) -> Any:
    rig = make_engine()
    path = tmp_path / "robots.md"
    path.write_text(DOC, "utf-8")
    (result,) = rig.engine.library.ingest([(path, path.name)])
    assert result.status == "added"
    return rig


def _answer(rig: Any, owner: str, question: str, chat: list[Any], session: Session | None) -> tuple[list[Any], Session]:
    rig.llm.enqueue("The Alpha battery lasts 90 minutes [1].")
    out = None
    for out in Handlers(rig.engine).respond(question, chat, session, None, "workflow", owner):  # noqa: B007
        pass
    assert out is not None
    _, chat, session = out
    session, kept, _listing = ChatHistory(rig.engine).persist(session, owner)
    assert kept == session.conversation_id
    return chat, session


def _shown(messages: list[Any]) -> list[tuple[str, str, str]]:
    return [(m.role, m.content, (m.metadata or {}).get("title", "")) for m in messages]


def test_a_chat_comes_back_as_shown_and_goes_on_with_its_memory(rig: Any) -> None:
    owner = rig.engine.signer.sign("browser:one")
    chat, session = _answer(rig, owner, "How long does the Alpha battery last?", [], None)
    history = ChatHistory(rig.engine)
    reopened, restored, kept, listing = history.restore(owner, session.conversation_id)
    assert kept == session.conversation_id
    assert _shown(reopened) == _shown(chat)  # steps, answer, the citation with its title: all as shown
    assert any("📄 [1] robots.md" in title for _, _, title in _shown(reopened))
    assert restored.history == session.history and restored.records == session.records
    assert listing["choices"] == [(f"How long does the Alpha battery last? · {_today(rig, owner)}", kept)]

    # Going on in the reopened chat: the same conversation, both questions in its memory.
    chat2, session2 = _answer(rig, owner, "And on eco mode?", reopened, restored)
    assert session2.conversation_id == kept and len(session2.history) == 4
    again, _, _, _ = history.restore(owner, kept)
    assert _shown(again) == _shown(chat2)

    # Another browser naming this chat's id gets nothing of it: its own chat is left as it is (a question it asked
    # before the load event ran is not wiped either).
    other = rig.engine.signer.sign("browser:two")
    for stranger in (other, "forged"):
        chat_update, session_update, kept_id, listing = history.restore(stranger, kept)
        assert chat_update == gr.update() and session_update == gr.update() and kept_id == ""
        assert listing["choices"] == []


def test_a_page_that_asked_before_its_load_event_ran_keeps_its_list(rig: Any) -> None:
    """The page's load event (``restore``) can run after the first answer was kept on a loaded machine: once the
    page has asked, it changes nothing, so a list read before the answer was kept never hides that answer."""
    owner = rig.engine.signer.sign("browser:one")
    _chat, session = _answer(rig, owner, "How long does the Alpha battery last?", [], None)
    assert ChatHistory(rig.engine).restore(owner, "", session) == (gr.update(),) * 4
    _c, _s, kept, listing = ChatHistory(rig.engine).restore(owner, "", Session())  # a fresh page: the list
    assert kept == "" and [c[1] for c in listing["choices"]] == [session.conversation_id]


def _today(rig: Any, owner: str) -> str:
    return rig.engine.conversations.list(rig.engine.signer.unsign(owner))[0].updated_at[:10]


def test_a_deleted_documents_citation_stays_readable_and_says_so(rig: Any) -> None:
    owner = rig.engine.signer.sign("browser:one")
    chat, session = _answer(rig, owner, "How long does the Alpha battery last?", [], None)
    (doc,) = rig.engine.library.documents()
    rig.engine.library.delete(doc.doc_id)
    reopened, *_ = ChatHistory(rig.engine).restore(owner, session.conversation_id)
    cited = [m for m in reopened if "robots.md" in (m.metadata or {}).get("title", "")]
    assert cited and all(m.metadata["title"].endswith(DELETED_MARK) for m in cited)
    assert all("90 minutes" in m.content for m in cited)  # the passage is still there to read
    assert [m.content for m in reopened if "DELETED" not in m.content] == [m.content for m in chat]


def test_a_chat_is_kept_as_the_engines_records_and_drawn_again_from_them(rig: Any) -> None:
    owner = rig.engine.signer.sign("browser:one")
    _chat, session = _answer(rig, owner, "How long does the Alpha battery last?", [], None)
    found = rig.engine.conversations.open("browser:one", session.conversation_id)
    (exchange,) = found.exchanges  # no messages as shown: the question and the turn that answered it
    assert not found.as_shown and found.messages == ()
    assert exchange.said == "How long does the Alpha battery last?"
    assert exchange.turn.text == "The Alpha battery lasts 90 minutes [1]." and exchange.turn.trace_id
    assert [c.chunk.source for c in exchange.turn.citations] == ["robots.md"]
    assert records_of(found.exchanges) == session.records  # drawn again exactly as drawn live


def test_a_damaged_exchange_opens_as_far_as_it_reads(rig: Any) -> None:
    owner = rig.engine.signer.sign("browser:one")
    _chat, session = _answer(rig, owner, "How long does the Alpha battery last?", [], None)
    good = rig.engine.conversations.open("browser:one", session.conversation_id).exchanges[0].to_dict()
    damaged = [{"said": 3, "turn": "junk"}, {**good, "turn": {**good["turn"], "steps": "junk", "answer": [1]}}]
    kept = rig.engine.conversations.save("browser:one", None, "Damaged", [], {}, shown=damaged)
    reopened, restored, _, _ = ChatHistory(rig.engine).restore(owner, kept)
    # The first is an empty question; the second has no steps and no checked answer (nor its citations), but its
    # quoted evidence and the text that streamed.
    assert [(m.role, m.metadata) for m in reopened] == [("user", {})] * 2 + [("assistant", {})] * 2
    assert reopened[1].content == "How long does the Alpha battery last?" and "90 minutes" in reopened[3].content
    assert len(restored.exchanges) == 2


def test_a_chat_kept_as_shown_by_an_older_version_opens_and_goes_on_that_way(rig: Any) -> None:
    owner = rig.engine.signer.sign("browser:one")
    chat, session = _answer(rig, owner, "How long does the Alpha battery last?", [], None)
    old = rig.engine.conversations.save("browser:one", None, "Old chat", [], {}, shown=session.records)
    reopened, restored, kept, _ = ChatHistory(rig.engine).restore(owner, old)
    assert kept == old and restored.as_shown and restored.exchanges == []
    assert _shown(reopened) == _shown(chat) and restored.records == session.records
    chat2, session2 = _answer(rig, owner, "And on eco mode?", reopened, restored)
    found = rig.engine.conversations.open("browser:one", old)
    assert found.as_shown and len(found.messages) == len(chat2)  # both questions, still as shown
    assert session2.conversation_id == old


def test_rename_and_delete_a_chat(rig: Any) -> None:
    owner = rig.engine.signer.sign("browser:one")
    _, session = _answer(rig, owner, "How long does the Alpha battery last?", [], None)
    history = ChatHistory(rig.engine)
    listing, cleared = history.rename(session.conversation_id, "Battery", owner)
    assert listing["choices"][0][0].startswith("Battery · ") and cleared == ""
    with pytest.raises(gr.Error):
        history.rename(session.conversation_id, "   ", owner)
    listing, chat, fresh, kept = history.delete(session.conversation_id, session, ["x"], owner)
    assert listing["choices"] == [] and chat == [] and fresh.records == [] and kept == ""


def test_a_thumbs_down_is_kept_with_the_trace_and_becomes_a_test_case(rig: Any) -> None:
    owner = rig.engine.signer.sign("browser:one")
    chat, session = _answer(rig, owner, "How long does the Alpha battery last?", [], None)
    answer_at = next(i for i, m in enumerate(chat) if m.content.startswith("The Alpha battery"))
    feedback = Feedback(rig.engine)
    row, session = feedback.rate(gr.LikeData(None, {"index": answer_at, "value": "", "liked": False}), session, owner)
    assert row["visible"] is True and session.feedback_trace
    row, text = feedback.comment("It is 120 minutes in the new manual", session, owner)
    assert row["visible"] == "hidden" and text == ""

    traces = TraceHandlers(rig.engine)
    rows, ids = traces.recent(owner, rating="down")
    assert ids == [session.feedback_trace] and rows[0][5].startswith("👎 It is 120 minutes")
    assert traces.recent(owner, rating="up")[1] == []
    header = traces.show(rig.engine.observability.trace(ids[0], "browser:one"))[1]
    assert "**Feedback** 👎" in shown(header) and "120 minutes" in header

    feedback.save_case(session, owner)
    (case,) = rig.engine.observability.test_cases("browser:one")
    assert case.question == "How long does the Alpha battery last?" and case.expected == ("robots.md",)
    assert case.trace_id == session.feedback_trace


def test_feedback_only_on_an_answer_and_only_on_ones_own(rig: Any) -> None:
    owner = rig.engine.signer.sign("browser:one")
    chat, session = _answer(rig, owner, "How long does the Alpha battery last?", [], None)
    feedback = Feedback(rig.engine)
    with pytest.raises(gr.Error, match="Feedback goes on an answer"):
        feedback.rate(gr.LikeData(None, {"index": 0, "value": "", "liked": True}), session, owner)  # the question
    with pytest.raises(gr.Error, match="trace is gone"):  # another browser with this session's records
        feedback.rate(gr.LikeData(None, {"index": len(chat) - 1, "value": "", "liked": True}), session, "forged")
    row, _ = feedback.rate(gr.LikeData(None, {"index": len(chat) - 1, "value": "", "liked": True}), session, owner)
    assert row["visible"] == "hidden" and rig.engine.observability.traces("browser:one", rating="up")


def test_everyones_traces_are_for_admins_only(rig: Any) -> None:
    owner = rig.engine.signer.sign("browser:one")
    _answer(rig, owner, "How long does the Alpha battery last?", [], None)
    observability = rig.engine.observability
    reader = Actor("rita", "reader")
    assert observability.traces("user:rita", actor=reader) == []
    with pytest.raises(AccessDenied):
        observability.traces("user:rita", actor=reader, everyone=True)
    admin = Actor("ada", "admin")
    assert [t.question for t in observability.traces("user:ada", actor=admin, everyone=True, kind="chat")] == [
        "How long does the Alpha battery last?"
    ]


def test_a_cited_figure_shows_its_picture_live_and_in_the_chat_reopened(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    from tests.unit.test_figures import octave_pages

    rig = make_engine(ingest={"pdf_tables": False})
    pdf = octave_pages(tmp_path / "octave-plot.pdf", [331])  # "Figure 15.1: Simple Two-Dimensional Plot."
    (result,) = rig.engine.library.ingest([(pdf, pdf.name)])
    assert result.status == "added", result.message
    owner = rig.engine.signer.sign("browser:one")
    rig.llm.enqueue("Figure 15.1 plots sin (x) [1].")
    out = None
    for out in Handlers(rig.engine).respond(  # noqa: B007
        "Which figure shows a simple two-dimensional plot of sin(x)?", [], None, None, "workflow", owner
    ):
        pass
    assert out is not None
    _, chat, session = out
    (figure,) = [m for m in chat if 'class="cited-figure"' in str(m.content)]
    assert 'src="data:image/png;base64,' in str(figure.content)
    assert "Figure 15.1: Simple Two-Dimensional Plot." in (figure.metadata or {}).get("title", "")
    session, kept, _listing = ChatHistory(rig.engine).persist(session, owner)
    reopened, _restored, _kept, _listing = ChatHistory(rig.engine).restore(owner, kept)
    assert _shown(reopened) == _shown(chat)  # the picture drawn again (it is not kept with the chat)
