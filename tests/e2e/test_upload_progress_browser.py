"""An upload's progress as a user meets it in a real browser: each file's stage and counts on the page while the
upload runs, before its report; in Chinese with no English in it; Stop still stops it.

No race on timing: the test holds the knowledge store's write lock, as another upload writing would, so the
upload waits at its first file's "Saving" step until the test lets go; what the page shows meanwhile is the
progress of an upload that has not ended."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.test_one_language_browser import other_language
from tests.e2e.upload import choose_files

pytestmark = [pytest.mark.e2e]

NOTES = "# Kettle notes\n\nThe Orion kettle's limescale filter is rinsed every 14 days.\n"


def _manual(make_documents: Any, folder: Path, pages: int = 8) -> Path:
    """A real PDF of ``pages`` text pages (each a page of a manual, set in a standard font)."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for n in range(1, pages + 1):
        lines = [f"Chapter {n}: care of the Orion kettle, part {n}."] + [
            f"Step {k} of chapter {n}: rinse the filter under cold water for {k + n} seconds." for k in range(1, 30)
        ]
        page = make_documents.text_pdf(folder / f"page{n}.pdf", lines)
        writer.add_page(PdfReader(page).pages[0])
    path = folder / "orion_manual.pdf"
    with path.open("wb") as out:
        writer.write(out)
    return path


# Starts its own app and reads a PDF of several pages: behind `slow`.
@pytest.mark.slow
def test_an_upload_shows_each_files_stage_before_its_report_in_both_languages_and_stops(
    scripted_app: Callable[..., Any],
    open_page: Callable[[str], Any],
    make_documents: Any,
    tmp_path: Path,
    artifacts: Path,
) -> None:
    rig, url = scripted_app()
    page = open_page(url)
    page.locator("#question textarea").wait_for()
    manual, notes = _manual(make_documents, tmp_path), tmp_path / "kettle_notes.md"
    notes.write_text(NOTES, "utf-8")
    page.get_by_role("tab", name="Knowledge").click()
    choose_files(page, manual, notes)

    board, report, stop = page.locator("#ingest-progress"), page.locator("#ingest-report"), page.locator("#stop-upload")
    lock = rig.engine._store.write_lock  # held: as another upload writing, this one waits to store its first file
    lock.acquire()
    try:
        page.locator("#add-files").click()
        expect(board).to_contain_text("Adding 2 files to “default”")
        # it reads the pages, looks for tables, embeds the chunks (shown as they go), then waits to store them
        expect(board).to_contain_text(re.compile(r"orion_manual\.pdf — 💾 Saving \d+ chunks"), timeout=120_000)
        expect(board).to_contain_text("kettle_notes.md — waiting")
        assert "orion_manual.pdf" not in report.inner_text()  # the upload has not ended: no report yet
        page.screenshot(path=str(artifacts / "upload-progress.png"))

        page.locator("#language-switch").get_by_role("link", name="中文").click()
        expect(board).to_contain_text("正在将 2 个文件加入“default”")
        expect(board).to_contain_text("正在保存")
        for _ in range(50):  # the board is redrawn as the upload goes: read it once a redraw has settled
            if not other_language(board.inner_text(), "zh"):
                break
            page.wait_for_timeout(200)
        assert not other_language(board.inner_text(), "zh"), board.inner_text()
        page.locator("#language-switch").get_by_role("link", name="English").click()

        stop.click()  # Stop still works: the file being stored ends, the next is not read
        expect(board).to_contain_text("Stopping after the current step")
    finally:
        lock.release()
    report.get_by_text("orion_manual.pdf: added").wait_for(timeout=60_000)
    expect(report).to_contain_text("kettle_notes.md: not added: the upload was stopped")
    expect(board).not_to_contain_text("Adding")  # the board gave way to the report
    expect(stop).to_be_disabled()
    page.locator("#documents").get_by_text("orion_manual.pdf").filter(visible=True).first.wait_for()
