"""A cited figure as people meet it in a real browser: pages of GNU Octave's manual (Debian's octave-doc) uploaded,
a question about its plot found by real retrieval, and the scripted model's answer citing [1] shows the figure:
the chat's source names it by its caption, and the sources panel shows the plot cropped from its page."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.unit.test_figures import PLOT_PAGES, octave_pages

pytestmark = [pytest.mark.e2e]

CAPTION = "Figure 15.1: Simple Two-Dimensional Plot."


@pytest.mark.slow  # starts its own app and ingests seven pages of a real PDF (~40 s on 2 loaded cores)
def test_a_question_about_a_figure_shows_the_figure_cropped_in_the_sources_panel(
    scripted_app: Callable[..., Any],
    open_page: Callable[[str], Any],
    ask_and_wait: Callable[[Any, str], None],
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
    ask_and_wait(page, "Which figure shows a simple two-dimensional plot of sin(x)?")
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
