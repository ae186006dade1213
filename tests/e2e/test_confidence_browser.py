"""How sure the answer is, as a user meets it: an answer that does not give what was asked is not stated but said
as "Not sure — the passage most likely to hold it:", that passage open below and the model's guess behind a
"Show the model's guess" button, in English and in Chinese; a fitting answer is stated. The replies are
scripted (the real model cannot be made to miss on cue); everything else is the real app in a real browser."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.test_one_language_browser import other_language

pytestmark = [pytest.mark.e2e]

PURIFIER = """# Breeze Air B3 care

The Breeze Air B3 purifier cleans a 40 square metre room in 12 minutes on its highest setting.
Its carbon filter, part number BR-CF-31, should be replaced every 90 days.
"""
QUESTION = "How many days apart should the carbon filter of the Breeze Air B3 be replaced?"
GUESS = "The BR-CF-31 carbon filter of the Breeze Air B3 should be replaced regularly [1]."
NOT_SURE = "Not sure — the passage most likely to hold it:"


def test_a_likely_wrong_answer_is_not_sure_with_its_passage_open_and_the_guess_on_request(
    scripted_app: Callable[..., Any],
    open_page: Callable[[str], Any],
    ask_and_wait: Callable[[Any, str], None],
    artifacts: Path,
) -> None:
    rig, url = scripted_app({"breeze_air_b3.md": PURIFIER})
    page = open_page(url)
    chat = page.locator("#chatbot")

    rig.llm.enqueue(GUESS)
    ask_and_wait(page, QUESTION)  # a "how many" answered with no number: supported, but likely wrong
    chat.get_by_text(NOT_SURE).first.wait_for()
    # The passage most likely to hold the answer is open, not behind a click: its text is on screen.
    chat.get_by_text("should be replaced every 90 days").last.wait_for(state="visible")
    guess = chat.locator("details.model-guess").last
    expect(guess.get_by_text("should be replaced regularly")).to_be_hidden()  # not stated
    page.screenshot(path=str(artifacts / "not-sure.png"), full_page=True)
    guess.get_by_text("Show the model's guess").click()
    expect(guess.get_by_text("should be replaced regularly")).to_be_visible()
    expect(guess.locator("details.confidence-badge summary")).to_have_text("⚠ Not sure", use_inner_text=True)
    page.screenshot(path=str(artifacts / "not-sure-guess.png"), full_page=True)

    rig.llm.enqueue("Every 90 days [1].")
    ask_and_wait(page, QUESTION)
    chat.get_by_text("Every 90 days").last.wait_for()
    assert chat.get_by_text(NOT_SURE).count() == 1  # only the first answer was withheld

    # In Chinese: the same, in Chinese words only.
    page.locator("#language-switch").get_by_role("link", name="中文").click()
    chat.get_by_text("不确定——最可能包含答案的段落：").first.wait_for()
    button = chat.locator("details.model-guess summary").first
    expect(button).to_have_text("显示模型的猜测", use_inner_text=True)
    chat.locator("details.model-guess").first.evaluate("details => { details.open = true; }")  # opened above
    badge = chat.locator("details.model-guess").first.locator("details.confidence-badge")
    badge.locator("summary").click()  # its reasons too
    head = chat.get_by_text("不确定——最可能包含答案的段落：").first
    said = "\n".join([head.inner_text(), button.inner_text(), badge.inner_text()])
    assert not other_language(said, "zh"), said
    page.screenshot(path=str(artifacts / "not-sure-zh.png"), full_page=True)
