"""The first screen is for people, not developers: what the app is and does, the examples within the first
screen, the past chats behind a labelled button, and the models and the index under "About"."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.e2e]


@pytest.mark.parametrize(("locale", "examples", "past"), [("en-US", "en", "Past chats"), ("zh-CN", "zh", "历史对话")])
def test_the_first_screen_says_what_the_app_does_and_shows_the_examples(
    read_only_app: tuple[Any, str], browser: Any, locale: str, examples: str, past: str
) -> None:
    _rig, url = read_only_app
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale=locale)
    try:
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.goto(url)
        page.locator("#question textarea").wait_for()
        first = page.locator(f"#examples-{examples} button").first
        first.wait_for()
        box = first.bounding_box()
        assert box is not None and box["y"] + box["height"] <= 1000  # no scrolling to find them
        header = " ".join(page.locator(f"#{part}").inner_text() for part in ("header", "purpose", "account"))
        assert "RAGAPP_" not in header and "scripted" not in header  # no settings nor model names up there
        assert not page.locator("#status-line").is_visible()  # under "About", closed
        sidebar = page.locator("#chats-sidebar").first
        assert "open" not in (sidebar.get_attribute("class") or "").split()  # it starts closed
        page.locator("#open-chats").get_by_text(past).click()
        expect(sidebar).to_have_class(re.compile(r"\bopen\b"))
        page.locator("#chat-list").wait_for(state="visible")
    finally:
        context.close()
