"""``python -m ragbench.highlights``: how many cited passages of real text PDFs are highlighted on their page.

Each PDF is parsed and chunked as an upload is (OCR off: these are text PDFs) and, for every chunk, the
highlighter (``ragapp.ingest.passage_boxes``) is asked where the chunk's text is on its page, as the sources
panel asks when a citation is opened without a quote; then where each of its sentences of three words or more
is, whitespace collapsed as an evidence quote shows it. A passage counts as highlighted when boxes cover at
least ``STRICT`` of its letters and digits; the sources panel says "could not be found" under ``FOUND_SHARE``.

    python -m ragbench.highlights --output results/highlights.json            # the tuning PDFs (fetched once)
    python -m ragbench.highlights /usr/share/doc/libtasn1-doc/libtasn1.pdf   # any PDFs or folders of them

Without paths it measures the manuals of six Debian documentation packages (``TUNING``), fetched with
``apt-get download`` into ``--cache`` the first time. The held-out documents are never part of that set, nor
of a folder's PDFs: named one by one, they are a check of the parser, never tuned on.
"""

from __future__ import annotations

import argparse
import gzip
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragapp.config import REPO_ROOT, Settings
from ragapp.core.types import Chunk
from ragapp.ingest.boilerplate import split_boilerplate
from ragapp.ingest.chunking import chunk_document
from ragapp.ingest.parse_context import ParseOptions
from ragapp.ingest.parsers.pdf import PDFIUM_LOCK
from ragapp.ingest.parsing import parse_file
from ragapp.ingest.passage_boxes import Located, locate, page_text
from ragapp.qa.grounding import prose_sentences
from ragbench.cli import run_command, write_json
from ragbench.coverage import HELD_OUT, pct

# Debian documentation packages and the manual each holds (a .gz is unpacked).
TUNING = {
    "flex-doc": "usr/share/doc/flex-doc/flex.pdf.gz",
    "camlidl-doc": "usr/share/doc/camlidl/camlidl-1.04.doc.pdf",
    "fasta3-doc": "usr/share/doc/fasta3/fasta_guide.pdf",
    "libmatio-doc": "usr/share/doc/libmatio-dev/matio_user_guide.pdf",
    "r-doc-pdf": "usr/share/R/doc/manual/R-lang.pdf",
    "gnuplot-doc": "usr/share/doc/gnuplot/gnuplot.pdf",
}
CACHE = REPO_ROOT / ".cache/highlight-pdfs"  # git-ignored
STRICT = 0.9  # share of a passage's letters and digits that must be marked for it to count as highlighted
MIN_QUOTE_WORDS = 3
TARGET = 0.95


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.highlights", description=__doc__.split("\n\n")[0])
    p.add_argument("pdfs", nargs="*", type=Path, help="PDFs or folders of them (default: the tuning manuals).")
    p.add_argument("--cache", type=Path, default=CACHE, help=f"where the tuning manuals are kept (default {CACHE}).")
    p.add_argument("--output", type=Path, help="write every document's row as JSON.")
    return p


def main(argv: list[str] | None = None) -> int:
    return run_command(_run, _parser().parse_args(argv))


def tuning_pdfs(cache: Path) -> list[Path]:
    """The tuning manuals, fetched with ``apt-get download`` and unpacked into ``cache`` when missing."""
    cache.mkdir(parents=True, exist_ok=True)
    found = []
    for package, member in TUNING.items():
        target = cache / Path(member).name.removesuffix(".gz")
        if not target.exists():
            with tempfile.TemporaryDirectory(prefix="ragbench-highlights-") as tmp:
                subprocess.run(["apt-get", "download", package], cwd=tmp, check=True, capture_output=True)
                (deb,) = Path(tmp).glob("*.deb")
                subprocess.run(["dpkg", "-x", str(deb), str(Path(tmp) / "x")], check=True)
                data = (Path(tmp) / "x" / member).read_bytes()
                target.write_bytes(gzip.decompress(data) if member.endswith(".gz") else data)
        found.append(target)
    return found


