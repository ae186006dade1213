"""Builders of large hostile files, each under the 50 MB upload limit, written in a second or two: the XLSX
ones write the zip's XML by hand (openpyxl would take minutes to write 20 million cells)."""

from __future__ import annotations

import zipfile
from pathlib import Path

_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    '<Override PartName="/xl/sharedStrings.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>'
    "</Types>"
)
_ROOT_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Target="xl/workbook.xml" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"/>'
    "</Relationships>"
)
_BOOK = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    '<sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
_BOOK_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Target="worksheets/sheet1.xml" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet"/>'
    '<Relationship Id="rId2" Target="sharedStrings.xml" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings"/>'
    "</Relationships>"
)
_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


def repeated_html(path: Path, megabytes: int = 49) -> Path:
    """A page of one tiny paragraph repeated to ``megabytes`` (2.5 million ``<p>`` at 49 MB)."""
    paragraph = b"<p>hello world</p>\n"
    count = (megabytes * 1_000_000 - 100) // len(paragraph)
    path.write_bytes(b"<html><body>" + paragraph * count + b"</body></html>")
    return path


def _xlsx(path: Path, head: bytes, body: bytes, repeat: int, strings: list[bytes], dimension: str) -> Path:
    """A one-sheet workbook (the sheet named "Data"): the rows ``head``, then the rows ``body`` written
    ``repeat`` times (rows without numbers follow each other), and the shared-string table ``strings``."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("[Content_Types].xml", _TYPES)
        archive.writestr("_rels/.rels", _ROOT_RELS)
        archive.writestr("xl/workbook.xml", _BOOK)
        archive.writestr("xl/_rels/workbook.xml.rels", _BOOK_RELS)
        with archive.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as sheet:
            sheet.write(f'<worksheet xmlns="{_MAIN}"><dimension ref="{dimension}"/><sheetData>'.encode())
            sheet.write(head)
            for _ in range(repeat):
                sheet.write(body)
            sheet.write(b"</sheetData></worksheet>")
        with archive.open("xl/sharedStrings.xml", "w", force_zip64=True) as table:
            table.write(f'<sst xmlns="{_MAIN}" count="{len(strings)}" uniqueCount="{len(strings)}">'.encode())
            for start in range(0, len(strings), 10_000):
                table.write(b"".join(b"<si><t>%s</t></si>" % s for s in strings[start : start + 10_000]))
            table.write(b"</sst>")
    return path


def wide_xlsx(path: Path, rows: int = 100_000, columns: int = 200) -> Path:
    """``rows`` × ``columns`` numbers (a header row of names first): about 1 MB packed, 20 million cells."""
    header = b"<row>" + b"".join(b'<c t="s"><v>%d</v></c>' % i for i in range(columns)) + b"</row>"
    row = b"<row>" + b"<c><v>7</v></c>" * columns + b"</row>"
    names = [b"column %d" % i for i in range(columns)]
    return _xlsx(path, header, row * 100, (rows - 1) // 100, names, f"A1:{_column_name(columns)}{rows}")


def shared_strings_xlsx(path: Path, strings: int = 200_000, chars: int = 2_000) -> Path:
    """A small sheet over a shared-string table of ``strings`` distinct strings of ``chars`` characters each
    (400 MB unpacked, a few MB packed); its last row points at the table's last string."""
    filler = b"lorem ipsum dolor " * (chars // 18)
    table = [b"%d %s" % (i, filler) for i in range(strings)]
    rows = b"".join(b'<row><c t="s"><v>%d</v></c><c t="s"><v>%d</v></c></row>' % (2 * i, 2 * i + 1) for i in range(500))
    last = b'<row><c t="s"><v>%d</v></c></row>' % (strings - 1)
    return _xlsx(path, rows, last, 1, table, "A1:B501")


def _column_name(number: int) -> str:
    name = ""
    while number:
        number, rest = divmod(number - 1, 26)
        name = chr(65 + rest) + name
    return name
