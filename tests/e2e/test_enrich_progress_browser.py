"""Background indexing as a user meets it in the Knowledge tab: a base still being indexed shows how far each
step has got (paused here, so the line holds still), in the page's language; resumed with the tab's button
and done, the line and its buttons go. The real app and embedder in a real browser; the base is paused before
the upload through the engine's facet, as the HTTP API does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.e2e]

TOPICS = [
    "The Orion kettle descales with citric acid once a month.",
    "The Vega router reboots itself every Sunday night at three.",
    "The Lyra lamp dims in twelve steps from the touch ring.",
    "The Nova fan oscillates ninety degrees on the second button.",
]
MANUAL = "\n\n".join(f"## Part {i}\n\n{text} Keep this manual for later." for i, text in enumerate(TOPICS))


# Starts an app of its own (background indexing on, which the shared apps leave off).
@pytest.mark.slow
def test_the_knowledge_tab_shows_background_indexing_until_done(
    scripted_app: Callable[..., Any], open_page: Callable[[str], Any], browser: Any
) -> None:
    rig, url = scripted_app(enrich={"background": True, "tick_s": 0.2}, ingest={"chunk_size": 100, "chunk_overlap": 0})
    enrichment = rig.engine.enrichment
    enrichment.pause("manuals")
    path = rig.state_dir.parent / "appliances.md"
    path.write_text(MANUAL, "utf-8")
    (result,) = rig.engine.library.ingest([(path, path.name)], kb="manuals")
    assert result.status == "added", result.message
    total = enrichment.progress("manuals").steps[0].total

    page = open_page(url)
    page.get_by_role("tab", name="Knowledge").click()
    line = page.locator("#enrich-progress")
    line.get_by_text(f"manuals: vectors for 0 of {total} passages; paused.").wait_for(timeout=60_000)

    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="zh-CN")
    try:
        zh = context.new_page()
        zh.set_default_timeout(30_000)
        zh.goto(url)
        zh.get_by_role("tab", name="知识库").click()
        zh_line = zh.locator("#enrich-progress")
        zh_line.get_by_text(f"manuals：向量已完成 0/{total} 段；已暂停。").wait_for(timeout=60_000)
        assert not zh_line.get_by_text("passages").first.is_visible()  # the Chinese page shows no English
    finally:
        context.close()

    expect(page.locator("#enrich-kb input")).to_have_value("manuals")
    page.locator("#enrich-resume").click()
    line.get_by_text("manuals: vectors").wait_for(state="detached", timeout=300_000)  # done: the line goes
    expect(page.locator("#enrich-controls")).to_be_hidden()
    assert not enrichment.progress("manuals").paused
