"""``python -m ragbench.figures_cost``: what reading a PDF's figures as passages costs at ingest (one-off; its
figures are in docs/documents.md, "Figures").

- **ingest**: pages ``--pages`` of GNU Octave's manual (Debian's octave-doc; chapter 15, Plotting, by default)
  ingested whole (parse, chunk, embed, store) into an engine with figures off and one with them on, interleaved
  off/on for ``--rounds`` rounds, the document deleted between rounds;
- **parse**: the same pages parsed and chunked (default options: tables on), figures off then on, interleaved
  for ``--parse-rounds`` rounds: where the figures' own work is, without the embedder's noise.

    python -m ragbench.figures_cost --pages 330-353 --rounds 2 --parse-rounds 5 --output results/figures_cost.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from ragapp.config import Settings
from ragapp.ingest.chunking import chunk_document
from ragapp.ingest.parse_context import ParseOptions
from ragapp.ingest.parsing import parse_file

MANUAL = Path("/usr/share/doc/octave/octave.pdf")


def _excerpt(first: int, last: int, target: Path) -> Path:
    from pypdf import PdfReader, PdfWriter

    reader, writer = PdfReader(MANUAL), PdfWriter()
    for index in range(first - 1, last):
        writer.add_page(reader.pages[index])
    writer.write(target)
    return target


def _ingest_rounds(pdf: Path, rounds: int, state: Path) -> dict[str, Any]:
    from ragapp.engine.build import build_engine

    engines = {
        figures: build_engine(Settings(paths={"state_dir": state / str(figures)}, ingest={"figures": figures}))
        for figures in (False, True)
    }
    seconds: dict[bool, list[float]] = {False: [], True: []}
    chunks: dict[bool, int] = {}
    try:
        for _ in range(rounds):
            for figures, engine in engines.items():  # off, then on: interleaved
                start = time.perf_counter()
                (result,) = engine.library.ingest([(pdf, pdf.name)])
                seconds[figures].append(time.perf_counter() - start)
                assert result.status == "added", result.message
                chunks[figures] = result.chunks or 0
                engine.library.delete(str(result.doc_id))
    finally:
        for engine in engines.values():
            engine.close()
    off, on = sum(seconds[False]), sum(seconds[True])
    return {
        "seconds_off": [round(s, 2) for s in seconds[False]],
        "seconds_on": [round(s, 2) for s in seconds[True]],
        "chunks_off": chunks[False],
        "chunks_on": chunks[True],
        "ratio_on_off": round(on / off, 3),
    }


def _parse_rounds(pdf: Path, rounds: int) -> dict[str, Any]:
    """Parse and chunk ``pdf`` with the default options, figures off then on, ``rounds`` times (interleaved)."""
    seconds: dict[bool, list[float]] = {False: [], True: []}
    found = 0
    parse_file(pdf, options=ParseOptions())  # unmeasured: the libraries' first import and load go here
    for _ in range(rounds):
        for figures in (False, True):
            start = time.perf_counter()
            doc = parse_file(pdf, options=ParseOptions(figures=figures))
            chunk_document(doc, "doc", 1000, 150)
            seconds[figures].append(time.perf_counter() - start)
            found = max(found, doc.report.figures)
    off, on = sum(seconds[False]), sum(seconds[True])
    return {
        "seconds_off": [round(s, 2) for s in seconds[False]],
        "seconds_on": [round(s, 2) for s in seconds[True]],
        "figures": found,
        "ratio_on_off": round(on / off, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", default="317-380", help="first-last page of the manual to ingest")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--parse-rounds", type=int, default=5, help="parse-only rounds (0: none)")
    parser.add_argument("--no-ingest", action="store_true", help="parse only")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    first, last = (int(n) for n in args.pages.split("-"))
    with tempfile.TemporaryDirectory() as tmp:
        pdf = _excerpt(first, last, Path(tmp) / f"octave-{first}-{last}.pdf")
        report: dict[str, Any] = {"pages": args.pages}
        if args.parse_rounds:
            report["parse"] = _parse_rounds(pdf, args.parse_rounds)
        if not args.no_ingest:
            report["ingest"] = _ingest_rounds(pdf, args.rounds, Path(tmp))
    text = json.dumps(report, indent=2)
    print(text)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text + "\n", "utf-8")


if __name__ == "__main__":
    main()
