"""A cited figure as people meet it in a real browser: pages of GNU Octave's manual (Debian's octave-doc) uploaded,
a question about its plot found by real retrieval, and the scripted model's answer citing [1] shows the figure:
in the chat under the answer, the plot cropped from its page with its caption and page (in an English page and in
a Chinese one), and in the sources panel, the plot cropped from its page."""

from __future__ import annotations

import base64
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from ragapp.ui.figure_view import SHOWN_PX
from tests.unit.test_figures import PLOT_PAGES, octave_pages

pytestmark = [pytest.mark.e2e]

CAPTION = "Figure 15.1: Simple Two-Dimensional Plot."
QUESTION = "Which figure shows a simple two-dimensional plot of sin(x)?"


def _shown_in_chat(page: Any) -> tuple[int, int]:
    """The cited figure's picture in the chat, drawn (loaded, under the page's security policy): its size in
    pixels, read from the PNG it carries."""
    from PIL import Image

    picture = page.locator("#chatbot img.cited-figure")
    picture.wait_for(state="visible", timeout=30_000)
    page.wait_for_function(
        "() => { const i = document.querySelector('#chatbot img.cited-figure'); return i && i.naturalWidth > 0 }"
    )
    source = picture.get_attribute("src") or ""
    assert source.startswith("data:image/png;base64,"), source[:80]
    return Image.open(io.BytesIO(base64.b64decode(source.split(",", 1)[1]))).size


@pytest.mark.slow  # its own app, seven pages of a real PDF ingested, two pages asking (~45 s on 2 loaded cores)
def test_a_question_about_a_figure_shows_the_figure_cropped_in_the_chat_and_the_sources_panel(
    scripted_app: Callable[..., Any],
    open_page: Callable[[str], Any],
    ask_and_wait: Callable[[Any, str], None],
    browser: Any,
    tmp_path: Path,
    artifacts: Path,
) -> None:
    from PIL import Image

    rig, url = scripted_app(ingest={"pdf_tables": False})
    pdf = octave_pages(tmp_path / "octave-plotting.pdf", list(PLOT_PAGES))
    (result,) = rig.engine.library.ingest([(pdf, pdf.name)])
    assert result.status == "added", result.message
    page = open_page(url)
    rig.llm.enqueue("Figure 15.1, the Simple Two-Dimensional Plot, shows sin (x) for x from -10 to 10 [1].")
    ask_and_wait(page, QUESTION)
    # In the chat, under the answer: the plot, small, with its caption and its page
    width, height = _shown_in_chat(page)
    assert width / height > 1.3  # the plot, not its page
    box = page.locator("#chatbot img.cited-figure").bounding_box()
    assert box is not None and box["width"] <= SHOWN_PX + 1  # small, under the answer
    cited = page.locator("#chatbot .message", has=page.locator("img.cited-figure"))
    expect(cited.first).to_contain_text(CAPTION)
    expect(cited.first).to_contain_text("page 1")
    title = page.locator("#citation-title")
    expect(title).to_contain_text(f"octave-plotting.pdf · p. 1 · 🖼 {CAPTION}")  # the figure's passage, cited
    expect(page.locator("#chatbot")).to_contain_text(f"🖼 {CAPTION}")  # and named so in the chat's sources
    image = page.locator("#citation-page img")
    image.wait_for(state="visible", timeout=30_000)
    source = image.get_attribute("src")
    assert source
    png = page.request.get(source if source.startswith("http") else url + source).body()
    width, height = Image.open(io.BytesIO(png)).size
    assert width / height > 1.3  # the plot, wider than tall: not the page (612 × 792)
    page.screenshot(path=str(artifacts / "figure-citation.png"))

    # The same in a Chinese page: the picture, and its page said in Chinese
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="zh-CN")
    try:
        zh = context.new_page()
        zh.set_default_timeout(30_000)
        zh.goto(url)
        zh.locator("#question textarea").wait_for()
        rig.llm.enqueue("图 15.1（Figure 15.1）画的是 sin (x) 的简单二维图 [1]。")
        box = zh.locator("#question textarea")  # ask_and_wait waits for English words
        box.fill(QUESTION)
        box.press("Enter")
        zh.locator("#chatbot").get_by_text("简单二维图").first.wait_for()
        width, height = _shown_in_chat(zh)
        assert width / height > 1.3
        cited = zh.locator("#chatbot .message", has=zh.locator("img.cited-figure")).first
        expect(cited).to_contain_text("第 1 页")
        assert "page 1" not in cited.inner_text()
        zh.screenshot(path=str(artifacts / "figure-citation-zh.png"))
    finally:
        context.close()
