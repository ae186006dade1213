"""The app as a user meets it: upload in the Knowledge tab, ask in Chat, read the cited answer.

The answers come from the packaged local model (minutes on 2 cores: those tests are marked slow and run by
`make test-slow`); the failed upload needs no model and runs on the scripted one in the default run."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.upload import choose_files

pytestmark = [pytest.mark.e2e]

REPO = Path(__file__).resolve().parents[2]
# Facts that exist only in this file, so an answer that cites it can only come from the upload.
UPLOAD_TEXT = """# Orion Kettle K9 quick facts

The Orion Kettle K9 boils 1.7 litres of water in 3 minutes and 40 seconds.
Its limescale filter, part number OK-FLT-77, should be rinsed every 14 days.
The K9 is sold only in the colour "harbour blue".
"""


def _answer_done(page: object) -> None:
    # The turn is over when the input is interactive again and no step is pending.
    page.locator("#chatbot").get_by_text("Writing the answer").first.wait_for()  # type: ignore[attr-defined]
    page.wait_for_function(  # type: ignore[attr-defined]
        "() => !document.querySelector('#chatbot .pending, #chatbot [data-status=\"pending\"]')"
        " && !document.querySelector('.generating')",
        timeout=180_000,
    )


@pytest.mark.llm
@pytest.mark.slow
def test_upload_then_ask_cites_the_uploaded_file(page: object, tmp_path: Path, artifacts: Path) -> None:
    upload = tmp_path / "orion_kettle_k9.md"
    upload.write_text(UPLOAD_TEXT, encoding="utf-8")

    page.get_by_role("tab", name="Knowledge").click()  # type: ignore[attr-defined]
    choose_files(page, upload)
    page.locator("#add-files").click()  # type: ignore[attr-defined]
    page.locator("#ingest-report").get_by_text("orion_kettle_k9.md: added").wait_for(timeout=120_000)  # type: ignore[attr-defined]
    page.locator("#documents").get_by_text("orion_kettle_k9.md").first.wait_for()  # type: ignore[attr-defined]

    page.get_by_role("tab", name="Chat").click()  # type: ignore[attr-defined]
    box = page.locator("#question textarea")  # type: ignore[attr-defined]
    box.fill("How often should the limescale filter of the Orion Kettle K9 be rinsed?")
    box.press("Enter")
    _answer_done(page)

    chat = page.locator("#chatbot")  # type: ignore[attr-defined]
    shown = chat.inner_text()
    assert "14" in shown, shown
    # The citation under the answer (📄), not the quoted evidence above it, which names the same passage.
    citation = chat.get_by_text(re.compile(r"📄 \[\d\] orion_kettle_k9\.md"))
    assert citation.count() >= 1, f"no citation of the uploaded file in:\n{shown}"
    citation.first.click()  # a citation opens to show the cited passage...
    chat.get_by_text("harbour blue").first.wait_for(state="visible")  # ...which holds text the answer doesn't
    page.wait_for_timeout(1_000)  # type: ignore[attr-defined]  # let the opening animation settle for the picture
    page.screenshot(path=str(artifacts / "chat.png"), full_page=True)  # type: ignore[attr-defined]
    if os.environ.get("RAGAPP_UPDATE_SCREENSHOT") == "1":  # `make screenshot`: refresh the README's picture
        shutil.copy(artifacts / "chat.png", REPO / "assets" / "screenshot.png")


@pytest.mark.llm
@pytest.mark.slow
def test_off_topic_question_says_not_in_knowledge_base(page: object) -> None:
    box = page.locator("#question textarea")  # type: ignore[attr-defined]
    box.fill("What is the capital of France?")
    box.press("Enter")
    # Never stated: refused as not found, or (since the calibrator) withheld as "not sure" with the nearest passage.
    withheld = re.compile("could not find anything|Not sure — the passage most likely to hold it")
    page.locator("#chatbot").get_by_text(withheld).first.wait_for(timeout=120_000)  # type: ignore[attr-defined]


def test_upload_of_corrupt_file_reports_error_and_keeps_documents(
    scripted_app: Callable[..., Any], open_page: Callable[[str], Any], tmp_path: Path
) -> None:
    _, url = scripted_app({"kettle_notes.md": UPLOAD_TEXT})
    page = open_page(url)
    page.locator("#question textarea").wait_for()
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.4 this is not really a pdf")
    page.get_by_role("tab", name="Knowledge").click()
    page.locator("#documents").get_by_text("kettle_notes.md").filter(visible=True).first.wait_for()
    rows_before = page.locator("#documents tbody tr").count()
    stop = page.locator("#stop-upload")
    expect(stop).to_be_disabled()  # nothing to stop
    choose_files(page, bad)
    page.locator("#add-files").click()
    # The progress board may still show the failure beside the report: either will do.
    page.locator("#ingest-report").get_by_text("broken.pdf: could not read").first.wait_for()
    expect(stop).to_be_disabled()  # the upload is over
    assert page.locator("#documents tbody tr").count() == rows_before
    page.locator("#documents").get_by_text("kettle_notes.md").filter(visible=True).first.wait_for()


# Per header cell of a table head: its text, and how many lines that text takes as laid out.
HEADER_LINES = """(head) => Object.fromEntries(Array.from(head.querySelectorAll("th")).map((th) => {
  const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
  const tops = new Set();
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.nodeValue.trim()) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    for (const rect of range.getClientRects()) if (rect.width > 0) tops.add(Math.round(rect.top));
  }
  return [th.innerText.trim(), tops.size];
}).filter(([text]) => text))"""
LONG_TEXT = "# 1 Maintenance\n\n" + "".join(
    f"## 1.{n} Part {n}\n\n" + f"Paragraph {n} describes the cleaning of part {n} in detail. " * 30 + "\n\n"
    for n in range(1, 4)
)


# Behind `slow` (make test-slow, which CI runs after make test): one of the longest tests of the default run,
# which must stay under 10 minutes on 2 cores; faster tests in the default run cover the same code paths.
@pytest.mark.slow
def test_the_chunk_table_keeps_its_headers_readable(
    scripted_app: Callable[..., Any], open_page: Callable[[str], Any]
) -> None:
    _, url = scripted_app({"maintenance.md": LONG_TEXT})
    page = open_page(url)  # 1280 px wide
    page.locator("#question textarea").wait_for()
    page.get_by_role("tab", name="Knowledge").click()
    page.locator("#documents").get_by_text("maintenance.md").filter(visible=True).first.click()
    page.locator("#doc-chunks").get_by_text("Paragraph 1", exact=False).first.wait_for(state="attached")
    # Each column at least as wide as its header, with long passages beside it: every header on one line.
    lines = page.locator("#doc-chunks thead").first.evaluate(HEADER_LINES)
    assert set(lines) == {"#", "Page", "Heading", "Read as", "Text"} and set(lines.values()) == {1}, lines
    fits = "(t) => t.getBoundingClientRect().right <= t.closest('#doc-chunks').getBoundingClientRect().right + 1"
    assert page.locator("#doc-chunks table").first.evaluate(fits)  # no text cut on the right


def test_a_document_is_deleted_from_its_own_view_once_confirmed(
    scripted_app: Callable[..., Any], open_page: Callable[[str], Any]
) -> None:
    _, url = scripted_app({"maintenance.md": LONG_TEXT, "kettle_notes.md": UPLOAD_TEXT})
    page = open_page(url)
    page.locator("#question textarea").wait_for()
    page.get_by_role("tab", name="Knowledge").click()
    table = page.locator("#documents")
    assert not page.locator("#delete-choice").is_visible()  # no separate picker to delete from
    table.get_by_text("maintenance.md").filter(visible=True).first.click()
    confirm = page.locator("#doc-delete-confirm")
    page.locator("#doc-delete").click()
    expect(confirm).to_be_visible()
    page.locator("#doc-delete-no").click()  # changed one's mind: nothing happens
    expect(confirm).to_be_hidden()
    page.locator("#doc-delete").click()
    page.locator("#doc-delete-yes").click()
    page.locator("#ingest-report").get_by_text("maintenance.md: deleted").wait_for()
    expect(table.get_by_text("maintenance.md").filter(visible=True)).to_have_count(0)
    table.get_by_text("kettle_notes.md").filter(visible=True).first.wait_for()  # the other one stays
    expect(page.locator("#doc-view")).to_be_hidden()


SCOPED_TEXT = """# Vega VR-3 router notes

