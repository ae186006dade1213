"""``python -m ragbench.ocr``: how well OCR reads real manual pages scanned, measured as a reader feels it.

Pages of real PDF manuals that Debian installs (English and Chinese) are printed to images as a scanner gives
them (``ragbench.scans``: 150 dpi, grey, a 0.4° skew, a slight blur, no text layer), saved as an image-only PDF
and rendered back as ingest renders a scanned page for OCR (200 dpi, ``RAGAPP_INGEST__OCR_DPI``), then read by

- ``pp-ocrv4``: PP-OCRv4 alone (rapidocr-onnxruntime), what ragapp used before;
- ``tesseract``: Tesseract 5 ``eng`` alone (tesserocr);
- ``ragapp``: what ingest runs now (``ragapp.models.ocr.read_image``: Tesseract on Latin-script pages, PP-OCRv4
  with English lines re-spaced by Tesseract elsewhere).

Each reading is compared with the page's own text layer:

- **WER**, word error rate: word-level edit distance over the text layer's word count, where words are split on
  whitespace (so "pointertothestructure" is one wrong word, not three right ones) and each Chinese character
  counts as a word. Both sides are normalised first: NFKC, curly quotes and dashes made plain, a word broken by
  a hyphen at a line end joined, and tokens with no letter or digit (bullets, lone dashes) dropped.
- **identifiers**: of the text layer's identifier-like words (with ``_``, an inner capital, a digit beside a
  letter, or dotted numbers like ``1.5.23``), the share that appears as a whole word in the reading.
- **CER**, character error rate with whitespace ignored (what ``ragbench.parsers`` reports): blind to run-on
  words, kept beside WER to show the gap.

    python -m ragbench.ocr --output results/ocr.json

Prints a row per engine and language (means over the pages) and writes every page's figures. Measure on an
idle machine: OCR uses both cores. The Debian packages holding the manuals: debian-reference-en,
debian-reference-zh-cn, camlidl-doc, fasta3-doc.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ragbench.cli import write_json
from ragbench.parsers import cer, edit_distance
from ragbench.scans import save_image_pdf, scan_image

# (language, manual, pages): past front matter, into running text, code and tables. None of them is a
# document of an answer set's test split.
PAGES: tuple[tuple[str, Path, tuple[int, ...]], ...] = (
    ("en", Path("/usr/share/debian-reference/debian-reference.en.pdf"), (30, 31, 32, 33, 34, 60)),
    ("en", Path("/usr/share/doc/camlidl/camlidl-1.04.doc.pdf"), (5, 10, 12)),
    ("en", Path("/usr/share/doc/fasta3/fasta_guide.pdf"), (5, 15, 20)),
    ("zh", Path("/usr/share/debian-reference/debian-reference.zh-cn.pdf"), (30, 31, 32, 33, 34)),
)

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_PLAIN = str.maketrans({"‘": "'", "’": "'", "‚": "'", "“": '"', "”": '"', "„": '"', "«": '"', "»": '"',
                        "–": "-", "—": "-", "−": "-", "\ufffe": "", "\u00ad": ""})  # fmt: skip
_HYPHEN_BREAK = re.compile(r"(\w)-\s*\n\s*(\w)")
_RUN = re.compile(r"[\w.]*\w")  # a run of word characters and inner dots: asn1_node, LoanPolicy.max, 1.5.23
_IDENTIFIER = re.compile(r"\w*_\w+|[\w.]*[a-z][A-Z][\w.]*|[\w.]*[A-Za-z]\d[\w.]*|\d+(?:\.\d+){2,}")


def words(text: str) -> list[str]:
    """``text`` as the words WER counts (see the module's doc)."""
    text = _HYPHEN_BREAK.sub(r"\1\2", unicodedata.normalize("NFKC", text).translate(_PLAIN))
    out: list[str] = []
    for token in text.split():
        if not any(ch.isalnum() for ch in token):
            continue
        for part in re.split(f"({_CJK.pattern})", token):  # each Chinese character is a word
            if part and any(ch.isalnum() for ch in part):
                out.append(part)
    return out


def wer(read: str, truth: str) -> float:
    want = words(truth)
    return edit_distance(words(read), want) / max(1, len(want))


def identifiers(text: str) -> list[str]:
    """The identifier-like runs of ``text`` (see the module's doc), in order."""
    return [run for run in _RUN.findall(" ".join(words(text))) if _IDENTIFIER.fullmatch(run)]


def identifier_share(read: str, truth: str) -> tuple[int, int]:
    """(identifiers of ``truth`` read whole, identifiers of ``truth``)."""
    want = identifiers(truth)
    got = set(_RUN.findall(" ".join(words(read))))
    return sum(w in got for w in want), len(want)


def _engines() -> dict[str, Callable[[np.ndarray], str]]:
    from ragapp.models import tesseract
    from ragapp.models.ocr import from_tesseract, read_image

    engines: dict[str, Callable[[np.ndarray], str]] = {
        "pp-ocrv4": lambda image: read_image(image, latin=False).text,
        "ragapp": lambda image: read_image(image).text,
    }
    if tesseract.available():
        engines["tesseract"] = lambda image: from_tesseract(tesseract.read_lines(image)).text
    return engines


def measure(pages: tuple[tuple[str, Path, tuple[int, ...]], ...], dpi: int) -> list[dict[str, Any]]:
    from ragapp.config import Settings

    render_dpi = Settings().ingest.ocr_dpi  # read once: what ingest renders a scanned page at
    engines = _engines()
    blank = np.full((64, 64, 3), 255, dtype=np.uint8)
    for read in engines.values():
        read(blank)  # load the models outside the timing
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ragbench-ocr-") as tmp:
        for lang, path, numbers in pages:
            if path.is_file():
                rows += _measure_file(lang, path, numbers, dpi, engines, Path(tmp), render_dpi)
            else:
                print(f"skipped {path}: not installed", file=sys.stderr)
    return rows


def _measure_file(
    lang: str,
    path: Path,
    numbers: tuple[int, ...],
    dpi: int,
    engines: dict[str, Callable[[np.ndarray], str]],
    folder: Path,
    render_dpi: int,
) -> list[dict[str, Any]]:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        scanned = [(n, pdf[n - 1].get_textpage().get_text_range(), scan_image(pdf[n - 1], dpi)) for n in numbers]
    finally:
        pdf.close()
    rows = []
    for number, truth, image in scanned:
        pixels = as_ingest_sees(image, dpi, folder, render_dpi)
        for engine, read in engines.items():
            start = time.perf_counter()
            text = read(pixels)
            seconds = time.perf_counter() - start
            right, count = identifier_share(text, truth)
            rows.append({
                "lang": lang, "file": path.name, "page": number, "engine": engine,
                "wer": round(wer(text, truth), 4), "cer": round(cer(text, truth), 4),
                "identifiers": count, "identifiers_read": right, "seconds": round(seconds, 2),
            })  # fmt: skip
            print(f"{path.name} p{number} {engine:9s} WER {rows[-1]['wer']:.3f} ids {right}/{count} "
                  f"{seconds:.1f}s", file=sys.stderr)  # fmt: skip
    return rows


def as_ingest_sees(image: Any, dpi: int, folder: Path, render_dpi: int) -> np.ndarray:
    """``image`` saved as a one-page image-only PDF at ``dpi`` and rendered back as ingest renders a scanned
    page for OCR (at ``RAGAPP_INGEST__OCR_DPI``): the pixels the app's OCR reads."""
    import pypdfium2 as pdfium

    scan = save_image_pdf([image], folder / "page.pdf", dpi)
    pdf = pdfium.PdfDocument(str(scan))
    try:
        return np.asarray(pdf[0].render(scale=render_dpi / 72).to_pil().convert("RGB"))
    finally:
        pdf.close()


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for lang in dict.fromkeys(r["lang"] for r in rows):
        for engine in dict.fromkeys(r["engine"] for r in rows):
            mine = [r for r in rows if r["lang"] == lang and r["engine"] == engine]
            if not mine:
                continue
            count = sum(r["identifiers"] for r in mine)
            out.append({
                "lang": lang, "engine": engine, "pages": len(mine),
                "wer": round(sum(r["wer"] for r in mine) / len(mine), 4),
                "cer": round(sum(r["cer"] for r in mine) / len(mine), 4),
                "identifiers": round(sum(r["identifiers_read"] for r in mine) / count, 4) if count else None,
                "seconds_per_page": round(sum(r["seconds"] for r in mine) / len(mine), 2),
            })  # fmt: skip
    return out


def render(summary: list[dict[str, Any]]) -> str:
    lines = [f"{'lang':4s} {'engine':10s} {'pages':>5s} {'WER':>6s} {'ids read':>8s} {'CER':>6s} {'s/page':>7s}"]
    for s in summary:
        ids = "-" if s["identifiers"] is None else f"{100 * s['identifiers']:.0f}%"
        lines.append(
            f"{s['lang']:4s} {s['engine']:10s} {s['pages']:5d} {100 * s['wer']:5.1f}% {ids:>8s} "
            f"{100 * s['cer']:5.1f}% {s['seconds_per_page']:7.1f}"
        )
    lines.append("WER: words (Chinese: characters), whitespace counts; CER ignores whitespace. Means over pages.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ragbench.ocr", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dpi", type=int, default=150, help="scan resolution (default 150, as a scanner's)")
    parser.add_argument("--output", type=Path, help="write the summary and every page's figures here as JSON")
    args = parser.parse_args(argv)
    rows = measure(PAGES, args.dpi)
    if not rows:
        print("none of the manuals is installed; see this module's doc for the packages", file=sys.stderr)
        return 1
    summary = summarize(rows)
    print(render(summary))
    if args.output:
        payload = {
            "created": datetime.now(UTC).isoformat(timespec="seconds"), "cpus": os.cpu_count(), "dpi": args.dpi,
            "summary": summary, "pages": rows,
        }  # fmt: skip
        write_json(args.output, payload)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
