"""The support check as a user meets it: an answer the documents do not hold is refused with the closest passage,
and a supported one cites its passage with the supporting sentence highlighted. The replies are scripted (the
real model cannot be made to invent a fact on cue); everything else is the real app in a real browser."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.e2e]

KETTLE = """# Orion Kettle K9 quick facts

The Orion Kettle K9 boils 1.7 litres of water in 3 minutes and 40 seconds.
Its limescale filter, part number OK-FLT-77, should be rinsed every 14 days.
"""
QUESTION = "How often should the limescale filter of the Orion Kettle K9 be rinsed?"


def test_unsupported_answer_is_refused_and_a_supported_one_highlights_its_sentence(
    scripted_app: Callable[..., Any],
    open_page: Callable[[str], Any],
    ask_and_wait: Callable[[Any, str], None],
    artifacts: Path,
) -> None:
    # Stated whatever its confidence: this checks the support check's marks, not the "not sure" below the
    # calibrator's threshold (an answer with an unsupported sentence scores under it; test_confidence_browser.py).
    rig, url = scripted_app({"orion_kettle_k9.md": KETTLE}, workflow={"not_sure": False})
    page = open_page(url)
    chat = page.locator("#chatbot")

    rig.llm.enqueue("Rinse it every 30 days [1].")  # 30 is in no passage
    ask_and_wait(page, QUESTION)
    chat.get_by_text("The documents do not say this").first.wait_for()
    assert "30 days" not in chat.inner_text()  # the streamed draft was replaced
    chat.get_by_text("[1] orion_kettle_k9.md").first.wait_for()  # the closest passage is offered

    rig.llm.enqueue("Rinse the limescale filter every 14 days [2]. It also removes 99% of the chalk.")
    ask_and_wait(page, QUESTION)
    answer = chat.get_by_text("Rinse the limescale filter every 14 days [1].")  # the wrong [2] fixed
    answer.first.wait_for()
    evidence = chat.get_by_text("From the documents").last  # the quote shown before the answer
    evidence.wait_for()
    assert chat.locator("mark").filter(has_text="should be rinsed every 14 days").count() >= 1
    chat.get_by_text("not found in the documents").first.wait_for()  # the sentence with 99% is marked
    shown = chat.inner_text()  # an English page shows the chat's own words in English only
    assert [w for w in ("文档原文", "文档中没有", "检索问题", "点击原文") if w in shown] == []
    chat.get_by_text("[1] orion_kettle_k9.md").last.click()  # open the citation: the passage...
    mark = chat.locator("mark").filter(has_text="should be rinsed every 14 days").last
    mark.wait_for(state="visible")  # ...with the sentence that supports the answer highlighted
    page.wait_for_timeout(500)
    page.screenshot(path=str(artifacts / "grounding.png"), full_page=True)
