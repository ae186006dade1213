"""Large hostile files under the 50 MB upload limit, each parsed in a child process held to 60 s and 2 GB
(``tests/hostile/bounded.py``): a page of millions of tiny paragraphs, a sheet of 20 million cells, a workbook
whose shared strings unpack to 400 MB. Each must end in a clear message or in the part that fits, said so."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragapp.config import IngestSettings
from ragapp.core.errors import IngestError
from ragapp.core.types import ParseReport
from ragapp.ingest.parse_context import ParseOptions
from ragapp.ingest.parsing import REFERENCES, parse_file
from ragapp.ingest.pipeline import parse_to_the_floor, text_budget
from tests.hostile.big_files import repeated_html, shared_strings_xlsx, wide_xlsx
from tests.hostile.bounded import bounded


def _up_to_the_chunk_floor(path: Path) -> None:
    """What ingest does with the file until it refuses one sure to make too many chunks."""
    settings = IngestSettings()
    parse_to_the_floor(path, path.name, "d", settings, ParseOptions(text_budget=text_budget(settings)))


@pytest.mark.slow  # tens of seconds: run by `make test-slow` (and CI), not by `make test`
def test_a_49_mb_page_of_tiny_paragraphs_is_refused_as_too_many_chunks(tmp_path: Path) -> None:
    # 2.5 million <p>: BeautifulSoup's tree of it took 4.8 GB and 2 minutes before the refusal. The whole page
    # makes at least 77,000; the reading stops past twice the text 20,000 chunks hold (the ingestor's budget).
    path = repeated_html(tmp_path / "hello.html")
    with pytest.raises(IngestError, match=r"^hello\.html: it makes at least 4\d,\d{3} chunks, over the 20,000"):
        bounded(_up_to_the_chunk_floor, path)


def _sheet_summary(path: Path) -> tuple[int, int, int, ParseReport | None, int]:
    """Sections, their longest text, the rows read, the report, and the reference text's length."""
    parsed = parse_file(path, path.name)
    rows = sum(len(s.text.splitlines()) - 2 for s in parsed.sections)  # each section: header, separator, rows
    reference = REFERENCES.get(".xlsx")(path, parsed.report)
    return len(parsed.sections), max(len(s.text) for s in parsed.sections), rows, parsed.report, len(reference)


@pytest.mark.slow  # tens of seconds: run by `make test-slow` (and CI), not by `make test`
def test_a_sheet_of_20_million_cells_is_read_to_its_budget_and_says_what_was_left(tmp_path: Path) -> None:
    from ragapp.ingest.parsers.xlsx import SECTION_CHARS, SHEET_MAX_CHARS

    path = wide_xlsx(tmp_path / "wide.xlsx")  # 100,000 rows × 200 numbers: 216 s and 1.8 GB in one section
    sections, longest, rows, report, reference = bounded(_sheet_summary, path)
    assert report is not None and len(report.left_out) == 1
    assert report.left_out[0].startswith("sheet Data: rows ") and report.left_out[0].endswith(
        "–100,000 not read (character budget)"
    )
    assert 4_000 < rows < 100_000 and f"rows {rows + 2:,}–" in report.left_out[0]  # the header is row 1
    assert sections > 1 and longest <= SECTION_CHARS + 1_000  # cut between rows
    assert reference <= 1.25 * SHEET_MAX_CHARS


def test_a_workbook_of_huge_shared_strings_reads_them_to_a_budget(tmp_path: Path) -> None:
    path = shared_strings_xlsx(tmp_path / "strings.xlsx")  # 200,000 strings of 2,000 characters: 400 MB unpacked
    sections, _longest, rows, report, _reference = bounded(_sheet_summary, path)
    assert sections >= 1 and rows == 499  # 500 rows of two strings, the first the header; the last row's unread
    assert report is not None and report.left_out == (
        "shared strings after the first 10,000 of 200,000 not read (text budget): 1 cell read as empty",
    )
