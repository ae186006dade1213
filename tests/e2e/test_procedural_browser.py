"""Procedural memory in the browser: with the agent kept for single questions before (a thumbs up given through the
engine), Auto takes the agent for one and the chat says why; the Traces tab shows the evidence under the request's
header, and the table of what was learned. The scripted LLM stands in for the model."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from ragapp.core.events import TraceEvent

pytestmark = [pytest.mark.e2e]

DOC = "# Kettle\n\nThe Orion kettle boils water in 3 minutes. Its filter is rinsed every 14 days.\n"
SEARCH = json.dumps({"thought": "search", "tool": "search_knowledge", "arguments": {"query": "Orion kettle"}})
READY = '{"thought": "I have what I need", "answer": true}'
# One answer is evidence enough; 1 of 1 kept (2/3 smoothed) against none (1/2) is a margin of 1/6.
LEARN_AT_ONCE = {"enabled": True, "min_answers": 1, "margin": 0.1}
QUESTION = "How fast does the Orion kettle boil?"


def test_auto_takes_the_learned_mode_and_the_traces_tab_shows_why(
    scripted_app: Callable[..., Any], open_page: Callable[[str], Any]
) -> None:
    rig, url = scripted_app({"kettle.md": DOC}, procedural=LEARN_AT_ONCE)
    rig.llm.enqueue(SEARCH, READY, "Every 14 days [1].")
    events = list(rig.engine.chat.ask("How often is the filter rinsed?", mode="agent"))
    trace_id = next(e.trace_id for e in events if isinstance(e, TraceEvent))
    rig.engine.observability.give_feedback(trace_id, "local", "up")

    page = open_page(url)
    page.locator("#question textarea").wait_for()
    page.locator("#chat-mode").get_by_role("radio", name="Auto").check()
    rig.llm.enqueue(SEARCH, READY, "It takes 3 minutes [1].")
    box = page.locator("#question textarea")
    box.fill(QUESTION)
    box.press("Enter")
    chat = page.locator("#chatbot")
    chat.get_by_text("It takes 3 minutes").first.wait_for()
    chat.get_by_text("questions like this were answered better by the agent: 1 of 1 kept").first.wait_for()

    page.get_by_role("tab", name="Traces").click()
    listing = page.locator("#trace-list")
    row = listing.locator('[role=gridcell][data-col="1"]', has_text=QUESTION).first
    row.wait_for()
    row.click()
    header = page.locator("#trace-header")
    header.get_by_text("Procedural memory").first.wait_for()
    text = header.inner_text()
    assert "agent 1 of 1 kept" in text and "Auto took agent because of it" in text
    page.get_by_text("What procedural memory has learned").first.click()
    learned = page.locator("#trace-experience")
    learned.get_by_text("single question").first.wait_for()
    assert "1 of 1 kept" in learned.inner_text()
