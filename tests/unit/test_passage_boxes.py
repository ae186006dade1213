"""A cited passage found on its PDF page though the chunk's text differs from the page's: a word broken at a line
end and joined, ligatures, a quote whose line breaks became spaces, a passage that runs over a page break
(``ragapp.ingest.passage_boxes``, drawn by ``ragapp.ingest.page_images``); real PDFs drawn by PDFium."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pypdfium2 as pdfium

from ragapp.ingest.page_images import render_pdf_page
from ragapp.ingest.parsing import parse_file
from ragapp.ingest.passage_boxes import locate, page_text, skeleton


def _page(path: Path, number: int) -> Any:
    document = pdfium.PdfDocument(str(path))
    textpage = document[number - 1].get_textpage()
    try:
        return page_text(textpage)
    finally:
        textpage.close()
        document.close()


def _lines_marked(path: Path, number: int, passage: str) -> list[int]:
    """Which lines of the page (0 = the first; the pages are set at 13 pt a line from y 770) the boxes are on."""
    rects = locate(passage, _page(path, number)).rects
    return sorted({round((770 - (y0 + y1) / 2 + 6) / 13) for _x0, y0, _x1, y1 in rects})


def test_a_word_broken_at_a_line_end_is_found_as_the_chunk_joined_it(make_documents: Any, tmp_path: Path) -> None:
    lines = ["Charging is automatic.", "The battery manage-", "ment system stops charging at 45 degrees.", "Unrelated."]
    pdf = make_documents.text_pdf(tmp_path / "manual.pdf", lines)
    (section,) = parse_file(pdf).sections
    assert "The battery management system stops" in section.text  # the parser joined it
    sentence = section.text[section.text.index("The battery") : section.text.index("degrees.") + 8]
    assert render_pdf_page(pdf, 1, [sentence])[1] == 2  # its two lines, not the others
    assert _lines_marked(pdf, 1, sentence) == [1, 2]


def test_ligatures_and_line_breaks_do_not_hide_a_quote(make_documents: Any, tmp_path: Path) -> None:
    lines = ["The ﬁlter is ﬁne and ﬂat, and the Alpha robot battery lasts 90", "minutes on a full charge.", "Other."]
    pdf = make_documents.text_pdf(tmp_path / "manual.pdf", lines)
    (section,) = parse_file(pdf).sections
    assert "ﬁlter" in section.text  # pypdf keeps the ligature; PDFium reads "fi"
    assert render_pdf_page(pdf, 1, ["The ﬁlter is ﬁne and ﬂat"])[1] == 1
    assert render_pdf_page(pdf, 1, ["The filter is fine and flat"])[1] == 1
    quote = "the Alpha robot battery lasts 90 minutes on a full charge."  # as a quote shows it: one line
    assert render_pdf_page(pdf, 1, [quote])[1] == 2
    assert _lines_marked(pdf, 1, quote) == [0, 1]


def test_a_passage_over_a_page_break_is_marked_on_both_pages_and_nothing_else_is(
    make_documents: Any, tmp_path: Path
) -> None:
    pages = [
        ["Chapter 3. Warranty", "Keep the receipt of the purchase.", "The warranty covers the battery and the",
         "charging station for"],
        ["two years from the date of purchase, in every country.", "Accidental damage is not covered."],
    ]  # fmt: skip
    pdf = make_documents.text_pages_pdf(tmp_path / "manual.pdf", pages)
    passage = (
        "The warranty covers the battery and the charging station for two years from the date of purchase, "
        "in every country."
    )
    first, second = locate(passage, _page(pdf, 1)), locate(passage, _page(pdf, 2))
    assert first.found and second.found and 0.3 < first.share < 0.7 and 0.3 < second.share < 0.7
    assert render_pdf_page(pdf, 1, [passage])[1] == 2 and _lines_marked(pdf, 1, passage) == [2, 3]
    assert render_pdf_page(pdf, 2, [passage])[1] == 1 and _lines_marked(pdf, 2, passage) == [0]
    # A sentence from elsewhere is on neither page, though it shares words with both.
    elsewhere = "The warranty of the charging station ends after one year in every country."
    assert render_pdf_page(pdf, 1, [elsewhere])[1] == 0 and render_pdf_page(pdf, 2, [elsewhere])[1] == 0


def test_the_skeleton_keeps_letters_and_digits_of_both_scripts() -> None:
    assert skeleton("The ﬁlter, man-\nagement: 90 min.")[0] == "thefiltermanagement90min"
    assert skeleton("电池续航 90 分钟。")[0] == "电池续航90分钟"
