"""Offline OCR by two engines, each on the script it reads best:

- **Tesseract 5** (``ragapp.models.tesseract``) reads a page first: fast (about 1 s a page on two cores) and,
  for English, right about where words begin and end. A page it reads with confidence and without doubtful
  words is Latin script, and its reading is the answer.
- Otherwise (Chinese, mixed, or a hard scan) **PP-OCRv4** through ``rapidocr-onnxruntime`` (ONNX weights in the
  wheel) reads it, boxes grouped into lines top to bottom, left to right inside a line. PP-OCRv4 drops most
  spaces between English words ("pointertothestructure"), so each of its lines without Chinese characters takes
  Tesseract's reading of the same place where the two agree on the letters.

Both load once, on first use, and are shared; one page at a time keeps two cores for the rest of the app, so
calls take a lock. ``python -m ragbench.ocr`` measures the word error rate that chose this.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import cache
from typing import Any

import numpy as np

from ragapp.models import tesseract

log = logging.getLogger(__name__)

_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]")
_lock = threading.Lock()

# A page is taken as Latin script when Tesseract's confidence, weighted by characters, is at least this and
# at most DOUBTFUL_SHARE of its characters lie in words it was unsure of (``tesseract.DOUBTFUL``). Chosen on pages of
# the Debian Reference (English and Chinese), not on any answer set: English pages read 0.82-0.90 with under
# 5% doubtful, Chinese ones 0.36-0.46.
LATIN_PAGE = 0.7
DOUBTFUL_SHARE = 0.1
# A PP-OCRv4 line takes Tesseract's reading of the same place when their letters agree this well.
SAME_LETTERS = 0.8


@dataclass(frozen=True)
class OcrLine:
    text: str
    box: tuple[float, float, float, float]  # x0, y0, x1, y1 in pixels of the image read


@dataclass(frozen=True)
class OcrText:
    text: str
    confidence: float  # 0..1, mean over the characters read; 0 when nothing was read
    lines: tuple[OcrLine, ...] = ()


@cache
def _engine(threads: int | None) -> Any:
    from rapidocr_onnxruntime import RapidOCR

    log.info("loading the OCR model (PP-OCRv4, rapidocr-onnxruntime, %s threads)", threads or "default")
    # -1: onnxruntime's default, a thread per physical core
    return RapidOCR(intra_op_num_threads=threads or -1, inter_op_num_threads=threads or -1)


def read_image(image: np.ndarray, latin: bool = True, threads: int | None = None) -> OcrText:
    """The text in ``image`` (an RGB or grey array); ``latin`` False: PP-OCRv4 alone; ``threads``: PP-OCRv4's CPU
    threads (``ingest.ocr_threads``; None: one per physical core)."""
    tess = tesseract.read_lines(image) if latin and tesseract.available() else None
    if tess is not None and is_latin(tess):
        return from_tesseract(tess)
    with _lock:
        result, _elapsed = _engine(threads)(image)
    read = assemble(result or [])
    return respace(read, tess) if tess is not None else read


def is_latin(page: tesseract.TessPage) -> bool:
    return bool(page.lines) and page.confidence >= LATIN_PAGE and page.doubtful <= DOUBTFUL_SHARE


def from_tesseract(page: tesseract.TessPage) -> OcrText:
    lines = tuple(OcrLine(line.text, line.box) for line in page.lines)
    return OcrText("\n".join(line.text for line in lines), page.confidence, lines)


def respace(read: OcrText, latin: tesseract.TessPage) -> OcrText:
    """PP-OCRv4's lines, each line without Chinese characters replaced by Tesseract's reading of the same place
    (the words apart) where the two read the same letters."""
    lines = []
    for line in read.lines:
        text = line.text
        if not _CJK.search(text):
            x0, y0, x1, y1 = line.box
            there = sorted(
                (t for t in latin.lines if y0 <= (t.box[1] + t.box[3]) / 2 <= y1 and t.box[0] < x1 and t.box[2] > x0),
                key=lambda t: t.box[0],
            )
            spaced = " ".join(t.text for t in there)
            if there and _same_letters(text, spaced):
                text = spaced
        lines.append(OcrLine(text, line.box))
    return OcrText("\n".join(line.text for line in lines), read.confidence, tuple(lines))


def _same_letters(a: str, b: str) -> bool:
    a, b = "".join(a.lower().split()), "".join(b.lower().split())
    return SequenceMatcher(None, a, b, autojunk=False).ratio() >= SAME_LETTERS


def assemble(result: list[Any]) -> OcrText:
    """Boxes as rapidocr gives them (``[points, text, score]``) -> lines of text in reading order."""
    boxes = []
    for points, text, score in result:
        text = str(text).strip()
        if not text:
            continue
        ys = [float(p[1]) for p in points]
        xs = [float(p[0]) for p in points]
        boxes.append((min(ys), max(ys), min(xs), max(xs), text, float(score)))
    boxes.sort(key=lambda b: (b[0], b[2]))
    lines: list[list[tuple[float, float, float, float, str, float]]] = []
    for box in boxes:
        top, bottom = box[0], box[1]
        middle = (top + bottom) / 2
        line = lines[-1] if lines else None
        if line is not None:
            line_top = min(b[0] for b in line)
            line_bottom = max(b[1] for b in line)
            if line_top <= middle <= line_bottom:  # beside the boxes of the line above: the same line
                line.append(box)
                continue
        lines.append([box])
    read = tuple(
        OcrLine(
            _join([b[4] for b in sorted(line, key=lambda b: b[2])]),
            (min(b[2] for b in line), min(b[0] for b in line), max(b[3] for b in line), max(b[1] for b in line)),
        )
        for line in lines
    )
    chars = sum(len(b[4]) for b in boxes)
    confidence = sum(b[5] * len(b[4]) for b in boxes) / chars if chars else 0.0
    return OcrText("\n".join(line.text for line in read), round(confidence, 4), read)


def _join(parts: list[str]) -> str:
    """Boxes of one line: a space between words, none between two Chinese characters."""
    out = parts[0]
    for part in parts[1:]:
        glue = "" if _CJK.match(out[-1]) and _CJK.match(part[0]) else " "
        out += glue + part
    return out
