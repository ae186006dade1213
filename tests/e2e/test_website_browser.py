"""A website followed from the Knowledge tab, in a real browser: an admin adds it as a "Website" (in Chinese,
"网站"), its first crawl's report shows in the panel, and a question about it is answered with a citation that
opens the page's text in the sources panel with a link to the live page."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.integration.sync_helpers import wait_for
from tests.integration.web_site import serving

pytestmark = [pytest.mark.e2e, pytest.mark.slow]  # starts its own app and a website


def _site(root: Path) -> None:
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "index.html").write_text(
        "<html><head><title>Kettle manual</title></head><body><header>Acme · Shop · Support</header>"
        "<h1>Kettle manual</h1><p>See <a href='descaling.html'>descaling</a>.</p></body></html>",
        "utf-8",
    )
    (root / "docs" / "descaling.html").write_text(
        "<html><head><title>Descaling</title></head><body><h1>Descaling</h1>"
        "<p>Descale the kettle every month with a solution of citric acid.</p></body></html>",
        "utf-8",
    )


def test_a_website_is_added_crawled_and_cited_with_a_link_to_the_live_page(
    scripted_app: Callable[..., Any],
    open_page: Callable[[str], Any],
    ask_and_wait: Callable[[Any, str], None],
    tmp_path: Path,
) -> None:
    _site(tmp_path / "site")
    rig, url = scripted_app(sync={"enabled": True, "web_delay_s": 0.0})
    with serving(tmp_path / "site") as site:
        page = open_page(url)
        page.get_by_role("tab", name="Knowledge").click()
        page.locator("#sources").get_by_text("Followed folders, git repositories and websites").click()
        page.locator("#source-name input, #source-name textarea").first.fill("kettle")
        page.locator("#source-kind").get_by_text("Website").click()
        page.locator("#source-kb input, #source-kb textarea").first.fill("kettle")
        page.locator("#source-location input, #source-location textarea").first.fill(f"{site.url}/docs/index.html")
        page.locator("#source-add").click()
        wait_for(lambda: any(d.kb == "kettle" for d in rig.engine.library.documents()) and all(
            s.state == "idle" for s in rig.engine.sync.sources()), what="the first crawl")  # fmt: skip
        expect(page.locator("#source-report")).to_contain_text("2 pages: 2 added", timeout=30_000)

        page.get_by_role("tab", name="Chat").click()
        rig.llm.enqueue("Descale the kettle every month with citric acid [1].")
        ask_and_wait(page, "How often should the kettle be descaled?")
        title = page.locator("#citation-title")
        expect(title).to_contain_text(f"{site.url}/docs/descaling.html")
        expect(page.locator("#citation-section")).to_contain_text("citric acid")
        link = title.locator("a.live-page")
        expect(link).to_have_attribute("href", f"{site.url}/docs/descaling.html")
        expect(link).to_have_attribute("target", "_blank")

        page.goto(f"{url}?lang=zh")
        page.get_by_role("tab", name="知识库").click()
        page.locator("#sources").get_by_text("跟随的文件夹、Git 仓库与网站").click()
        expect(page.locator("#source-kind")).to_contain_text("网站")
        expect(page.locator("#source-report")).to_contain_text("2 个网页：新增 2", timeout=30_000)
