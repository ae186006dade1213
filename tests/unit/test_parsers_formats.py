"""The parsers for real office files, made by the test with the libraries people's tools write them with
(python-pptx, openpyxl, python-docx), a hand-written PDF with a ruled table, HTML and CSV: the text, the table
rows as Markdown, the slide/sheet numbers and headings come out right, and a table is chunked between rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragapp.core.types import ParsedDocument, Section
from ragapp.ingest.chunking import chunk_document
from ragapp.ingest.parsing import parse_file
from ragapp.ingest.tables import blocks, markdown_table, split_table

ROWS = [["Model", "Battery (min)", "Price (EUR)"], ["Alpha", "90", "499"], ["Beta", "150", "699"]]
TABLE = "| Model | Battery (min) | Price (EUR) |\n| --- | --- | --- |\n| Alpha | 90 | 499 |\n| Beta | 150 | 699 |"


def test_markdown_tables_escape_pipes_and_drop_empty_rows_and_columns() -> None:
    assert markdown_table(ROWS) == TABLE
    assert markdown_table([["a", "", "b|c"], ["", "", ""], ["1\nx", "", None]]) == (
        "| a | b\\|c |\n| --- | --- |\n| 1 x |  |"
    )
    assert markdown_table([["just a framed paragraph"]]) == ""
    assert markdown_table([]) == ""


def test_a_long_table_is_cut_between_rows_with_its_header_in_every_piece() -> None:
    rows = [["Part", "Description"]] + [[f"P-{i:03}", f"replacement brush number {i}"] for i in range(60)]
    table = markdown_table(rows)
    pieces = split_table(table, 300)
    assert len(pieces) > 3
    for piece in pieces:
        lines = piece.splitlines()
        assert lines[:2] == ["| Part | Description |", "| --- | --- |"]
        assert all(line.startswith("| P-") and line.endswith(" |") for line in lines[2:])
        assert len(piece) <= 300
    assert sum(len(p.splitlines()) - 2 for p in pieces) == 60  # every row once


def test_chunking_keeps_rows_whole_and_flags_table_chunks() -> None:
    rows = [["Code", "Meaning"]] + [[f"E{i:02}", f"error number {i} means the filter is blocked"] for i in range(40)]
    text = "Error codes are shown on the display.\n\n" + markdown_table(rows) + "\n\nCall support if it persists."
    doc = ParsedDocument("codes.md", "md", (Section(text, heading="Errors"),))
    chunks = chunk_document(doc, "d1", 400, 60)
    tables = [c for c in chunks if c.has_table]
    assert len(tables) > 2 and all(c.text.startswith("| Code | Meaning |") for c in tables)
    rows_seen = [line for c in tables for line in c.text.splitlines()[2:]]
    assert len(rows_seen) == 40 and all(line.endswith("blocked |") for line in rows_seen)
    assert not chunks[0].has_table and "display" in chunks[0].text
    assert "persists" in chunks[-1].text and not chunks[-1].has_table
    assert [kind for kind, _ in blocks("a\n| x |\n| y |\nb")] == [False, True, False]


def test_a_short_section_keeps_its_table_and_words_together() -> None:
    doc = ParsedDocument("p.md", "md", (Section("Prices:\n" + TABLE),))
    (chunk,) = chunk_document(doc, "d1", 400, 60)
    assert chunk.has_table and chunk.text.startswith("Prices:\n| Model")


def test_pdf_ruled_table_becomes_a_markdown_table_in_its_place(tmp_path: Path, make_documents: Any) -> None:
    path = make_documents.table_pdf(tmp_path / "prices.pdf", "Price list 2027", ROWS, note="Prices include VAT.")
    parsed = parse_file(path)
    (section,) = parsed.sections
    assert section.page == 1 and section.has_table
    assert section.text == f"Price list 2027\n\n{TABLE}\n\nPrices include VAT."
    assert parsed.report.tables == 1 and parsed.report.pages_with_text == 1


def test_pdf_tables_can_be_turned_off(tmp_path: Path, make_documents: Any) -> None:
    from ragapp.ingest.parse_context import ParseOptions

    path = make_documents.table_pdf(tmp_path / "prices.pdf", "Price list 2027", ROWS)
    (section,) = parse_file(path, options=ParseOptions(pdf_tables=False)).sections
    assert not section.has_table and "Alpha" in section.text and "|" not in section.text


def test_pptx_one_section_per_slide_with_tables_and_speaker_notes(tmp_path: Path) -> None:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Battery life"
    slide.placeholders[1].text = "The Alpha runs 90 minutes on eco mode."
    slide.notes_slide.notes_text_frame.text = "Mention the fast charger."
    second = deck.slides.add_slide(deck.slide_layouts[5])
    second.shapes.title.text = "Prices"
    table = second.shapes.add_table(3, 3, Inches(1), Inches(2), Inches(6), Inches(1.5)).table
    for r, row in enumerate(ROWS):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    deck.slides.add_slide(deck.slide_layouts[6])  # a blank slide
    path = tmp_path / "deck.pptx"
    deck.save(str(path))

    parsed = parse_file(path)
    assert parsed.file_type == "pptx" and parsed.pages == 3
    first, prices = parsed.sections
    assert (first.page, first.heading) == (1, "Battery life")
    assert first.text == "The Alpha runs 90 minutes on eco mode.\nSpeaker notes: Mention the fast charger."
    assert (prices.page, prices.heading, prices.has_table) == (2, "Prices", True)
    assert prices.text == TABLE
    assert parsed.report.empty_pages == (3,) and parsed.report.tables == 1


def test_xlsx_one_table_per_sheet_the_header_in_every_chunk(tmp_path: Path) -> None:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "Spare parts"
    sheet.append(["Part", "Name", "Price"])
    for i in range(80):
        sheet.append([f"P-{i:03}", f"side brush model {i}", 9.5 + i])
    book.create_sheet("Empty")
    notes = book.create_sheet("Dealers")
    notes.append(["City", "Dealer"])
    notes.append(["杭州", "西湖机器人店"])
    path = tmp_path / "parts.xlsx"
    book.save(str(path))

    parsed = parse_file(path)
    parts, dealers = parsed.sections
    assert (parts.heading, parts.page, parts.has_table) == ("Spare parts", 1, True)
    assert parts.text.splitlines()[2] == "| P-000 | side brush model 0 | 9.5 |"
    assert (dealers.heading, dealers.page) == ("Dealers", 3)
    assert "| 杭州 | 西湖机器人店 |" in dealers.text
    assert parsed.report.empty_pages == (2,) and parsed.pages == 3
    chunks = chunk_document(parsed, "d1", 400, 60)
    sheet_chunks = [c for c in chunks if c.heading == "Spare parts"]
    assert len(sheet_chunks) > 3 and all(c.text.startswith("| Part | Name | Price |") for c in sheet_chunks)


@pytest.mark.parametrize("delimiter", [",", ";", "\t"])
def test_csv_with_any_common_delimiter(tmp_path: Path, delimiter: str) -> None:
    path = tmp_path / "dealers.csv"
    lines = ["城市,经销商,电话", "杭州,西湖机器人店,0571-1234", '上海,"浦东, 旗舰店",021-5678']
    if delimiter != ",":
        lines = ["城市;经销商;电话", "杭州;西湖机器人店;0571-1234", "上海;浦东, 旗舰店;021-5678"]
        lines = [line.replace(";", delimiter) for line in lines]
    path.write_text("\n".join(lines) + "\n", "utf-8")
    (section,) = parse_file(path).sections
    assert section.has_table and section.heading == "dealers"
    assert section.text.splitlines() == [
        "| 城市 | 经销商 | 电话 |",
        "| --- | --- | --- |",
        "| 杭州 | 西湖机器人店 | 0571-1234 |",
        "| 上海 | 浦东, 旗舰店 | 021-5678 |",
    ]


def test_html_tables_become_markdown_tables(tmp_path: Path) -> None:
    path = tmp_path / "prices.html"
    cells = "".join(f"<tr>{''.join(f'<td>{c}</td>' for c in row)}</tr>" for row in ROWS[1:])
    head = "".join(f"<th>{c}</th>" for c in ROWS[0])
    path.write_text(f"<h1>Prices</h1><p>All prices in euros.</p><table><tr>{head}</tr>{cells}</table>", "utf-8")
    parsed = parse_file(path)
    (section,) = parsed.sections
    assert section.heading == "Prices" and section.has_table
    assert section.text == f"All prices in euros.\n{TABLE}"
    assert parsed.report.tables == 1


def test_epub_chapters_in_spine_order(tmp_path: Path) -> None:
    import zipfile

    path = tmp_path / "manual.epub"
    chapter = "<html><body><h1>{title}</h1><p>{text}</p>{extra}</body></html>"
    with zipfile.ZipFile(path, "w") as book:
        book.writestr("mimetype", "application/epub+zip")
        book.writestr(
            "META-INF/container.xml",
            '<container><rootfiles><rootfile full-path="OEBPS/content.opf"/></rootfiles></container>',
        )
        book.writestr(
            "OEBPS/content.opf",
            '<package><manifest><item id="b" href="two.xhtml" media-type="application/xhtml+xml"/>'
            '<item id="a" href="one.xhtml" media-type="application/xhtml+xml"/></manifest>'
            '<spine><itemref idref="a"/><itemref idref="b"/></spine></package>',
        )
        book.writestr("OEBPS/one.xhtml", chapter.format(title="Charging", text="Charge for two hours.", extra=""))
        rows = "".join(f"<tr>{''.join(f'<td>{c}</td>' for c in row)}</tr>" for row in ROWS)
        book.writestr(
            "OEBPS/two.xhtml", chapter.format(title="Prices", text="In euros.", extra=f"<table>{rows}</table>")
        )
    parsed = parse_file(path)
    first, second = parsed.sections
    assert (first.page, first.heading, first.text) == (1, "Charging", "Charge for two hours.")
    assert (second.page, second.heading, second.has_table) == (2, "Prices", True)
    assert second.text == f"In euros.\n{TABLE}" and parsed.report.tables == 1 and parsed.pages == 2


def test_a_table_ruled_only_in_part_keeps_every_word_of_its_rows(tmp_path: Path, make_documents: Any) -> None:
    rows = [["Package", "Popcon", "Size"], ["apt-utils", "V:351", "1030"], ["synaptic", "V:42", "7686"]]
    path = make_documents.table_pdf(tmp_path / "tools.pdf", "Package tools", rows, "Do not erase files.", {1, 2})
    text = "\n".join(s.text for s in parse_file(path).sections)
    assert "apt-utils" in text and "synaptic" in text  # the unruled column is not lost with the ruled ones
    assert "Do not erase files." in text  # words apart, as the page sets them