The factory reset button of the Vega VR-3 router must be held for 12 seconds.
Its admin page lives at 10.0.0.77, and the default Wi-Fi name is "VEGA-ORCHARD".
"""


@pytest.mark.llm
@pytest.mark.slow
def test_upload_into_a_new_knowledge_base_and_ask_within_it(page: object, tmp_path: Path) -> None:
    upload = tmp_path / "vega_vr3.md"
    upload.write_text(SCOPED_TEXT, encoding="utf-8")

    page.get_by_role("tab", name="Knowledge").click()  # type: ignore[attr-defined]
    kb_box = page.locator("#kb-choice input")  # type: ignore[attr-defined]
    kb_box.fill("e2e routers")  # a new name: the dropdown takes custom values
    kb_box.press("Enter")
    choose_files(page, upload)
    page.locator("#add-files").click()  # type: ignore[attr-defined]
    page.locator("#ingest-report").get_by_text("vega_vr3.md: added to 'e2e routers'").wait_for(timeout=120_000)  # type: ignore[attr-defined]
    # The KB column shows the new base (visible only: the table keeps a hidden row for sizing its columns).
    page.locator("#documents").get_by_text("e2e routers").filter(visible=True).first.wait_for()  # type: ignore[attr-defined]

    page.get_by_role("tab", name="Chat").click()  # type: ignore[attr-defined]
    page.locator("#chat-scope input").click()  # type: ignore[attr-defined]
    page.get_by_role("option", name="e2e routers").click()  # type: ignore[attr-defined]  # listed after the upload
    page.locator("#chatbot").click()  # type: ignore[attr-defined]  # close the option list
    box = page.locator("#question textarea")  # type: ignore[attr-defined]
    chat = page.locator("#chatbot")  # type: ignore[attr-defined]

    # The demo knowledge base answers this one, but the chat is scoped away from it (no model call: quick).
    box.fill("What does error code E07 mean on the Lumen V2 Pro?")
    box.press("Enter")
    chat.get_by_text("could not find anything").first.wait_for(timeout=60_000)

    box.fill("How long must the factory reset button of the Vega VR-3 router be held?")
    box.press("Enter")
    _answer_done(page)
    shown = chat.inner_text()
    assert "12" in shown, shown
    assert chat.get_by_text(re.compile(r"\[\d\] vega_vr3\.md")).count() >= 1, f"no citation of the upload in:\n{shown}"
