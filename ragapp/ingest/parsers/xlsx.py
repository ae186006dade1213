"""Excel workbooks, read within budgets: a 1 MB file can hold 20 million cells (100,000 rows × 200 numbers took
216 s and 1.8 GB as one 80-million-character section), and a 2.6 MB one a shared-string table that unpacks
to hundreds of megabytes. Each sheet is read until a budget is spent, the rest is named in the report's
``left_out``, and a sheet's table is cut into sections of bounded size, the header row in each.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ragapp.core.types import ParsedDocument, ParseReport, Said, Section
from ragapp.ingest.parsers.base import PARSERS, REFERENCES, check_zip
from ragapp.ingest.parsers.office import MAX_SHEET_COLUMNS, MAX_SHEET_ROWS
from ragapp.ingest.tables import MAX_CELL_CHARS, markdown_table, split_table

# What one sheet, and the whole book, may give: far above a normal spreadsheet (50,000 rows of 20 cells), and
# below what ingest refuses anyway (20,000 chunks of 400 characters); each million cells costs openpyxl ~10 s.
SHEET_MAX_CELLS = 1_000_000
SHEET_MAX_CHARS = 4_000_000
BOOK_MAX_CELLS = 2_000_000
BOOK_MAX_CHARS = 6_000_000
SECTION_CHARS = 100_000  # a sheet's table is cut into sections about this long, each starting with the header
# The shared-string table is read up to here: cells that point past it read as empty, and the report says so.
SHARED_MAX_STRINGS = 1_000_000
SHARED_MAX_CHARS = 20_000_000
_SHARED_STRING_CHARS = 4 * MAX_CELL_CHARS  # a cell is cut to MAX_CELL_CHARS anyway, after its spaces are squeezed


@dataclass
class _Budget:
    """Cells and characters still to be read, in a sheet or in the book."""

    cells: int
    chars: int

    def spent_by(self, cells: int, chars: int) -> str | None:
        """The budget ``cells`` and ``chars`` more would overrun ("cell", "character"), else None."""
        if cells > self.cells:
            return "cell"
        return "character" if chars > self.chars else None

    def take(self, cells: int, chars: int) -> None:
        self.cells -= cells
        self.chars -= chars


class SharedStrings:
    """The workbook's shared strings, read up to ``SHARED_MAX_STRINGS`` and ``SHARED_MAX_CHARS``; an index past
    what was read gives "" and is counted. Indexed by openpyxl's sheet reader like the list it expects."""

    def __init__(self, strings: list[str], total: int | None) -> None:
        self._strings = strings
        self.total = total  # as the table's header states it (None when it does not)
        self.missed = 0  # cells that pointed past what was read

    def __getitem__(self, index: int) -> str:
        if index < len(self._strings):
            return self._strings[index]
        self.missed += 1
        return ""

    def __len__(self) -> int:
        return len(self._strings)

    def note(self) -> tuple[Said, ...]:
        if not self.missed:
            return ()
        code = _STRINGS_CUT[bool(self.total), self.missed == 1]
        return (Said(code, {"n": len(self._strings), "total": self.total or 0, "cells": self.missed}),)


def read_shared_strings(source: IO[bytes]) -> SharedStrings:
    """The shared-string table, streamed and cut at the budget. Written here because openpyxl's
    ``read_string_table`` keeps every string of the table (1.2 GB for a 2.6 MB file), even in read-only mode;
    each string is read the way it reads one (``Text.content``)."""
    from xml.etree.ElementTree import iterparse

    from openpyxl.cell.text import Text
    from openpyxl.xml.constants import SHEET_MAIN_NS

    item = f"{{{SHEET_MAIN_NS}}}si"
    strings: list[str] = []
    total: int | None = None
    chars = 0
    for event, node in iterparse(source, events=("start", "end")):
        if event == "start":
            if total is None and node.tag == f"{{{SHEET_MAIN_NS}}}sst":
                total = int(node.get("uniqueCount") or node.get("count") or 0) or None
            continue
        if node.tag != item:
            continue
        text = (Text.from_tree(node).content or "").replace("x005F_", "")[:_SHARED_STRING_CHARS]
        node.clear()
        chars += len(text)
        if len(strings) >= SHARED_MAX_STRINGS or chars > SHARED_MAX_CHARS:
            break
        strings.append(text)
    return SharedStrings(strings, total)


def _open_book(path: Path) -> tuple[Any, SharedStrings]:
    """The workbook in openpyxl's read-only mode, and its shared strings (read by ``read_shared_strings``)."""
    from openpyxl.reader.excel import ExcelReader
    from openpyxl.xml.constants import SHARED_STRINGS

    class BoundedReader(ExcelReader):  # type: ignore[misc]
        def read_strings(self) -> None:
            part = self.package.find(SHARED_STRINGS)
            if part is not None:
                with self.archive.open(part.PartName[1:]) as source:
                    self.shared_strings = read_shared_strings(source)

    reader = BoundedReader(str(path), read_only=True, data_only=True)
    reader.read()
    strings = reader.shared_strings
    return reader.wb, strings if isinstance(strings, SharedStrings) else SharedStrings([], None)


