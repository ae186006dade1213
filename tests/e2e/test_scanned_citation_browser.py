"""A scan as people meet it in a real browser (real OCR, scripted model): upload an image-only PDF, see in the
document view that it was read by OCR, ask about it, click the citation and see the page drawn with the
passage highlighted."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.upload import choose_files

pytestmark = [pytest.mark.e2e]

LINES = ["The Alpha robot battery lasts 90 minutes.", "Charge it for two hours before first use."]


def _yellow(png: bytes) -> int:
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    return sum(1 for r, g, b in image.getdata() if r > 200 and g > 180 and b < 140)


# Behind `slow` (make test-slow, which CI runs after make test): one of the longest tests of the default run,
# which must stay under 10 minutes on 2 cores; faster tests in the default run cover the same code paths.
@pytest.mark.slow
def test_upload_a_scan_ask_and_open_the_cited_page(
    scripted_app: Callable[..., Any],
    open_page: Callable[[str], Any],
    ask_and_wait: Callable[[Any, str], None],
    make_documents: Any,
    tmp_path: Path,
    artifacts: Path,
) -> None:
    rig, url = scripted_app()
    scan = make_documents.scanned_pdf(tmp_path / "alpha_scan.pdf", [LINES])
    page = open_page(url)
    page.locator("#question textarea").wait_for()
    page.get_by_role("tab").filter(has_text="Knowledge").click()
    choose_files(page, scan)
    page.locator("#add-files").click()
    page.locator("#ingest-report").get_by_text("alpha_scan.pdf: added").wait_for(timeout=120_000)

    # The document view: how it was read.
    page.locator("#documents").get_by_text("alpha_scan.pdf").filter(visible=True).first.click()
    quality = page.locator("#doc-quality")
    quality.get_by_text("read by OCR", exact=False).wait_for()
    assert "1 read by OCR" in quality.inner_text()
    page.locator("#doc-chunks").get_by_text("OCR 0.9", exact=False).first.wait_for(state="attached")

    page.get_by_role("tab").filter(has_text="Chat").click()
    rig.llm.enqueue("The Alpha battery lasts 90 minutes [1].")
    ask_and_wait(page, "How long does the Alpha battery last?")
    page.locator("#chatbot").get_by_text("[1] alpha_scan.pdf · p. 1").last.click()  # the citation opens...
    page.locator("#chatbot").get_by_text("Click the passage", exact=False).last.click()  # ...its passage: the page
    image = page.locator("#citation-page img")
    image.wait_for(state="visible", timeout=30_000)
    assert "alpha_scan.pdf · p. 1" in page.locator("#citation-title").inner_text()
    source = image.get_attribute("src")
    assert source and "://" not in source.split("/gradio_api/")[0].replace(url, "")  # served by the app itself
    png = page.request.get(source if source.startswith("http") else url + source).body()
    assert _yellow(png) > 500  # the passage's lines are marked
    page.screenshot(path=str(artifacts / "cited-page.png"), full_page=True)
