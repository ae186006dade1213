"""How sure the answer is, as a user meets it: an answer that does not give what was asked reads as "may be
wrong" with the reason, its passage shown open; a fitting one does not. The replies are scripted (the real
model cannot be made to miss on cue); everything else is the real app in a real browser."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.e2e]

PURIFIER = """# Breeze Air B3 care

The Breeze Air B3 purifier cleans a 40 square metre room in 12 minutes on its highest setting.
Its carbon filter, part number BR-CF-31, should be replaced every 90 days.
"""
QUESTION = "How many days apart should the carbon filter of the Breeze Air B3 be replaced?"
WARNING = "May be wrong — check the passage below"


def test_a_low_confidence_answer_says_so_and_shows_its_passage_open(
    scripted_app: Callable[..., Any],
    open_page: Callable[[str], Any],
    ask_and_wait: Callable[[Any, str], None],
    artifacts: Path,
) -> None:
    rig, url = scripted_app({"breeze_air_b3.md": PURIFIER})
    page = open_page(url)
    chat = page.locator("#chatbot")

    rig.llm.enqueue("The BR-CF-31 carbon filter of the Breeze Air B3 should be replaced regularly [1].")
    ask_and_wait(page, QUESTION)  # a "how many" answered with no number: supported, but no answer
    chat.get_by_text(WARNING).first.wait_for()
    # in the note under the answer (the badge above it holds the same reason, shown on hover)
    chat.get_by_text("it may not answer what was asked").filter(visible=True).first.wait_for()
    # The passage it rests on is open, not behind a click: its text is on screen.
    chat.get_by_text("should be replaced every 90 days").last.wait_for(state="visible")
    page.screenshot(path=str(artifacts / "low-confidence.png"), full_page=True)

    rig.llm.enqueue("Every 90 days [1].")
    ask_and_wait(page, QUESTION)
    chat.get_by_text("Every 90 days").last.wait_for()
    assert chat.get_by_text(WARNING).count() == 1  # only under the first answer