# What a spent budget cut, by whose budget it was and whether the sheet's last row is known
_ROWS_CUT = {
    ("sheet", True): "left_out.sheet_rows",
    ("sheet", False): "left_out.sheet_rows_on",
    ("book", True): "left_out.book_rows",
    ("book", False): "left_out.book_rows_on",
}
# The shared strings cut, by whether the table states its total and whether one cell was read as empty
_STRINGS_CUT = {
    (False, False): "left_out.strings",
    (False, True): "left_out.strings_one",
    (True, False): "left_out.strings_of",
    (True, True): "left_out.strings_of_one",
}


@dataclass
class _Sheet:
    """One sheet as read: its rows of cell texts, and what the limits left out of it."""

    rows: list[list[str]] = field(default_factory=list)
    left_out: list[Said] = field(default_factory=list)
    cut: bool = False


def _read_sheet(sheet: Any, book: _Budget, scale: float = 1.0) -> _Sheet:
    """``sheet``'s rows until its budget or ``book``'s is spent (both times ``scale``), or the row limit."""
    own = _Budget(int(SHEET_MAX_CELLS * scale), int(SHEET_MAX_CHARS * scale))
    read = _Sheet()
    last = sheet.max_row  # from the sheet's own dimension record; None when it has none
    title = sheet.title
    for number, row in enumerate(sheet.iter_rows(min_row=1, max_col=MAX_SHEET_COLUMNS, values_only=True), 1):
        if number > MAX_SHEET_ROWS * scale:
            read.left_out.append(Said("left_out.sheet_rows_after", {"sheet": title, "n": MAX_SHEET_ROWS * scale}))
            read.cut = True
            break
        cells = [_cell(v) for v in row]
        while cells and not cells[-1]:
            cells.pop()
        if not cells:
            continue  # an empty row: a table leaves it out anyway
        chars = sum(len(c) + 3 for c in cells)  # as a Markdown row: "| " and " |" around each
        spent = own.spent_by(len(cells), chars) or book.spent_by(len(cells), chars)
        if spent:
            ranged, whose = bool(last and last >= number), "sheet" if own.spent_by(len(cells), chars) else "book"
            values = {"sheet": title, "first": number, "last": last or 0, "budget": spent}
            read.left_out.append(Said(_ROWS_CUT[whose, ranged], values))
            read.cut = True
            break
        own.take(len(cells), chars)
        book.take(len(cells), chars)
        read.rows.append(cells)
    if (sheet.max_column or 0) > MAX_SHEET_COLUMNS:
        read.left_out.append(Said("left_out.sheet_columns", {"sheet": title, "n": MAX_SHEET_COLUMNS}))
    return read


@PARSERS.register(".xlsx")
def parse_xlsx(path: Path, name: str) -> ParsedDocument:
    """Each sheet's rows as a Markdown table whose first row is the header, in sections of about
    ``SECTION_CHARS`` headed by the sheet's name, the header repeated in each (and in every chunk). Values as
    last computed by Excel (formulas are not evaluated)."""
    check_zip(path, name)
    book, strings = _open_book(path)
    sections: list[Section] = []
    empty: list[int] = []
    tables = 0
    left_out: list[Said] = []
    budget = _Budget(BOOK_MAX_CELLS, BOOK_MAX_CHARS)
    try:
        for number, sheet in enumerate(book.worksheets, start=1):
            read = _read_sheet(sheet, budget)
            left_out += read.left_out
            markdown = markdown_table(read.rows)
            del read.rows  # the table's text is all that is kept
            pieces = split_table(markdown, SECTION_CHARS) if markdown else []
            sections += [Section(text=p, page=number, heading=sheet.title, has_table=True) for p in pieces]
            tables += bool(pieces)
            if not pieces and not read.cut:
                empty.append(number)
        sheets = len(book.worksheets)
        left_out += strings.note()
    finally:
        book.close()
    report = ParseReport(pages_with_text=tables, empty_pages=tuple(empty), tables=tables).leaving_out(*left_out)
    return ParsedDocument(name=name, file_type="xlsx", sections=tuple(sections), pages=sheets, report=report)


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@REFERENCES.register(".xlsx")
def xlsx_reference(path: Path, report: ParseReport) -> str:
    """Every cell, read past the parser's budgets by a quarter (a cut sheet reads as not fully covered), within
    budgets of its own: the reference must not cost what the parser was spared."""
    book, _strings = _open_book(path)
    scale = 1.25
    budget = _Budget(int(BOOK_MAX_CELLS * scale), int(BOOK_MAX_CHARS * scale))
    try:
        lines = [" ".join(row) for sheet in book.worksheets for row in _read_sheet(sheet, budget, scale).rows]
    finally:
        book.close()
    return "\n".join(lines)
