"""Offline OCR: PP-OCRv4 (Chinese and English) through ``rapidocr-onnxruntime``, whose wheel ships the ONNX
weights, so nothing is fetched. Loaded once, on first use, and shared; ONNX Runtime sessions are safe to call
from several threads, but one page at a time keeps two cores for the rest of the app, so calls take a lock.

``read_image`` gives the page's text in reading order (boxes grouped into lines top to bottom, left to right
inside a line) and the mean recognition confidence, weighted by characters.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]")
_lock = threading.Lock()


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
def _engine() -> Any:
    from rapidocr_onnxruntime import RapidOCR

    log.info("loading the OCR model (PP-OCRv4, rapidocr-onnxruntime)")
    return RapidOCR()


def read_image(image: np.ndarray) -> OcrText:
    """The text in ``image`` (an RGB or grey array)."""
    with _lock:
        result, _elapsed = _engine()(image)
    return assemble(result or [])


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
