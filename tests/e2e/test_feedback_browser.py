"""👍/👎 under an answer show once the answer is done: while it is still being written (here, held by a model
that stalls), its buttons wait, and earlier answers keep theirs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.e2e]

DOC = "# Kettle\n\nThe Orion kettle boils water in 3 minutes. Its filter is rinsed every 14 days.\n"


def test_feedback_buttons_appear_when_the_answer_is_done(
    scripted_app: Callable[..., Any], open_page: Callable[[str], Any]
) -> None:
    rig, url = scripted_app({"kettle.md": DOC})
    page = open_page(url)
    chat = page.locator("#chatbot")
    box = page.locator("#question textarea")
    rig.llm.enqueue("It takes 3 minutes [1].", ["Every 14", rig.llm.hang(60), " days [1]."])
    box.fill("How fast does the Orion kettle boil?")
    box.press("Enter")
    chat.get_by_text("It takes 3 minutes [1].").first.wait_for()
    buttons = chat.locator(".message-buttons-left")
    expect(buttons.last).to_be_visible()  # the first answer, done: rate it
    try:
        box.fill("How often is the filter rinsed?")
        box.press("Enter")
        chat.get_by_text("Every 14").first.wait_for()
        expect(buttons).to_have_count(2)
        expect(buttons.last).to_be_hidden()  # still being written
        expect(buttons.first).to_be_visible()  # the earlier one keeps its buttons
    finally:
        rig.llm.release()
    chat.get_by_text("Every 14 days [1].").first.wait_for()
    expect(buttons.last).to_be_visible()
