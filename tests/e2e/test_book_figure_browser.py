"""A cited Word figure as people meet it in a real browser: a report written by python-docx holding the plot of GNU
Octave's manual (Debian's octave-doc) uploaded, a question about the picture found by real retrieval, and the
scripted model's answer citing [1] shows the picture in the chat under the answer, with its caption and no page
(a Word file has none), and in the sources panel. An EPUB's figure is drawn by the same path
(``tests/integration/test_book_figures_ingest.py``)."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.test_figure_citation_browser import _shown_in_chat
from tests.unit.test_book_figures import CAPTION, plot_report

pytestmark = [pytest.mark.e2e]


@pytest.mark.slow  # its own app, a Word file ingested with OCR, a question asked (~40 s on 2 loaded cores)
def test_a_cited_word_figure_shows_its_picture_in_the_chat_and_the_sources_panel(
    scripted_app: Callable[..., Any],
    open_page: Callable[[str], Any],
    ask_and_wait: Callable[[Any, str], None],
    tmp_path: Path,
    artifacts: Path,
) -> None:
    from PIL import Image

    rig, url = scripted_app(ingest={"ocr": False})
    report = plot_report(tmp_path)
    (result,) = rig.engine.library.ingest([(report, report.name)])
    assert result.status == "added", result.message
    page = open_page(url)
    rig.llm.enqueue("The picture shows a sine curve from -10 to 10 [1].")
    ask_and_wait(page, "Which picture shows a sine curve from -10 to 10?")
    width, height = _shown_in_chat(page)  # in the chat, under the answer: the plot as embedded
    assert width / height > 1.3
    cited = page.locator("#chatbot .message", has=page.locator("img.cited-figure"))
    expect(cited.first).to_contain_text(CAPTION)
    assert not re.search(r"page \d", cited.first.inner_text())  # a Word file has no pages
    expect(page.locator("#citation-title")).to_contain_text(f"report.docx · Plotting · 🖼 {CAPTION}")
    image = page.locator("#citation-page img")  # the sources panel: the picture, larger
    image.wait_for(state="visible", timeout=30_000)
    source = image.get_attribute("src")
    assert source
    png = page.request.get(source if source.startswith("http") else url + source).body()
    width, height = Image.open(io.BytesIO(png)).size
    assert width / height > 1.3 and width > 400
    page.screenshot(path=str(artifacts / "word-figure-citation.png"))
