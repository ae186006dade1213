"""Agent mode's loop through the real engine (real stores, embedder and retrieval), with the scripted LLM at
the LLM seam: tool calls, corrected arguments, repeats, the step limit, tool timeouts, fallback, native
function calling, middleware mode, Auto mode."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.agent.runner import AGENT_SLOT
from ragapp.agent.tools.base import DATA_NOTE
from ragapp.core.errors import LLMError
from ragapp.core.events import (
    AgentStepEvent,
    AnswerEvent,
    EngineEvent,
    ModeEvent,
    NoticeEvent,
    RetrievalEvent,
    StageEvent,
)
from ragapp.core.types import ToolCall
from ragapp.models.llm import ToolReply

pytestmark = pytest.mark.integration

ALPHA = "# Alpha robot manual\n\nThe Alpha robot battery lasts 90 minutes. The Alpha robot weighs 2.1 kg.\n"
BETA = "# Beta robot manual\n\nThe Beta robot battery lasts 150 minutes. The Beta robot weighs 3.4 kg.\n"


def call(tool: str, thought: str = "next step", **arguments: Any) -> str:
    return json.dumps({"thought": thought, "tool": tool, "arguments": arguments})


READY = '{"thought": "I have what I need", "answer": true}'


def make_rig(make_engine: Callable[..., Any], tmp_path: Path, **overrides: Any) -> Any:
    rig = make_engine(**overrides)
    for name, text in (("alpha_manual.md", ALPHA), ("beta_manual.md", BETA)):
        path = tmp_path / name
        path.write_text(text, "utf-8")
        rig.engine.library.ingest([(path, name)], kb=name.split("_")[0])
    return rig


@pytest.fixture
def rig(make_engine: Callable[..., Any], tmp_path: Path) -> Any:
    return make_rig(make_engine, tmp_path)


def ask(rig: Any, question: str, **kwargs: Any) -> list[EngineEvent]:
    return list(rig.engine.chat.ask(question, mode=kwargs.pop("mode", "agent"), **kwargs))


def steps(events: list[EngineEvent]) -> list[AgentStepEvent]:
    return [e for e in events if isinstance(e, AgentStepEvent) and e.status != "started"]


def answer(events: list[EngineEvent]) -> AnswerEvent:
    return next(e for e in events if isinstance(e, AnswerEvent))


def test_every_decision_reads_its_rules_in_the_agents_own_context(rig: Any) -> None:
    # the local model keeps the rules and the tool list read in that context between questions, whatever the
    # answers and rewrites in between read: a later question's first decision reads only its own words
    for question in ("How long does the Alpha battery last?", "How much does the Beta robot weigh?"):
        rig.llm.enqueue(call("search_knowledge", "look", query=question), READY, "It is in the manual [1].")
        ask(rig, question)
    decisions = [slot for slot, as_json in zip(rig.llm.slots, rig.llm.json_calls, strict=True) if as_json]
    assert decisions == [AGENT_SLOT] * 4, rig.llm.slots
    assert AGENT_SLOT not in [
        slot for slot, as_json in zip(rig.llm.slots, rig.llm.json_calls, strict=True) if not as_json
    ]


def test_two_searches_then_a_cited_answer(rig: Any) -> None:
    rig.llm.enqueue(
        call("search_knowledge", "find Alpha", query="Alpha robot battery"),
        call("search_knowledge", "find Beta", query="Beta robot battery"),
        READY,
        "Alpha lasts 90 minutes [1], Beta 150 minutes [2].",
    )
    events = ask(rig, "Which battery lasts longer, Alpha or Beta?")

    done = steps(events)
    assert [(s.tool, s.status, s.arguments["query"]) for s in done] == [
        ("search_knowledge", "finished", "Alpha robot battery"),
        ("search_knowledge", "finished", "Beta robot battery"),
    ]
    assert done[0].thought == "find Alpha" and "alpha_manual.md" in done[0].preview
    started = [e for e in events if isinstance(e, AgentStepEvent) and e.status == "started"]
    assert [s.step for s in started] == [1, 2]
    final = answer(events)
    assert final.grounded and {c.chunk.source for c in final.citations} == {"alpha_manual.md", "beta_manual.md"}
    # The second decision saw the first result, numbered, with its chunk id.
    second = rig.llm.calls[1]
    assert second[-1].content.startswith(f"Result of search_knowledge:\n{DATA_NOTE}\n\n[1] (chunk_id=")
    assert rig.llm.json_calls[:3] == [True, True, True] and rig.llm.json_calls[3] is False


def test_bad_arguments_go_back_to_the_model_which_corrects_them(rig: Any) -> None:
    rig.llm.enqueue(
        call("search_knowledge", query="Alpha battery", top_k=50, colour="red"),
        call("search_knowledge", query="Alpha battery", top_k=3),
        READY,
        "90 minutes [1].",
    )
    events = ask(rig, "How long does the Alpha battery last?")
    first, second = steps(events)
    assert first.status == "failed" and "top_k" in (first.error or "") and "colour" in (first.error or "")
    assert second.status == "finished"
    correction = rig.llm.calls[1][-1].content
    assert (
        correction.startswith("Result of search_knowledge:\nError: invalid arguments")
        and "less than or equal to 10" in correction
    )
    assert answer(events).citations


def test_unknown_tool_is_reported_with_the_list_of_tools(rig: Any) -> None:
    rig.llm.enqueue(call("web_search", query="x"), call("search_knowledge", query="Beta weight"), READY, "3.4 kg [1].")
    events = ask(rig, "How heavy is the Beta?")
    assert steps(events)[0].status == "failed"
    assert "search_knowledge, list_knowledge_bases, read_chunk" in (steps(events)[0].error or "")


def test_a_repeated_call_is_stopped_and_twice_ends_the_loop(rig: Any) -> None:
    same = call("search_knowledge", query="Alpha battery")
    rig.llm.enqueue(same, same, same, "90 minutes [1].")
    events = ask(rig, "How long does the Alpha battery last?")
    assert [s.status for s in steps(events)] == ["finished", "failed", "failed"]
    assert "already called" in (steps(events)[1].error or "")
    assert any(isinstance(e, NoticeEvent) and "repeating" in e.message for e in events)
    assert answer(events).text == "90 minutes [1]."
    assert len(rig.llm.calls) == 4  # three decisions and the answer: the repeats never ran the tool


def test_the_step_limit_forces_an_answer(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    rig = make_rig(make_engine, tmp_path, agent={"max_steps": 2})
    rig.llm.enqueue(call("search_knowledge", query="Alpha"), call("list_knowledge_bases"), "Alpha: 90 minutes [1].")
    events = ask(rig, "Tell me about Alpha")
    assert len(steps(events)) == 2
    assert any(isinstance(e, NoticeEvent) and "limit of 2 agent steps" in e.message for e in events)
    assert "list_knowledge_bases" not in answer(events).text and answer(events).citations


def test_a_slow_tool_is_cut_off_and_the_model_told(
    make_engine: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragapp.agent.tools.list_knowledge_bases import ListKnowledgeBases

    release = threading.Event()
    original = ListKnowledgeBases.run

    def slow(self: Any, args: Any, ctx: Any) -> Any:
        release.wait(5)
        return original(self, args, ctx)

    monkeypatch.setattr(ListKnowledgeBases, "run", slow)
    rig = make_rig(make_engine, tmp_path, agent={"tool_timeout_s": 0.3})
    rig.llm.enqueue(call("list_knowledge_bases"), call("search_knowledge", query="Alpha battery"), READY, "90 [1].")
    try:
        events = ask(rig, "How long does the Alpha battery last?")
    finally:
        release.set()
    first = steps(events)[0]
    assert first.status == "failed" and "did not finish within 0.3 s" in (first.error or "")
    assert answer(events).citations


def test_read_chunk_reads_around_a_hit(rig: Any) -> None:
    chunk_id = rig.engine.chat.retrieve("Alpha robot weight").chunks[0].chunk.chunk_id
    rig.llm.enqueue(call("read_chunk", chunk_id=chunk_id, window=1), READY, "2.1 kg [1].")
    events = ask(rig, "What does the Alpha weigh?")
    assert steps(events)[0].status == "finished" and "alpha_manual.md" in steps(events)[0].preview
    assert answer(events).citations[0].chunk.chunk_id == chunk_id

    rig.llm.enqueue(
        call("read_chunk", chunk_id="nope"), call("search_knowledge", query="Alpha weight"), READY, "2.1 kg [1]."
    )
    events = ask(rig, "What does the Alpha weigh?")
    assert "unknown chunk" in steps(events)[0].preview  # the model is told; nothing crashes
    assert "There is no chunk 'nope'" in rig.llm.calls[-3][-1].content


def test_answering_before_searching_searches_the_question_once(rig: Any) -> None:
    rig.llm.enqueue(READY, "90 minutes [1].")
    events = ask(rig, "How long does the Alpha battery last?")
    (forced,) = steps(events)
    assert forced.tool == "search_knowledge" and forced.arguments["query"] == "How long does the Alpha battery last?"
    assert forced.thought == "nothing has been searched yet"
    assert answer(events).citations


def test_garbage_twice_with_nothing_found_falls_back_to_the_workflow(rig: Any) -> None:
    rig.llm.enqueue("I think the answer is 42", "still not json", "90 minutes [1].")
    events = ask(rig, "How long does the Alpha battery last?")
    assert [s.status for s in steps(events)] == ["failed", "failed"]
    assert any(isinstance(e, NoticeEvent) and "answering with the workflow instead" in e.message for e in events)
    assert any(isinstance(e, StageEvent) and e.stage == "agent" and e.status == "failed" for e in events)
    assert answer(events).text == "90 minutes [1]." and answer(events).citations


def test_a_model_that_fails_outright_falls_back_to_the_workflow(rig: Any) -> None:
    rig.llm.enqueue(LLMError("the server is down"), "90 minutes [1].")
    events = ask(rig, "How long does the Alpha battery last?")
    assert any(isinstance(e, NoticeEvent) and "the server is down" in e.message for e in events)
    assert answer(events).citations


def test_a_model_that_hangs_on_a_decision_falls_back(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    rig = make_rig(make_engine, tmp_path, agent={"step_timeout_s": 0.3})
    rig.llm.enqueue(rig.llm.hang(5), "90 minutes [1].")
    events = ask(rig, "How long does the Alpha battery last?")
    assert any(isinstance(e, NoticeEvent) and "within 0.3 s" in e.message for e in events)
    assert answer(events).text == "90 minutes [1]."


def test_tool_calls_in_tags_and_fences_are_read(rig: Any) -> None:
    rig.llm.enqueue(
        '<tool_call>\n{"name": "search_knowledge", "arguments": {"query": "Beta weight"}}\n</tool_call>',
        '```json\n{"tool": "search_knowledge", "arguments": "Alpha weight"}\n```',
        READY,
        "3.4 kg [1] and 2.1 kg [2].",
    )
    events = ask(rig, "Beta and Alpha weights?")
    assert [s.arguments["query"] for s in steps(events)] == ["Beta weight", "Alpha weight"]


def test_search_respects_the_users_scope_and_a_knowledge_base_argument(rig: Any) -> None:
    rig.llm.enqueue(call("search_knowledge", query="robot battery minutes"), READY, "150 minutes [1].")
    events = ask(rig, "battery?", kbs=frozenset({"beta"}))
    assert {c.chunk.source for c in next(e for e in events if isinstance(e, RetrievalEvent)).chunks} == {
        "beta_manual.md"
    }
    rig.llm.enqueue(call("search_knowledge", query="robot battery", knowledge_base="alpha"), READY, "x")
    events = ask(rig, "battery?", kbs=frozenset({"beta"}))
    assert "outside" in steps(events)[0].preview


def test_native_function_calling(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    rig = make_rig(make_engine, tmp_path, llm={"backend": "scripted-tools"})
    rig.llm.enqueue(
        ToolReply("Looking up Alpha.", (ToolCall("search_knowledge", {"query": "Alpha battery"}, "call_a"),)),
        ToolReply("I can answer now."),
        "90 minutes [1].",
    )
    events = ask(rig, "How long does the Alpha battery last?")
    assert [s.tool for s in steps(events)] == ["search_knowledge"] and steps(events)[0].thought == "Looking up Alpha."
    names = [t["function"]["name"] for t in rig.llm.tool_schemas[0]]
    assert names == ["search_knowledge", "list_knowledge_bases", "read_chunk"]
    search = rig.llm.tool_schemas[0][0]["function"]["parameters"]
    assert search["properties"]["top_k"]["maximum"] == 10 and search["required"] == ["query"]
    transcript = rig.llm.calls[1]
    assert transcript[-2].tool_calls[0].id == "call_a" and transcript[-1].role == "tool"
    assert transcript[-1].tool_call_id == "call_a" and "[1] (chunk_id=" in transcript[-1].content
    assert answer(events).citations


def test_middleware_mode_puts_passages_before_every_call(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    rig = make_rig(make_engine, tmp_path, agent={"knowledge": "middleware"})
    rig.llm.enqueue(call("list_knowledge_bases"), READY, "90 minutes [1].")
    events = ask(rig, "How long does the Alpha battery last?")
    for decision in rig.llm.calls[:2]:
        assert "<retrieved_knowledge>" in decision[0].content and "90 minutes" in decision[0].content
    assert "search_knowledge(" not in rig.llm.calls[0][0].content  # no search tool: knowledge arrives by itself
    assert answer(events).citations


@pytest.mark.parametrize(
    ("question", "mode"),
    [("Which lasts longer, the Alpha or the Beta?", "agent"), ("How long does the Alpha battery last?", "workflow")],
)
def test_auto_mode_says_which_way_it_chose(rig: Any, question: str, mode: str) -> None:
    if mode == "agent":
        rig.llm.enqueue(call("search_knowledge", query="Alpha battery"), READY, "Alpha [1].")
    else:
        rig.llm.enqueue("90 minutes [1].")
    events = ask(rig, question, mode="auto")
    chosen = next(e for e in events if isinstance(e, ModeEvent))
    assert chosen.mode == mode and chosen.reason.startswith(f"Auto chose {mode}")


def test_old_turns_are_folded_in_agent_mode_too(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    from ragapp.core.events import MemoryEvent
    from ragapp.core.types import ChatTurn

    rig = make_rig(make_engine, tmp_path, workflow={"recent_turns": 0})
    history = [ChatTurn("user", "I own an Alpha."), ChatTurn("assistant", "Noted.")]
    rig.llm.enqueue("The user owns an Alpha.", call("search_knowledge", query="Alpha battery"), READY, "90 [1].")
    events = ask(rig, "How long does its battery last?", history=history)
    assert next(e for e in events if isinstance(e, MemoryEvent)) == MemoryEvent("The user owns an Alpha.", 2)
    assert "The user owns an Alpha." in rig.llm.calls[1][0].content  # the summary is in the agent's prompt


def test_an_invented_knowledge_base_is_ignored_and_the_model_told(rig: Any) -> None:
    rig.llm.enqueue(call("search_knowledge", query="Alpha battery", knowledge_base="general"), READY, "90 [1].")
    events = ask(rig, "How long does the Alpha battery last?")
    assert "alpha_manual.md" in steps(events)[0].preview
    assert "there is no knowledge base 'general'" in rig.llm.calls[1][-1].content


def test_a_single_channel_search_that_finds_nothing_tries_hybrid(rig: Any) -> None:
    rig.llm.enqueue(call("search_knowledge", query="how many minutes", search_type="keyword"), READY, "90 [1].")
    events = ask(rig, "How long does the Alpha battery last?")
    first = steps(events)[0]
    assert first.status == "finished"
    observation = rig.llm.calls[1][-1].content
    if "keyword search alone found nothing relevant" in observation:  # the keyword channel alone fell short
        assert "[1] (chunk_id=" in observation