def chunks_of(path: Path, settings: Settings) -> list[Chunk]:
    """``path`` parsed, its boilerplate left out and chunked as an upload is, OCR off."""
    ingest = settings.ingest
    options = ParseOptions(ocr=False, pdf_tables=ingest.pdf_tables, join_broken_words=ingest.join_broken_words)
    split = split_boilerplate(parse_file(path, options=options), "bench")
    return chunk_document(split.doc, "bench", ingest.chunk_size, ingest.chunk_overlap)


def quotes_of(chunk: Chunk) -> list[str]:
    """The chunk's sentences of ``MIN_QUOTE_WORDS`` words or more (with a letter or digit each: a line of
    alignment marks ":: :. ." is no sentence), as a quote shows them (whitespace collapsed)."""
    out = [" ".join(s.split()) for s in prose_sentences(chunk.text)]
    return [q for q in out if sum(any(c.isalnum() for c in w) for w in q.split()) >= MIN_QUOTE_WORDS]


def measure(path: Path, settings: Settings) -> dict[str, Any]:
    """One PDF's row: its chunks and quotes, how many highlighted (strictly, and as the panel judges)."""
    import pypdfium2 as pdfium

    start = time.perf_counter()
    chunks = [c for c in chunks_of(path, settings) if c.page is not None]
    by_page: dict[int, list[Chunk]] = defaultdict(list)
    for chunk in chunks:
        by_page[chunk.page or 0].append(chunk)
    passages: list[Located] = []
    quotes: list[Located] = []
    missed: list[dict[str, Any]] = []
    with PDFIUM_LOCK:
        document = pdfium.PdfDocument(str(path))
    try:
        for number, on_page in sorted(by_page.items()):
            with PDFIUM_LOCK:
                textpage = document[number - 1].get_textpage()
                page = page_text(textpage)
                textpage.close()
            for chunk in on_page:
                located = locate(chunk.text, page)
                passages.append(located)
                if located.share < STRICT and len(missed) < 20:
                    missed.append({"page": number, "share": round(located.share, 3), "text": chunk.text[:160]})
                quotes += [locate(q, page) for q in quotes_of(chunk)]
    finally:
        with PDFIUM_LOCK:
            document.close()
    return {
        "file": path.name, "chunks": len(passages), "quotes": len(quotes),
        "chunks_highlighted": _share(passages), "quotes_highlighted": _share(quotes),
        "chunks_found": _share(passages, found=True), "quotes_found": _share(quotes, found=True),
        "seconds": round(time.perf_counter() - start, 1), "missed": missed,
    }  # fmt: skip


def _share(located: list[Located], found: bool = False) -> float | None:
    if not located:
        return None
    hits = sum((x.found if found else x.share >= STRICT and bool(x.rects)) for x in located)
    return round(hits / len(located), 4)


def render(rows: list[dict[str, Any]]) -> str:
    lines = [f"{'document':28s} {'chunks':>6s} {'hl %':>6s} {'found %':>7s} {'quotes':>6s} {'hl %':>6s} "
             f"{'found %':>7s} {'s':>6s}"]  # fmt: skip
    for r in rows:
        lines.append(
            f"{r['file'][:28]:28s} {r['chunks']:6d} {pct(r['chunks_highlighted'])} {pct(r['chunks_found']):>7s} "
            f"{r['quotes']:6d} {pct(r['quotes_highlighted'])} {pct(r['quotes_found']):>7s} {r['seconds']:6.1f}"
        )
    return "\n".join(lines) + f"\n(hl: {STRICT:.0%} of a passage's letters marked; target {TARGET:.0%} of chunks)"


def pdfs(paths: list[Path]) -> list[Path]:
    """The PDFs named, and those under the folders named but the held-out documents (``HELD_OUT``): those are
    measured only when named one by one, as a check of the parser, never tuned on."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            out += [p for p in sorted(path.rglob("*.pdf")) if not any(mark in str(p) for mark in HELD_OUT)]
        else:
            out.append(path)
    return out


def _run(args: argparse.Namespace) -> int:
    settings = Settings()
    paths = pdfs(args.pdfs) if args.pdfs else tuning_pdfs(args.cache)
    rows = []
    for path in paths:
        rows.append(measure(path, settings))
        print(f"measured {path.name}", file=sys.stderr)
    print(render(rows))
    if args.output:
        payload = {"measured_at": datetime.now(UTC).isoformat(timespec="seconds"), "strict": STRICT, "rows": rows}
        write_json(args.output, payload)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
