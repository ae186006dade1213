"""Looking inside documents, through the library facet over real stores: a cited PDF page drawn with its
passage highlighted (text layer, and OCR'd scans), the section around a passage for other formats, how a document
read, re-indexing in place, and cancelling an upload midway with the three stores still in agreement."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.core.access import Actor
from ragapp.core.errors import AccessDenied, IngestError
from ragapp.core.types import IngestProgress

pytestmark = pytest.mark.integration

ROWS = [["Model", "Battery (min)", "Price (EUR)"], ["Alpha", "90", "499"], ["Beta", "150", "699"]]
ENGLISH = ["The Alpha robot battery lasts 90 minutes.", "Charge it for two hours before first use."]


def _highlighted_pixels(png: bytes) -> int:
    """How many pixels carry the highlight's yellow (the page itself is black on white)."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    return sum(1 for r, g, b in image.getdata() if r > 200 and g > 180 and b < 140)


def _ingest(rig: Any, path: Path, kb: str = "default") -> Any:
    (result,) = rig.engine.library.ingest([(path, path.name)], kb=kb)
    assert result.status == "added", result.message
    return result


def test_a_cited_pdf_page_is_drawn_with_the_passage_marked(
    make_engine: Callable[..., Any], make_documents: Any, tmp_path: Path
) -> None:
    rig = make_engine()
    result = _ingest(rig, make_documents.table_pdf(tmp_path / "prices.pdf", "Price list 2027", ROWS, "VAT included."))
    (chunk,) = rig.engine.library.document_view(result.doc_id).chunks
    view = rig.engine.library.page_view(chunk.chunk_id, ["Beta"])
    assert view.png is not None and view.png.startswith(b"\x89PNG") and view.highlighted == 1
    assert view.title == "prices.pdf · p. 1"
    whole = rig.engine.library.page_view(chunk.chunk_id)  # no sentence given: the whole chunk, cell by cell
    assert whole.highlighted > 5 and _highlighted_pixels(whole.png) > _highlighted_pixels(view.png) > 0


def test_an_ocr_page_is_drawn_with_the_lines_it_was_read_from(
    make_engine: Callable[..., Any], make_documents: Any, tmp_path: Path
) -> None:
    rig = make_engine()
    result = _ingest(rig, make_documents.scanned_pdf(tmp_path / "scan.pdf", [ENGLISH]))
    (chunk,) = rig.engine.library.document_view(result.doc_id).chunks
    view = rig.engine.library.page_view(chunk.chunk_id, [ENGLISH[0]])
    assert view.png is not None and view.highlighted == 1 and _highlighted_pixels(view.png) > 500
    assert rig.engine.library.page_view(chunk.chunk_id).highlighted == 2


