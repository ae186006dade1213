"""Word, PowerPoint and CSV (Excel: ``xlsx``). Tables come out as Markdown tables (``ragapp.ingest.tables``), which the
chunker cuts only between rows, repeating the header."""

from __future__ import annotations

import csv
import io
import itertools
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragapp.core.errors import IngestError
from ragapp.core.types import ParsedDocument, ParseReport, Said, Section
from ragapp.ingest.parse_context import options
from ragapp.ingest.parsers.base import PARSERS, REFERENCES, check_markup, check_zip, decode_text
from ragapp.ingest.parsers.docx_figures import StyleNames, docx_figures
from ragapp.ingest.parsers.pptx_figures import pptx_figures
from ragapp.ingest.tables import markdown_table

MAX_SHEET_ROWS = 100_000  # a sheet longer than this is read up to here, and says so
MAX_SHEET_COLUMNS = 200
# The delimiter is sniffed on the first lines, each cut short: csv.Sniffer's quote search backtracks, and one
# 42 KB line of ',"' took it 7 s.
SNIFF_LINES, SNIFF_LINE_CHARS = 20, 1_000


@PARSERS.register(".docx")
def parse_docx(path: Path, name: str) -> ParsedDocument:
    """Paragraphs grouped under their Word headings; tables become Markdown tables in place."""
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    check_zip(path, name)
    check_markup(path, name, "word/")
    document = docx.Document(str(path))
    sections: list[Section] = []
    heading: str | None = None
    buf: list[str] = []
    tables = 0
    in_table = False
    style_of = StyleNames()  # each style looked up once (python-docx scans them all for every paragraph)

    def flush() -> None:
        nonlocal in_table
        if buf:
            sections.append(Section(text="\n".join(buf), heading=heading, has_table=in_table))
            buf.clear()
        in_table = False

    body: list[Paragraph] = []  # the paragraphs, each under its heading, for the figures in them
    under: list[str | None] = []
    for block in document.iter_inner_content():
        if isinstance(block, Paragraph):
            style = style_of(block)
            text = block.text.strip()
            if style.lower().startswith(("heading", "title")) and text:
                flush()
                heading = text
            elif text:
                buf.append(text)
            body.append(block)
            under.append(heading)
        elif isinstance(block, Table):
            markdown = markdown_table(_docx_rows(block))
            if markdown:
                buf.append(markdown)
                tables += 1
                in_table = True
    flush()
    quality = ParseReport(tables=tables)
    if options().figures:
        found = docx_figures(body, under, options())
        sections += found.sections
        quality = found.noted(quality)
    return ParsedDocument(name=name, file_type="docx", sections=tuple(sections), report=quality)


def _docx_rows(table: Any) -> list[list[str]]:
    """A Word table's rows; a merged cell is read once per row, not once per grid column it spans."""
    rows = []
    for row in table.rows:
        seen: set[int] = set()
        cells = []
        for cell in row.cells:
            if id(cell._tc) in seen:
                continue
            seen.add(id(cell._tc))
            cells.append(cell.text.strip())
        rows.append(cells)
    return rows


@PARSERS.register(".pptx")
def parse_pptx(path: Path, name: str) -> ParsedDocument:
    """One section per slide (its page is the slide number, its heading the slide's title): the text of every
    shape, tables as Markdown, then the speaker notes; and a section per picture (``pptx_figures``)."""
    from pptx import Presentation

    check_zip(path, name)
    check_markup(path, name, "ppt/")
    deck = Presentation(str(path))
    sections: list[Section] = []
    tables = 0
    empty: list[int] = []
    for number, slide in enumerate(deck.slides, start=1):
        title_shape = slide.shapes.title
        title = title_shape.text_frame.text.strip() if title_shape is not None and title_shape.has_text_frame else ""
        parts: list[str] = []
        has_table = False
        for shape in slide.shapes:
            if title_shape is not None and shape.shape_id == title_shape.shape_id:  # proxies: compare ids
                continue
            if getattr(shape, "has_table", False) and shape.has_table:
                markdown = markdown_table([[c.text for c in row.cells] for row in shape.table.rows])
                if markdown:
                    parts.append(markdown)
                    tables += 1
                    has_table = True
            elif shape.has_text_frame and shape.text_frame.text.strip():
                parts.append(shape.text_frame.text.strip())
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame.text.strip() if slide.notes_slide.notes_text_frame else ""
            if notes:
                parts.append(f"Speaker notes: {notes}")
        text = "\n".join(parts) or title
        if not text:
            empty.append(number)
            continue
        sections.append(Section(text=text, page=number, heading=title or f"Slide {number}", has_table=has_table))
    report = ParseReport(pages_with_text=len(sections), empty_pages=tuple(empty), tables=tables)
    if options().figures:
        figures, decoration = pptx_figures(deck, options())
        sections += figures
        pictured = {f.page for f in figures}  # a slide holding only a picture is not empty
        report = replace(report, figures=len(figures), empty_pages=tuple(n for n in empty if n not in pictured))
        if decoration:
            report = report.leaving_out(Said("left_out.decoration", {"count": decoration}))
    return ParsedDocument(name=name, file_type="pptx", sections=tuple(sections), pages=len(deck.slides), report=report)


@PARSERS.register(".csv")
def parse_csv(path: Path, name: str) -> ParsedDocument:
    """The file as one Markdown table (first row: the header), the delimiter sniffed (comma, semicolon, tab)."""
    text = decode_text(path.read_bytes(), name)
    sample = "".join(line[:SNIFF_LINE_CHARS] for line in itertools.islice(io.StringIO(text), SNIFF_LINES))
    try:
        dialect: Any = csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    try:
        read = list(itertools.islice(csv.reader(io.StringIO(text), dialect), MAX_SHEET_ROWS + 1))
    except csv.Error as exc:
        raise IngestError(said=Said("ingest.csv_unreadable", {"name": name, "error": str(exc)})) from None
    rows = [row[:MAX_SHEET_COLUMNS] for row in read[:MAX_SHEET_ROWS]]
    left_out = []  # what the limits cut, said in the document's view
    if len(read) > MAX_SHEET_ROWS:
        left_out.append(Said("left_out.rows_after", {"n": MAX_SHEET_ROWS}))
    if any(len(row) > MAX_SHEET_COLUMNS for row in read):
        left_out.append(Said("left_out.columns_after", {"n": MAX_SHEET_COLUMNS}))
    markdown = markdown_table(rows)
    sections = (Section(text=markdown, heading=Path(name).stem, has_table=True),) if markdown else ()
    report = ParseReport(tables=len(sections)).leaving_out(*left_out)
    return ParsedDocument(name=name, file_type="csv", sections=sections, report=report)


# -- reference texts (ragapp.ingest.coverage): every paragraph and cell, read by the plainest route ---------------


@REFERENCES.register(".docx")
def docx_reference(path: Path, report: ParseReport) -> str:
    import docx

    document = docx.Document(str(path))
    lines = [p.text for p in document.paragraphs]
    for table in document.tables:
        lines += [cell.text for row in table.rows for cell in row.cells]
    return "\n".join(lines)


@REFERENCES.register(".pptx")
def pptx_reference(path: Path, report: ParseReport) -> str:
    from pptx import Presentation

    lines: list[str] = []
    for slide in Presentation(str(path)).slides:
        for shape in slide.shapes:
            if getattr(shape, "has_table", False) and shape.has_table:
                lines += [cell.text for row in shape.table.rows for cell in row.cells]
            elif shape.has_text_frame:
                lines.append(shape.text_frame.text)
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame:
            lines.append(slide.notes_slide.notes_text_frame.text)
    return "\n".join(lines)
