"""A text PDF's citation as people meet it in a real browser (scripted model): a three-page manual uploaded, a
question about a passage on its third page, and the sources panel draws that page with the passage marked,
though the sentence was set over a line break with its word hyphenated ("manage-" / "ment")."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.e2e]

PAGES = [
    ["Lumen R2 user manual", "", "Contents: unpacking, the app, maintenance.", "Keep this manual with the robot."],
    ["Unpacking", "", "Take the robot out of the box and remove the foam parts.", "Pair it with the app by Wi-Fi."],
    [
        "Maintenance",
        "",
        "Empty the dust bin after each run. Charging is automatic. The battery manage-",
        "ment system stops charging at 45 degrees Celsius and resumes when the robot",
        "has cooled down. Clean the side brush every month.",
    ],
]


def _yellow(png: bytes) -> int:
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    return sum(1 for r, g, b in image.getdata() if r > 200 and g > 180 and b < 140)


@pytest.mark.slow  # starts its own app and ingests a PDF (~40 s on 2 loaded cores)
def test_the_cited_passage_is_marked_on_its_pdf_page(
    scripted_app: Callable[..., Any],
    open_page: Callable[[str], Any],
    ask_and_wait: Callable[[Any, str], None],
    make_documents: Any,
    tmp_path: Path,
    artifacts: Path,
) -> None:
    rig, url = scripted_app()
    pdf = make_documents.text_pages_pdf(tmp_path / "lumen_r2.pdf", PAGES)
    (result,) = rig.engine.library.ingest([(pdf, pdf.name)])
    assert result.status == "added", result.message
    page = open_page(url)
    rig.llm.enqueue("The battery management system stops charging at 45 degrees Celsius [1].")
    ask_and_wait(page, "At what temperature does the battery management system stop charging?")
    title = page.locator("#citation-title")
    expect(title).to_contain_text("lumen_r2.pdf · p. 3")  # the answer's source, drawn beside it
    image = page.locator("#citation-page img")
    image.wait_for(state="visible", timeout=30_000)
    assert "could not be found" not in title.inner_text()
    source = image.get_attribute("src")
    assert source
    png = page.request.get(source if source.startswith("http") else url + source).body()
    assert _yellow(png) > 2000  # the sentence's two lines are marked
    page.screenshot(path=str(artifacts / "pdf-citation.png"))