def test_other_formats_show_the_section_and_the_document_view_says_how_it_read(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    rig = make_engine()
    path = tmp_path / "guide.md"
    path.write_text("# Setup\n\n" + " ".join(f"Step {i} is to turn dial {i} clockwise." for i in range(40)), "utf-8")
    result = _ingest(rig, path)
    view = rig.engine.library.document_view(result.doc_id)
    assert view.file_kept and view.report is not None and len(view.chunks) > 3
    assert all(c.heading == "Setup" for c in view.chunks)
    page = rig.engine.library.page_view(view.chunks[2].chunk_id)
    assert page.png is None and view.chunks[2] in page.section and len(page.section) > 1


def test_a_reader_of_another_base_sees_no_page(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    from ragapp.accounts.model import KbRule
    from ragapp.accounts.store import UserStore

    users = tmp_path / "users.json"
    store = UserStore(users, 4)
    store.add("rita", "reader password", "reader")
    store.set_kb_rule("finance", KbRule(readers=("admin",)))
    rig = make_engine(auth={"enabled": True, "users_file": users, "bcrypt_rounds": 4})
    path = tmp_path / "budget.md"
    path.write_text("# Budget\n\nThe travel budget is 48,000 euros.\n", "utf-8")
    result = _ingest(rig, path, kb="finance")
    chunk_id = rig.engine.library.document_view(result.doc_id).chunks[0].chunk_id
    rita = Actor("rita", "reader")
    with pytest.raises(AccessDenied):
        rig.engine.library.page_view(chunk_id, actor=rita)
    with pytest.raises(AccessDenied):
        rig.engine.library.document_view(result.doc_id, actor=rita)


def test_reindexing_keeps_the_id_and_a_deleted_document_has_no_page(
    make_engine: Callable[..., Any], make_documents: Any, tmp_path: Path, store_snapshot: Callable[[Any], Any]
) -> None:
    rig = make_engine()
    result = _ingest(rig, make_documents.table_pdf(tmp_path / "prices.pdf", "Price list 2027", ROWS))
    before = rig.engine.library.document_view(result.doc_id).chunks
    again = rig.engine.library.reindex(result.doc_id)
    assert again.status == "replaced" and again.doc_id == result.doc_id
    assert rig.engine.library.document_view(result.doc_id).chunks == before
    assert store_snapshot(rig).agree()
    rig.engine.library.delete(result.doc_id)
    with pytest.raises(IngestError, match="no longer"):
        rig.engine.library.page_view(before[0].chunk_id)
    assert not any((rig.state_dir / "files").iterdir())  # the kept file went with it


def test_cancelling_midway_keeps_what_was_done_and_nothing_of_the_rest(
    make_engine: Callable[..., Any], make_documents: Any, tmp_path: Path, store_snapshot: Callable[[Any], Any]
) -> None:
    rig = make_engine()
    first = tmp_path / "first.md"
    first.write_text("# First\n\nThe first file is about kettles.\n", "utf-8")
    scan = make_documents.scanned_pdf(tmp_path / "scan.pdf", [ENGLISH, ENGLISH[::-1], ENGLISH])
    last = tmp_path / "last.md"
    last.write_text("# Last\n\nThe last file is about toasters.\n", "utf-8")
    cancel = threading.Event()

    def progress(update: IngestProgress) -> None:
        if update.phase == "ocr" and "OCR page 2/3" in update.message:
            cancel.set()  # the user presses Cancel while the scan is being read

    results = rig.engine.library.ingest(
        [(first, first.name), (scan, scan.name), (last, last.name)], progress, cancel=cancel
    )
    assert [r.status for r in results] == ["added", "cancelled", "cancelled"]
    assert "nothing of it was added" in results[1].message
    snap = store_snapshot(rig)
    assert snap.documents == ("first.md",) and snap.agree()
    assert [p.name for p in (rig.state_dir / "files").iterdir()] == [f"{results[0].doc_id}.md"]


def test_every_upload_says_how_much_of_its_text_was_indexed(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    rig = make_engine()
    page = tmp_path / "how.html"
    page.write_text(f"<h1>Usage</h1>{ENGLISH[0]}<pre>charge(2);</pre>{ENGLISH[1]}<nav>Home · Buy</nav>", "utf-8")
    result = _ingest(rig, page)
    assert "indexed" not in result.message  # all of it: nothing to warn about
    report = rig.engine.library.document_view(result.doc_id).report
    assert report is not None and report.coverage == 1.0 and report.left_out == ("navigation (1 block)",)


def test_an_upload_that_loses_text_names_what_was_not_read(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    """A parser (registered as an add-on would be) that keeps only the first line of a file: the upload is
    stored, and its report and message say how much was not read, and what."""
    from ragapp.core.types import ParsedDocument, ParseReport, Section
    from ragapp.ingest.parsers.base import PARSERS, REFERENCES

    def first_line_only(path: Path, name: str) -> ParsedDocument:
        return ParsedDocument(name, "lossy", (Section(path.read_text("utf-8").splitlines()[0]),))

    def reference(path: Path, report: ParseReport) -> str:
        return path.read_text("utf-8")

    PARSERS.register(".lossy")(first_line_only)
    REFERENCES.register(".lossy")(reference)
    try:
        rig = make_engine()
        path = tmp_path / "notes.lossy"
        path.write_text("\n".join([*ENGLISH, "The dock must stand on a flat floor away from stairs and doors."]))
        (result,) = rig.engine.library.ingest([(path, path.name)])
        assert result.status == "added", result.message
        assert "⚠️ only " in result.message and "of its text was indexed; not read: “Charge it for two" in result.message
        report = rig.engine.library.document_view(result.doc_id).report
        assert report is not None and report.coverage is not None and report.coverage < 0.5
        assert report.unread_count == 2
    finally:
        PARSERS.unregister(".lossy")
        REFERENCES.unregister(".lossy")
