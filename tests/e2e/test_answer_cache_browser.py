"""A question asked again, as a user meets it: a new chat asking what was answered before gets the kept answer at
once, marked "Answered before, on DATE" with its citation, and "Answer again" has the model answer anew. The
replies are scripted (to tell the two answers apart); everything else is the real app in a real browser."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.e2e]

ALPHA = "# Alpha robot\n\nThe Alpha robot's battery lasts 90 minutes on a full charge.\n"
QUESTION = "How long does the Alpha robot's battery last?"


def test_a_question_asked_again_shows_the_kept_answer_and_answer_again_asks_anew(
    scripted_app: Callable[..., Any],
    open_page: Callable[[str], Any],
    ask_and_wait: Callable[[Any, str], None],
    artifacts: Path,
    browser: Any,
) -> None:
    rig, url = scripted_app({"alpha.md": ALPHA}, answer_cache={"enabled": True})
    page = open_page(url)
    chat = page.locator("#chatbot")
    rig.llm.enqueue("The Alpha robot's battery lasts 90 minutes [1].")
    ask_and_wait(page, QUESTION)
    chat.get_by_text("lasts 90 minutes").first.wait_for()
    assert chat.get_by_text("Answered before").count() == 0
    calls = len(rig.llm.calls)

    # A new chat, the same question: the kept answer, said to be one, with its source and the button.
    page.locator("#clear").click()
    chat.get_by_text("lasts 90 minutes").first.wait_for(state="detached")
    box = page.locator("#question textarea")
    box.fill(QUESTION)
    box.press("Enter")
    chat.get_by_text("Answered before, on 20").first.wait_for()
    chat.get_by_text("alpha.md").first.wait_for()
    again = chat.locator("button", has_text="Answer again")
    again.first.wait_for(state="visible")
    page.screenshot(path=str(artifacts / "answered-before.png"), full_page=True)
    assert len(rig.llm.calls) == calls  # the model was not asked

    # "Answer again": the model answers anew, and that answer replaces the kept one.
    rig.llm.enqueue("It lasts 90 minutes on a full charge [1].")
    again.first.click()
    chat.get_by_text("It lasts 90 minutes on a full charge").first.wait_for()
    assert len(rig.llm.calls) == calls + 1  # the model answered

    # In a Chinese page, another browser: the new answer, kept, said so in Chinese, the button named so too.
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="zh-CN")
    try:
        zh = context.new_page()
        zh.set_default_timeout(30_000)
        zh.goto(url)
        box = zh.locator("#question textarea")
        box.fill(QUESTION)
        box.press("Enter")
        zh_chat = zh.locator("#chatbot")
        zh_chat.get_by_text("之前回答过").first.wait_for(state="visible")
        zh_chat.get_by_text("It lasts 90 minutes on a full charge").first.wait_for()
        zh_chat.locator("button", has_text="重新回答").first.wait_for(state="visible")
        assert not zh_chat.get_by_text("Answered before").first.is_visible()
    finally:
        context.close()
    assert len(rig.llm.calls) == calls + 1
