"""The sources panel as people use it across a conversation (scripted model, real browser): closed, it opens
again from any [n] in an answer, on that answer's source; it follows the chat shown, emptied for a new chat and
refilled with a past chat's sources when that chat is opened from the sidebar."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.e2e]

DOCS = {
    "alpha.md": "# Alpha robot\n\nThe Alpha robot battery lasts 90 minutes on a full charge.\n",
    "beta.md": "# Beta robot\n\nThe Beta robot battery lasts 150 minutes on a full charge.\n",
}
FIRST = "How long do the robot batteries last?"


def _marker(page: Any, text: str) -> Any:
    return page.locator("#chatbot .cite-marker").filter(has_text=text).last


def test_markers_reopen_the_closed_panel_and_the_panel_follows_the_chat_shown(
    scripted_app: Callable[..., Any],
    open_page: Callable[[str], Any],
    ask_and_wait: Callable[[Any, str], None],
    artifacts: Path,
) -> None:
    rig, url = scripted_app(DOCS)
    page = open_page(url)
    panel, title = page.locator("#citation-view"), page.locator("#citation-title")
    rig.llm.enqueue("The Alpha battery lasts 90 minutes [1]. The Beta battery lasts 150 minutes [2].")
    ask_and_wait(page, FIRST)
    expect(title).to_contain_text("alpha.md")

    # Closed, the panel opens again from a marker, on that marker's source; and again after a second Close.
    page.locator("#citation-close").click()
    expect(panel).to_be_hidden()
    _marker(page, "[2]").click()
    expect(panel).to_be_visible()
    expect(title).to_contain_text("beta.md")
    expect(page.locator("#citation-choice input:checked")).to_have_count(1)
    page.locator("#citation-close").click()
    expect(panel).to_be_hidden()
    _marker(page, "[1]").click()
    expect(title).to_contain_text("alpha.md")
    expect(page.locator("#citation-section mark")).to_contain_text("90 minutes")

    # A new chat has no sources: the panel goes. (The chat is kept, and listed, by the event after the answer.)
    toggle = page.locator(".sidebar-parent button, button.toggle-button").first
    if toggle.count():
        toggle.click()
    page.locator("#chat-list").get_by_text(FIRST).first.wait_for()
    page.locator("#new-chat").click()
    expect(panel).to_be_hidden()

    # The second chat's answer cites Beta only; opening the first chat brings its own sources back.
    rig.llm.enqueue("The Beta battery lasts 150 minutes [1].")
    ask_and_wait(page, "How long does the Beta battery last?")
    expect(title).to_contain_text("beta.md")
    page.locator("#chat-list").get_by_text("How long does the Beta battery last?").first.wait_for()  # kept
    page.locator("#chat-list").get_by_text(FIRST).first.click()
    page.locator("#chatbot").get_by_text("The Alpha battery lasts 90 minutes").first.wait_for()
    expect(title).to_contain_text("alpha.md")
    expect(page.locator("#citation-choice label")).to_have_count(2)
    _marker(page, "[2]").click()  # and its markers pick among its own sources
    expect(title).to_contain_text("beta.md")
    page.screenshot(path=str(artifacts / "citation-panel.png"))

    # Opening the second chat again: its one source.
    page.locator("#chat-list").get_by_text("How long does the Beta battery last?").first.click()
    expect(page.locator("#citation-choice label")).to_have_count(1)
    expect(title).to_contain_text("beta.md")
