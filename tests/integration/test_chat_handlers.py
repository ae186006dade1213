"""The chat handlers over a real engine (scripted LLM): asking back, the user's pick, memory in the session."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import gradio as gr
import pytest

from ragapp.core.types import ChatTurn
from ragapp.ui.handlers import Handlers
from ragapp.ui.state import Session
from tests.text import english

pytestmark = pytest.mark.integration

TREE = """
intents:
  - code: alpha
    name: Alpha robot
    children: [{code: alpha.specs, name: Specs, kind: KB, knowledge_bases: [default]}]
  - code: beta
    name: Beta robot
    children: [{code: beta.specs, name: Specs, kind: KB, knowledge_bases: [default]}]
"""


@pytest.fixture
def chat(make_engine: Callable[..., Any], tmp_path: Path) -> tuple[Handlers, Any]:
    rig = make_engine(workflow={"route": True, "rewrite": True, "recent_turns": 1})
    path = tmp_path / "robots.md"
    path.write_text("# Robots\n\nThe Alpha robot battery lasts 90 minutes. The Beta robot battery lasts 150 minutes.\n")
    rig.engine.library.ingest([(path, path.name)])
    rig.engine.intents.import_tree(TREE)
    return Handlers(rig.engine), rig.llm


def last(stream: Any) -> tuple[str, list[Any], Session]:
    out = None
    for out in stream:  # noqa: B007  (the last update is the finished turn)
        pass
    assert out is not None
    return out


def test_ask_back_then_click_a_choice(chat: tuple[Handlers, Any]) -> None:
    handlers, llm = chat
    llm.enqueue('{"matches": [{"id": "alpha.specs", "score": 0.9}]}')
    _, messages, session = last(handlers.respond("How long does the battery last?", [], None))
    assert session.pending is not None and session.history == []  # asking back is not an answer yet
    assert [o["value"] for o in messages[-1].options] == ["alpha.specs", "beta.specs", "*"]

    llm.enqueue("The Beta battery lasts 150 minutes [1].")
    pick = gr.SelectData(None, {"index": 1, "value": "beta.specs"})
    _, messages, session = last(handlers.choose(pick, messages, session))
    # the answer, its confidence badge under it
    assert any(str(m.content).startswith("The Beta battery lasts 150 minutes [1].") for m in english(messages))
    assert any(getattr(m, "content", "") == "Beta robot › Specs" and m.role == "user" for m in messages)
    assert session.pending is None
    assert session.history == [
        ChatTurn("user", "How long does the battery last?"),
        ChatTurn("assistant", "The Beta battery lasts 150 minutes [1]."),
    ]


def test_stale_choice_does_nothing_and_a_new_question_drops_the_pending_one(chat: tuple[Handlers, Any]) -> None:
    handlers, llm = chat
    _, messages, session = last(handlers.choose(gr.SelectData(None, {"index": 0, "value": "alpha.specs"}), [], None))
    assert messages == [] and session.pending is None and llm.calls == []

    llm.enqueue('{"matches": [{"id": "alpha.specs", "score": 0.9}]}')
    _, _, session = last(handlers.respond("How long does the battery last?", [], session))
    assert session.pending is not None
    llm.enqueue('{"matches": [{"id": "alpha.specs", "score": 0.9}]}', "90 minutes [1].")
    _, _, session = last(handlers.respond("How long does the Alpha battery last?", [], session))
    assert session.pending is None and session.history[-1].content == "90 minutes [1]."


def test_old_turns_fold_into_the_session_summary(chat: tuple[Handlers, Any]) -> None:
    handlers, llm = chat
    session = Session(
        history=[
            ChatTurn("user", "I own an Alpha."),
            ChatTurn("assistant", "Noted."),
            ChatTurn("user", "And a Beta."),
            ChatTurn("assistant", "Noted too."),
        ]
    )
    llm.enqueue(
        "The user owns an Alpha and a Beta.",  # summary of the oldest turn
        '{"question": "How long does the Alpha battery last?", "sub_questions": []}',  # rewrite
        '{"matches": [{"id": "alpha.specs", "score": 0.9}]}',
        "90 minutes [1].",
    )
    _, _, session = last(handlers.respond("How long does its battery last?", [], session))
    assert session.summary == "The user owns an Alpha and a Beta."
    assert [t.content for t in session.history] == [
        "And a Beta.",
        "Noted too.",
        "How long does its battery last?",
        "90 minutes [1].",
    ]


def test_agent_mode_shows_each_step_then_a_cited_answer(chat: tuple[Handlers, Any]) -> None:
    handlers, llm = chat
    llm.enqueue(
        '{"thought": "find it", "tool": "search_knowledge", "arguments": {"query": "Alpha battery"}}',
        '{"thought": "enough", "answer": true}',
        "90 minutes [1].",
    )
    _, messages, session = last(handlers.respond("How long does the Alpha battery last?", [], None, None, mode="agent"))
    messages = english(messages)
    assert llm.pending == 0 and llm.json_calls == [True, True, False]  # two decisions, then the answer
    titles = [str((m.metadata or {}).get("title", "")) for m in messages]
    assert titles[:3] == ["", "🤖 Agent working", "🛠️ Step 1 · search_knowledge"]  # the question, the agent, step 1
    step = messages[2]
    assert step.metadata["status"] == "done"
    assert "**Why:** find it" in step.content and '`{"query": "Alpha battery", ' in step.content
    assert "**Result:** 1 passage(s): robots.md" in step.content
    assert messages[1].content == "1 step · 2 model calls · 1 passage found"
    assert any(str(m.content).startswith("90 minutes [1].\n\n<details") for m in messages)  # and its badge
    assert titles[-1].startswith("📄 [1] robots.md")
    assert not any(t.startswith("🧭") for t in titles)  # the agent neither rewrote nor routed
    assert session.history == [
        ChatTurn("user", "How long does the Alpha battery last?"),
        ChatTurn("assistant", "90 minutes [1]."),
    ]


def test_mode_defaults_to_the_configured_one_and_auto_says_what_it_chose(chat: tuple[Handlers, Any]) -> None:
    handlers, llm = chat
    llm.enqueue(
        '{"thought": "the Alpha", "tool": "search_knowledge", "arguments": {"query": "Alpha battery"}}',
        '{"thought": "the Beta", "tool": "search_knowledge", "arguments": {"query": "Beta battery"}}',
        '{"thought": "both found", "answer": true}',
        "The Beta lasts longer: 150 minutes against 90 [1].",
    )
    question = "Which battery lasts longer, the Alpha or the Beta?"
    _, messages, _ = last(handlers.respond(question, [], None, mode="auto"))
    messages = english(messages)
    contents = [str(m.content) for m in messages]
    assert contents[1] == "🤖 Auto chose agent: the question compares things"
    titles = [str((m.metadata or {}).get("title", "")) for m in messages]
    assert "🛠️ Step 1 · search_knowledge" in titles and "🛠️ Step 2 · search_knowledge" in titles
    assert titles.index("🛠️ Step 1 · search_knowledge") < titles.index("🛠️ Step 2 · search_knowledge")
    assert llm.pending == 0

    llm.reset()  # no mode picked: the configured default (the workflow: rewrite, route, answer)
    llm.enqueue(
        '{"question": "How long does the Alpha battery last?", "sub_questions": []}',
        '{"matches": [{"id": "alpha.specs", "score": 0.9}]}',
        "90 minutes [1].",
    )
    _, messages, _ = last(handlers.respond("How long does the Alpha battery last?", [], None))
    messages = english(messages)
    titles = [str((m.metadata or {}).get("title", "")) for m in messages]
    assert "🧭 Choosing where to look" in titles and not any("Step" in t for t in titles)
