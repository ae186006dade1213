"""Procedural memory through the real engine (stores, embedder, retrieval, traces), the scripted LLM at the LLM
seam: feedback and re-asks fill the table, Auto takes the learned mode only above the evidence threshold and says
why, the agent's tool order follows what worked, the trace keeps the evidence, and with the setting off nothing
of it happens."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.core.events import AgentStepEvent, EngineEvent, ExperienceEvent, ModeEvent, Tally, TraceEvent
from ragapp.core.types import ToolCall
from ragapp.models.llm import ToolReply

pytestmark = pytest.mark.integration

ALPHA = "# Alpha robot manual\n\nThe Alpha robot battery lasts 90 minutes. The Alpha robot weighs 2.1 kg.\n"
SINGLE = "How long does the Alpha battery last?"  # Auto's rule: a single question, the workflow
READY = '{"thought": "I have what I need", "answer": true}'
ON = {"procedural": {"enabled": True, "min_answers": 2}}


def search(query: str = "Alpha battery") -> str:
    return json.dumps({"thought": "search", "tool": "search_knowledge", "arguments": {"query": query}})


def make_rig(make_engine: Callable[..., Any], tmp_path: Path, **overrides: Any) -> Any:
    rig = make_engine(**overrides)
    path = tmp_path / "alpha_manual.md"
    path.write_text(ALPHA, "utf-8")
    rig.engine.library.ingest([(path, path.name)], kb="alpha")
    return rig


def ask(rig: Any, question: str, mode: str, rating: str = "") -> list[EngineEvent]:
    """Ask, and rate the answer ("up", "down", "": not at all)."""
    events = list(rig.engine.chat.ask(question, mode=mode))
    if rating:
        trace_id = next(e.trace_id for e in events if isinstance(e, TraceEvent))
        rig.engine.observability.give_feedback(trace_id, "local", rating)
    return events


def agent_answer(rig: Any, question: str = SINGLE, rating: str = "up") -> list[EngineEvent]:
    rig.llm.enqueue(search(), READY, "90 minutes [1].")
    return ask(rig, question, "agent", rating)


def chosen(events: list[EngineEvent]) -> ModeEvent:
    return next(e for e in events if isinstance(e, ModeEvent))


def table(rig: Any) -> list[tuple[str, str, int, int]]:
    return [(r.kind, r.mode, r.kept, r.answers) for r in rig.engine.observability.experience()]


def test_feedback_fills_the_table_by_kind_and_the_mode_that_answered(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    rig = make_rig(make_engine, tmp_path, **ON)
    assert table(rig) == []
    agent_answer(rig, rating="up")
    rig.llm.enqueue("90 minutes [1].")
    ask(rig, "Which lasts longer, the Alpha battery or its charge?", "workflow", "down")
    assert table(rig) == [("comparison", "workflow", 0, 1), ("single", "agent", 1, 1)]


def test_asking_the_same_question_again_counts_the_last_answer_as_not_kept(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    rig = make_rig(make_engine, tmp_path, **ON)
    rig.llm.enqueue("90 minutes [1].", "90 minutes [1].", "2.1 kg [1].")
    ask(rig, SINGLE, "workflow")
    assert table(rig) == []  # no verdict yet
    ask(rig, "how long does the alpha battery last", "workflow")  # the same words again
    assert table(rig) == [("single", "workflow", 0, 1)]
    ask(rig, "What does the Alpha robot weigh?", "workflow")  # another question: no verdict on the last
    assert table(rig) == [("single", "workflow", 0, 1)]


def test_auto_takes_the_learned_mode_only_above_the_threshold_and_says_why(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    rig = make_rig(make_engine, tmp_path, **ON)
    rig.llm.enqueue("90 minutes [1].")
    ask(rig, SINGLE, "workflow", "down")
    agent_answer(rig, "What does the Alpha robot weigh?")  # 1 agent answer: below min_answers (2)

    rig.llm.enqueue("90 minutes [1].")
    below = ask(rig, "Does the Alpha robot have a battery?", "auto")
    assert chosen(below).mode == "workflow" and chosen(below).reason.startswith("Auto chose workflow: a single")
    experience = next(e for e in below if isinstance(e, ExperienceEvent))
    assert experience.mode == "" and set(experience.modes) == {Tally("agent", 1, 1), Tally("workflow", 0, 1)}

    agent_answer(rig, "Is the Alpha robot heavy?")  # 2 of 2 kept with the agent, 0 of 1 with the workflow
    rig.llm.enqueue(search(), READY, "90 minutes [1].")
    above = ask(rig, "Does the Alpha robot have a battery?", "auto")
    assert chosen(above).mode == "agent"
    assert chosen(above).reason == (
        "Auto chose agent: questions like this were answered better by the agent: 2 of 2 kept "
        "(the workflow: 0 of 1 kept)"
    )
    assert any(isinstance(e, AgentStepEvent) for e in above)  # and the agent did answer
    # The trace keeps the evidence the choice rested on.
    trace_id = next(e.trace_id for e in above if isinstance(e, TraceEvent))
    trace = rig.engine.observability.trace(trace_id, "local")
    assert trace.experience is not None and trace.experience.mode == "agent"
    assert set(trace.experience.modes) == {Tally("agent", 2, 2), Tally("workflow", 0, 1)}
    # A comparison has no evidence: the rule alone, and no experience in its events.
    rig.llm.enqueue(search(), READY, "90 minutes [1].")
    other = ask(rig, "Which lasts longer, the Alpha or the Beta?", "auto")
    assert chosen(other).reason.startswith("Auto chose agent: the question compares")
    assert not any(isinstance(e, ExperienceEvent) for e in other)


def test_the_agent_lists_the_tools_that_worked_first(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    rig = make_rig(make_engine, tmp_path, llm={"backend": "scripted-tools"}, **ON)
    listing = ToolReply("", (ToolCall("list_knowledge_bases", {}, "c1"),))
    searching = ToolReply("", (ToolCall("search_knowledge", {"query": "Alpha battery"}, "c2"),))
    for rating in ("up", "up"):  # listed the bases, then searched: kept
        rig.llm.enqueue(listing, searching, "ready", "90 minutes [1].")
        ask(rig, SINGLE, "agent", rating)
    for rating in ("down", "down"):  # searched only: not kept
        rig.llm.enqueue(searching, "ready", "90 minutes [1].")
        ask(rig, SINGLE, "agent", rating)
    before = len(rig.llm.tool_schemas)
    rig.llm.enqueue(searching, "ready", "90 minutes [1].")
    events = ask(rig, SINGLE, "agent")
    listed = [schema["function"]["name"] for schema in rig.llm.tool_schemas[before]]
    # list_knowledge_bases: 2 of 2 kept; search_knowledge: 2 of 4 (a coin toss), read_chunk: never used
    assert listed == ["list_knowledge_bases", "search_knowledge", "read_chunk"]
    experience = next(e for e in events if isinstance(e, ExperienceEvent))
    assert experience.tool_order == ("list_knowledge_bases", "search_knowledge", "read_chunk")
    assert Tally("list_knowledge_bases", 2, 2) in experience.tools


def test_with_the_setting_off_nothing_is_learned_or_changed(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    rig = make_rig(make_engine, tmp_path)  # procedural.enabled: False, the default
    rig.llm.enqueue("90 minutes [1].")
    ask(rig, SINGLE, "workflow", "down")
    for question in ("What does the Alpha robot weigh?", "Is the Alpha robot heavy?", "Is it heavy?"):
        agent_answer(rig, question)
    rig.llm.enqueue("90 minutes [1].")
    events = ask(rig, "Does the Alpha robot have a battery?", "auto")
    assert chosen(events).mode == "workflow"
    assert not any(isinstance(e, ExperienceEvent) for e in events)
    assert rig.engine.observability.experience() is None
    assert not (rig.state_dir / "procedural.sqlite3").exists()
