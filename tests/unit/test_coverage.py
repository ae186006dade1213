"""How much of a file's own text reached the chunks: measured against the file's reference text, the passages
that did not named, and an upload under 95% says so."""

from __future__ import annotations

from pathlib import Path

from ragapp.core.types import Chunk, ParsedDocument, ParseReport, Section
from ragapp.ingest.coverage import measure, with_coverage

KEPT = "The deflate function compresses as much data as the output buffer can hold before it returns."
LOST = "We often get questions about how the deflate and inflate functions should be used in practice."


def test_spacing_punctuation_and_table_pipes_do_not_count() -> None:
    result = measure("Model: Alpha — 90 min\nfoo.orig.tar.gz", ["| Model | Alpha | 90 min |", "foo .orig .tar .gz"])
    assert result is not None and result.share == 1.0 and result.unread_count == 0


def test_a_lost_paragraph_lowers_the_share_and_is_named() -> None:
    result = measure(f"{KEPT}\n{LOST}", [KEPT])
    assert result is not None and 0.4 < result.share < 0.6
    assert result.unread == (LOST[:79] + "…",) and result.unread_count == 1
    assert measure("", [KEPT]) is None  # nothing to measure: no figure, not 0%


def test_a_parser_that_drops_the_prose_of_a_real_page_is_caught(tmp_path: Path) -> None:
    page = tmp_path / "how.html"
    page.write_text(f"<h1>Usage</h1>{LOST}<pre>deflateInit(&amp;strm);</pre><p>{KEPT}</p>", "utf-8")
    # What a parser keeping only <p> and <pre> (the old one) made of it:
    parsed = ParsedDocument("how.html", "html", (Section(f"deflateInit(&strm);\n{KEPT}", heading="Usage"),))
    chunks = [Chunk("d-0", "d", 0, parsed.sections[0].text, "how.html", heading="Usage")]
    report = with_coverage(page, parsed, chunks, ())
    assert report.coverage is not None and report.coverage < 0.95
    warning = report.coverage_warning()
    assert warning.startswith("⚠️ only ") and "of its text was indexed; not read: “We often get questions" in warning


def test_the_report_keeps_its_coverage_and_is_silent_above_the_line() -> None:
    report = ParseReport(coverage=0.998)
    assert report.coverage_warning() == "" and ParseReport.from_dict(report.to_dict()) == report
    low = ParseReport(coverage=0.5, unread=("a", "b"), unread_count=5)
    assert low.coverage_warning() == "⚠️ only 50% of its text was indexed; not read: “a”, “b” and 3 more passages"
    assert ParseReport.from_dict(low.to_dict()) == low
    assert ParseReport.from_dict({"coverage": "x", "unread": 3}).coverage is None  # an odd row still opens


def test_office_files_are_measured_against_every_paragraph_and_cell(tmp_path: Path) -> None:
    import docx
    from openpyxl import Workbook
    from pptx import Presentation

    from ragapp.ingest.boilerplate import split_boilerplate
    from ragapp.ingest.chunking import chunk_document
    from ragapp.ingest.parsing import parse_file

    document = docx.Document()
    document.add_heading("Care", 1)
    document.add_paragraph(KEPT)
    table = document.add_table(rows=2, cols=2)
    for r, row in enumerate([["Part", "Interval"], ["HEPA filter", "90 days"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.save(str(tmp_path / "care.docx"))
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Battery"
    slide.placeholders[1].text = LOST
    slide.notes_slide.notes_text_frame.text = "Mention the fast charger."
    deck.save(str(tmp_path / "deck.pptx"))
    book = Workbook()
    book.active.append(["Part", "Price"])
    book.active.append(["side brush", 9.5])
    book.save(str(tmp_path / "parts.xlsx"))

    for name in ("care.docx", "deck.pptx", "parts.xlsx"):
        parsed = parse_file(tmp_path / name)
        split = split_boilerplate(parsed, "d")
        report = with_coverage(tmp_path / name, parsed, chunk_document(split.doc, "d", 400, 60), split.skipped)
        assert report.coverage == 1.0, (name, report.unread)
