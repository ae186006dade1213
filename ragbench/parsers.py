"""``python -m ragbench.parsers``: how fast each parser reads real files (OCR: ``python -m ragbench.ocr``).

- **text PDF**: a real manual (Debian Reference, English and Chinese, which Debian installs), parsed whole, with
  and without table detection: pages/s, and chunks/s for parse + chunk (embedding is measured by
  ``ragbench.bench``).
- **PPTX, XLSX, CSV, DOCX**: files made here with the libraries that write them (slides with tables and notes, a
  5,000-row sheet, the same as CSV, a report with tables): items/s and chunks/s.

    python -m ragbench.parsers --output results/parsers.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Hashable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragapp.config import Settings
from ragapp.ingest.chunking import chunk_document
from ragapp.ingest.parse_context import ParseOptions
from ragapp.ingest.parsing import parse_file
from ragbench.cli import write_json

MANUALS = {
    "en": Path("/usr/share/debian-reference/debian-reference.en.pdf"),
    "zh": Path("/usr/share/debian-reference/debian-reference.zh-cn.pdf"),
}


def edit_distance(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Levenshtein distance between two strings (of characters) or lists (of words), two rows at a time."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def cer(read: str, truth: str) -> float:
    """Character error rate of ``read`` against ``truth``, whitespace ignored (``ragbench.ocr``)."""
    got, want = "".join(read.split()), "".join(truth.split())
    return edit_distance(got, want) / max(1, len(want))


def _timed(parse: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    out = parse()
    return out, time.perf_counter() - start


def _rate(count: float, seconds: float) -> float:
    return round(count / seconds, 2) if seconds > 0 else 0.0


def bench_text_pdf(path: Path, settings: Settings) -> list[dict[str, Any]]:
    rows = []
    for tables in (False, True):
        options = ParseOptions(ocr=False, pdf_tables=tables)
        doc, seconds = _timed(lambda options=options: parse_file(path, options=options))  # type: ignore[misc]
        chunks = chunk_document(doc, "bench", settings.ingest.chunk_size, settings.ingest.chunk_overlap)
        rows.append({
            "file": path.name, "parser": "pdf" + (" + tables" if tables else ""), "pages": doc.pages,
            "seconds": round(seconds, 2), "pages_per_s": _rate(doc.pages or 0, seconds),
            "chunks": len(chunks), "tables": doc.report.tables,
        })  # fmt: skip
    return rows


def _office_files(folder: Path) -> dict[str, tuple[Path, int]]:
    """Made here: (path, how many items it holds: slides, rows, tables)."""
    import docx
    from openpyxl import Workbook
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    for i in range(50):
        slide = deck.slides.add_slide(deck.slide_layouts[5])
        slide.shapes.title.text = f"Quarter {i} results"
        table = slide.shapes.add_table(6, 4, Inches(1), Inches(2), Inches(8), Inches(3)).table
        for r in range(6):
            for c in range(4):
                table.cell(r, c).text = f"r{r}c{c} value {i * r + c}"
        slide.notes_slide.notes_text_frame.text = f"Speaker notes for slide {i}: explain the trend."
    pptx_path = folder / "deck.pptx"
    deck.save(str(pptx_path))

    book = Workbook()
    sheet = book.active
    sheet.append(["Part", "Name", "Price", "Stock", "Supplier"])
    lines = ["Part,Name,Price,Stock,Supplier"]
    for i in range(5000):
        row = [f"P-{i:05}", f"side brush model {i % 97}", round(9.5 + i * 0.01, 2), i % 400, f"supplier {i % 13}"]
        sheet.append(row)
        lines.append(",".join(str(v) for v in row))
    xlsx_path = folder / "parts.xlsx"
    book.save(str(xlsx_path))
    csv_path = folder / "parts.csv"
    csv_path.write_text("\n".join(lines) + "\n", "utf-8")

    report = docx.Document()
    for i in range(20):
        report.add_heading(f"Section {i}", level=1)
        report.add_paragraph("This section reports the measurements of the month. " * 5)
        table = report.add_table(rows=8, cols=4)
        for r, row_cells in enumerate(table.rows):
            for c, cell in enumerate(row_cells.cells):
                cell.text = f"m{r}{c} = {r * c + i}"
    docx_path = folder / "report.docx"
    report.save(str(docx_path))
    return {"pptx": (pptx_path, 50), "xlsx": (xlsx_path, 5000), "csv": (csv_path, 5000), "docx": (docx_path, 20)}


def bench_office(folder: Path, settings: Settings) -> list[dict[str, Any]]:
    rows = []
    for kind, (path, items) in _office_files(folder).items():
        doc, parse_s = _timed(lambda path=path: parse_file(path))  # type: ignore[misc]
        chunks, chunk_s = _timed(
            lambda doc=doc: chunk_document(doc, "bench", settings.ingest.chunk_size, settings.ingest.chunk_overlap)  # type: ignore[misc]
        )
        unit = {"pptx": "slides", "xlsx": "rows", "csv": "rows", "docx": "tables"}[kind]
        rows.append({
            "file": path.name, "parser": kind, unit: items, "seconds": round(parse_s + chunk_s, 3),
            f"{unit}_per_s": _rate(items, parse_s + chunk_s), "chunks": len(chunks),
            "chunks_per_s": _rate(len(chunks), parse_s + chunk_s), "tables": doc.report.tables,
        })  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", type=Path, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    settings = Settings()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ragbench-parsers-") as tmp:
        folder = Path(tmp)
        for lang, manual in MANUALS.items():
            if not manual.exists():
                sys.stderr.write(f"{manual} is missing (Debian's debian-reference-{lang} package); skipped\n")
                continue
            rows += bench_text_pdf(manual, settings)
        rows += bench_office(folder, settings)
    for row in rows:
        sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
    if args.output:
        write_json(args.output, {"measured_at": datetime.now(UTC).isoformat(timespec="seconds"), "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
