"""The Traces tab's prompt budget (``ragapp.ui.trace_budget``), from traces built by the real builder."""

from __future__ import annotations

from typing import Any

from ragapp.core.said import Said
from ragapp.core.serial import dump
from ragapp.tracing.builder import TraceBuilder
from ragapp.tracing.model import Trace
from ragapp.ui.trace_budget import budget_markdown, budget_rows
from tests.text import shown

BUDGET = {"window": 4096, "answer": 512, "instructions": 120, "history": 896, "memories": 0, "tools": 0,
          "passages": 2568, "spare": 0}  # fmt: skip
PLANNED = {"instructions": 110, "question": 10, "history": 300, "memories": 0, "passages": 900, "tools": 0}
SENT = {"instructions": 108, "question": 10, "history": 300, "passages": 850}


def _trace(*stages: tuple[str, dict[str, Any]]) -> Trace:
    builder = TraceBuilder("alice", "chat", "q", "workflow")
    for name, attributes in stages:
        builder.close(builder.open(name, "stage", attributes))
    return builder.finish()


def test_rows_give_each_part_its_budget_what_was_planned_and_what_was_sent() -> None:
    rows = {part: cells for part, *cells in budget_rows({"budget": BUDGET, "prompt": PLANNED}, SENT)}
    assert rows["history"] == ["896", "300", "300"]
    assert rows["passages"] == [str(2568 + 896 - 300), "900", "850"]  # with what the conversation left
    assert rows["instructions"] == ["–", "110", "108"] and rows["answer"] == ["512", "–", "–"]
    assert "memories" not in rows and "tools" not in rows  # neither in this prompt


def test_the_table_names_the_parts_in_both_languages_and_says_what_was_compressed() -> None:
    dropped = Said("budget.dropped", {"n": 2})
    fit = {"budget": BUDGET, "prompt": PLANNED, "compressed": [dropped.english], "compressed_said": [dump(dropped)],
           "prompt parts": SENT}  # fmt: skip
    text = budget_markdown(_trace(("retrieve", {"budget": BUDGET}), ("generate", fit)))
    english, chinese = shown(text, "en"), shown(text, "zh")
    assert "**Answer prompt** · window 4096" in english
    assert "| conversation | 896 | 300 | 300 |" in english and "| 对话历史 | 896 | 300 | 300 |" in chinese
    assert "> ✂️ Compressed to fit: 2 passages dropped" in english and "舍弃了 2 个段落" in chinese


def test_the_agents_decision_prompt_shows_its_tool_descriptions() -> None:
    agent = {"budget": {"tools": 358}, "prompt": {"instructions": 200, "question": 9, "history": 0, "tools": 400},
             "compressed": ["tool descriptions shortened to their first sentence"]}  # fmt: skip
    text = shown(budget_markdown(_trace(("agent", agent))))
    assert "**Agent's decision prompt**" in text and "| tool descriptions | 358 | 400 | – |" in text
    assert "tool descriptions shortened to their first sentence" in text  # a trace stored before: its English


def test_a_trace_without_a_budget_says_so() -> None:
    assert shown(budget_markdown(_trace(("retrieve", {"channels": {}})))) == (
        "_No prompt budget was recorded in this request._"
    )
    assert budget_markdown(Trace.from_dict({"question": "q"})).startswith("_")
