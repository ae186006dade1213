"""An answer's sources beside it (under it on a narrow screen): its cited passages in citation order, the first
shown at once, another picked by its [n] in the answer or in the list; an answer that cites nothing closes the
panel."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.e2e]

DOCS = {
    "alpha.md": "# Alpha robot\n\nThe Alpha robot battery lasts 90 minutes on a full charge.\n",
    "beta.md": "# Beta robot\n\nThe Beta robot battery lasts 150 minutes on a full charge.\n",
}


def test_the_sources_follow_the_answer_and_the_pick(
    scripted_app: Callable[..., Any],
    open_page: Callable[[str], Any],
    ask_and_wait: Callable[[Any, str], None],
    artifacts: Any,
) -> None:
    rig, url = scripted_app(DOCS)
    page = open_page(url)  # 1280 px wide
    panel = page.locator("#citation-view")
    expect(panel).to_be_hidden()  # nothing cited yet
    rig.llm.enqueue("The Alpha battery lasts 90 minutes [1]. The Beta battery lasts 150 minutes [2].")
    ask_and_wait(page, "How long do the robot batteries last?")
    expect(panel).to_be_visible()
    sources = page.locator("#citation-choice label")
    expect(sources).to_have_count(2)
    assert [s.strip()[:3] for s in sources.all_inner_texts()] == ["[1]", "[2]"]  # in citation order
    title = page.locator("#citation-title")
    expect(title).to_contain_text("alpha.md")  # the first, shown at once
    expect(page.locator("#citation-section mark")).to_contain_text("90 minutes")
    chat, side = page.locator("#chatbot").bounding_box(), panel.bounding_box()
    assert chat and side and side["x"] >= chat["x"] + chat["width"] - 1  # beside the answer
    page.locator("#chatbot .cite-marker").filter(has_text="[2]").first.click()  # a [2] in the answer
    expect(title).to_contain_text("beta.md")
    expect(page.locator("#citation-section mark")).to_contain_text("150 minutes")
    sources.nth(0).click()  # or a pick in the list
    expect(title).to_contain_text("alpha.md")
    sources.nth(1).click()
    expect(title).to_contain_text("beta.md")
    page.screenshot(path=str(artifacts / "sources.png"))

    page.set_viewport_size({"width": 700, "height": 900})  # a narrow screen: under the answer
    chat, side = page.locator("#chatbot").bounding_box(), panel.bounding_box()
    assert chat and side and side["y"] >= chat["y"] + chat["height"] - 1

    ask_and_wait(page, "What is the capital of France?")  # nothing relevant: no sources
    expect(panel).to_be_hidden()
