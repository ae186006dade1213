"""Hostile text files through the parser: each is built here, parsed in a child process held to the limits of
``tests/hostile/bounded.py`` (60 s, 2 GB; past either the child is killed and the test fails), and must give
a clear message or the text it holds."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from ragapp.core.errors import IngestError
from ragapp.core.types import ParsedDocument
from ragapp.ingest.parsing import markdown_heading, parse_file
from tests.hostile.bounded import bounded

T = TypeVar("T")
HANG_S = 20.0  # far beyond any legitimate parse of these small files: past it the parser is stuck


def finishes(work: Callable[[], T], within_s: float = HANG_S) -> T:
    """``work()``, failing the test if it has not finished after ``within_s`` seconds (``HANG_S``)."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(within_s)
    assert not thread.is_alive(), f"still running after {within_s:.0f} s"
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def _parse(path: Path) -> ParsedDocument:
    """What the child runs: ``path`` through the parser, as an upload is."""
    return parse_file(path, path.name)


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_a_heading_with_a_long_run_of_spaces_parses_at_once(tmp_path: Path) -> None:
    # The old heading pattern backtracked cubically here: 3.2 KB took 58 s.
    path = _write(tmp_path, "spaces.md", ("# x" + " " * 50_000 + "y\n\nbody text\n").encode())
    doc = bounded(_parse, path)
    assert doc.sections[0].heading is not None and doc.sections[0].heading.startswith("x")
    assert doc.sections[0].text == "body text"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("# Title", (1, "Title")),
        ("### Title ###", (3, "Title")),
        ("## C# tips", (2, "C# tips")),
        ("#hashtag", None),
        ("####### seven", None),
        ("#   ", None),
        ("## #", None),
    ],
)
def test_markdown_headings_are_read_as_commonmark_writes_them(line: str, expected: object) -> None:
    assert markdown_heading(line) == expected


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_text_is_decoded_with_or_without_a_byte_order_mark(tmp_path: Path, encoding: str) -> None:
    text = "The filter is rinsed every 14 days. 滤网每 14 天冲洗一次。"
    doc = bounded(_parse, _write(tmp_path, "notes.txt", text.encode(encoding)))
    assert doc.sections[0].text == text


@pytest.mark.parametrize("suffix", [".txt", ".md"])
def test_binary_garbage_named_as_text_is_refused_with_a_message(tmp_path: Path, suffix: str) -> None:
    path = _write(tmp_path, "garbage" + suffix, os.urandom(48_000))
    with pytest.raises(IngestError, match="binary file"):
        bounded(_parse, path)


def test_text_with_a_few_control_characters_is_still_text(tmp_path: Path) -> None:
    text = "Page 1\fPage 2 has a form feed and a bell\x07 but is text.\n" * 20
    doc = bounded(_parse, _write(tmp_path, "log.txt", text.encode()))
    assert "Page 2" in doc.sections[0].text


def _one_line_kept() -> bool:
    from ragapp.core.types import Section
    from ragapp.ingest.boilerplate import split_boilerplate

    line = "The kettle filter is rinsed every fourteen days. " * 200_000 + " 12"
    doc = ParsedDocument("one-line.txt", "txt", (Section(line),))
    return split_boilerplate(doc, "d1").doc.sections[0].text == line


def test_boilerplate_detection_reads_a_huge_single_line_at_once() -> None:
    # The table-of-contents pattern backtracked quadratically on long lines: a 49 MB one-line file never finished.
    assert bounded(_one_line_kept)


def test_a_csv_line_that_makes_the_sniffer_backtrack_parses_at_once(tmp_path: Path) -> None:
    """One 64 KB line of ',"' kept csv.Sniffer busy for over 10 s (its quote search backtracks): the delimiter
    is now sniffed on the first lines, each cut short."""
    path = _write(tmp_path, "odd.csv", b"a,b\n1,2\n" + b',"' * 32_000 + b"\n")
    doc = bounded(_parse, path, within_s=5.0)
    assert doc.sections and "| a | b |" in doc.sections[0].text


def test_rows_and_columns_cut_by_the_limits_are_said(tmp_path: Path, monkeypatch: Any) -> None:
    from ragapp.ingest.parsers import office

    monkeypatch.setattr(office, "MAX_SHEET_ROWS", 3)
    monkeypatch.setattr(office, "MAX_SHEET_COLUMNS", 2)
    path = _write(tmp_path, "wide.csv", b"a,b,c\n1,2,3\n4,5,6\n7,8,9\n")
    doc = office.parse_csv(path, path.name)
    assert doc.report is not None and doc.report.left_out == ("rows after the first 3", "columns after the first 2")
    assert "| a | b |" in doc.sections[0].text and "c" not in doc.sections[0].text.split("\n")[0]


def test_an_html_file_full_of_nul_bytes_is_refused_by_its_name(tmp_path: Path) -> None:
    path = _write(tmp_path, "page.html", b"<html><body><p>Hi</p>" + b"\x00" * 5_000 + b"</body></html>")
    with pytest.raises(IngestError, match=r"^page\.html: this looks like a binary file"):
        bounded(_parse, path)


def test_a_pdf_of_thousands_of_blank_pages_is_read_at_once(tmp_path: Path) -> None:
    """Every blank page went to OCR (over a second each, up to the 300-page cap: minutes for one 250 KB file);
    a thumbnail without ink now says a page is blank first."""
    from pypdf import PdfWriter

    writer = PdfWriter()
    for _ in range(2_000):
        writer.add_blank_page(612, 792)
    path = tmp_path / "blank.pdf"
    with path.open("wb") as out:
        writer.write(out)
    with pytest.raises(IngestError, match=r"^blank\.pdf: no text found"):
        bounded(_parse, path)
