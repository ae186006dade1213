"""Every answer shows how sure the app is, as a reader meets it in a real browser: a badge under the answer with
its level, whose reasons show on hover, on a click and from the keyboard; the same badge after a reload, and in
Chinese with no English left in it. The replies are scripted (the real model cannot be made to miss on cue);
the checks, the reranker and the page are the real app's."""

from __future__ import annotations

import re
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
LEVELS = re.compile(r"^[✔◐⚠] (High confidence|Medium confidence|Not sure)$")


# Starts its own app and asks twice: behind `slow`.
@pytest.mark.slow
def test_each_answer_shows_its_confidence_and_why_on_hover_click_and_keyboard(
    scripted_app: Callable[..., Any],
    open_page: Callable[[str], Any],
    ask_and_wait: Callable[[Any, str], None],
    artifacts: Path,
) -> None:
    # The low answer stated with its badge, as with "not sure" turned off (its own test: test_confidence_browser)
    rig, url = scripted_app({"breeze_air_b3.md": PURIFIER}, workflow={"not_sure": False})
    page = open_page(url)
    chat = page.locator("#chatbot")

    rig.llm.enqueue("The BR-CF-31 carbon filter of the Breeze Air B3 should be replaced regularly [1].")
    ask_and_wait(page, QUESTION)  # a "how many" answered with no number: low
    badge = chat.locator("details.confidence-badge").last
    summary, why = badge.locator("summary"), badge.locator(".confidence-why")
    expect(summary).to_have_text("⚠ Not sure", use_inner_text=True)
    expect(why).to_be_hidden()

    _hover(summary, why, "✗ It may not answer what was asked")  # hover: the reasons, without a click
    expect(why).to_be_visible()
    expect(why).to_contain_text("✓ Every sentence is in the passages", use_inner_text=True)
    page.screenshot(path=str(artifacts / "confidence-badge.png"))
    page.mouse.move(5, 5)
    expect(why).to_be_hidden()

    summary.click()  # a click (a tap) keeps them open, the mouse gone
    page.mouse.move(5, 5)
    expect(why).to_be_visible()
    summary.click()  # and closes them again
    page.mouse.move(5, 5)
    expect(why).to_be_hidden()
    summary.focus()  # the keyboard: Enter opens it
    page.keyboard.press("Enter")
    expect(badge).to_have_attribute("open", "")
    expect(why).to_be_visible()
    page.keyboard.press("Enter")

    rig.llm.enqueue("Every 90 days [1].")
    ask_and_wait(page, QUESTION)
    expect(chat.locator("details.confidence-badge")).to_have_count(2)  # the second answer has its own
    second = chat.locator("details.confidence-badge").last
    expect(second.locator("summary")).to_have_text(LEVELS, use_inner_text=True)
    assert second.locator("summary").inner_text() != "⚠ Not sure"  # it gives the number asked for

    page.wait_for_timeout(1000)  # the chat is kept by the event that follows the answer
    page.reload()  # the kept chat shows the same badges
    page.locator("#question textarea").wait_for()
    badges = page.locator("#chatbot details.confidence-badge")
    expect(badges).to_have_count(2)
    expect(badges.first.locator("summary")).to_have_text("⚠ Not sure", use_inner_text=True)

    # In Chinese: the level and the reasons in Chinese, no English left in them.
    page.locator("#language-switch").get_by_role("link", name="中文").click()
    first = badges.first
    expect(first.locator("summary")).to_have_text("⚠ 不确定", use_inner_text=True)
    _open(first)
    expect(first.locator(".confidence-why")).to_contain_text("可能没有回答所问的问题", use_inner_text=True)
    _open(badges.last)
    shown = "\n".join(b.inner_text() for b in badges.all())
    assert not other_language(shown, "zh"), shown
    page.screenshot(path=str(artifacts / "confidence-badge-zh.png"))


def _hover(summary: Any, why: Any, reason: str) -> None:
    """Hover ``summary`` until ``why`` shows ``reason``. The events after an answer (its sources drawn beside the
    chat) may move the chat a moment after the answer is written: a badge hovered before that may no longer be
    under the mouse, its reasons hidden (the reasons' text empty for 5 s, once in a loaded slow run at 448ce84):
    the mouse leaves and hovers again."""
    for _ in range(3):
        summary.hover()
        try:
            expect(why).to_contain_text(reason, use_inner_text=True, timeout=2_000)
            return
        except AssertionError:
            summary.page.mouse.move(5, 5)
    summary.hover()
    expect(why).to_contain_text(reason, use_inner_text=True)


def _open(badge: Any) -> None:
    """Open ``badge`` with a click on its summary. A switch of language redraws the chat's messages a moment after
    the page speaks the new language, and a badge opened before that redraw is drawn closed again (once in three
    slow runs): clicked again until it stays open."""
    for _ in range(3):
        badge.locator("summary").click()
        try:
            expect(badge).to_have_attribute("open", "", timeout=1_000)
            badge.page.wait_for_timeout(500)  # past the redraw, if it was still to come
            expect(badge).to_have_attribute("open", "", timeout=100)
            return
        except AssertionError:
            continue
    expect(badge).to_have_attribute("open", "")
