"""Images (a photo or scan of a page): read by OCR, as one page."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ragapp.core.errors import IngestError
from ragapp.core.types import ParsedDocument, ParseReport, Said, Section
from ragapp.ingest.parse_context import options, report
from ragapp.ingest.parsers.base import PARSERS
from ragapp.ingest.parsers.pdf import page_boxes

MAX_PIXELS = 60_000_000  # a larger image (a decompression bomb, or a poster) is refused before it is decoded
MAX_SIDE = 4000  # OCR reads a larger image scaled down to this: small print is still legible, time is not wasted


@PARSERS.register(".png")
def parse_image(path: Path, name: str) -> ParsedDocument:
    from PIL import Image, UnidentifiedImageError

    if not options().ocr:
        raise IngestError(said=Said("ingest.image_ocr_off", {"name": name}))
    try:
        with Image.open(path) as image:
            width, height = image.size
            if width * height > MAX_PIXELS:
                size = {"name": name, "width": width, "height": height, "most": MAX_PIXELS // 1_000_000}
                raise IngestError(said=Said("ingest.image_too_big", size))
            image.draft("RGB", (MAX_SIDE, MAX_SIDE))  # JPEG decodes straight to a smaller size
            picture = image.convert("RGB")
    except Image.DecompressionBombError:  # PIL's own guard, for sizes far past ours
        raise IngestError(said=Said("ingest.image_bomb", {"name": name, "most": MAX_PIXELS // 1_000_000})) from None
    except (UnidentifiedImageError, OSError) as exc:
        raise IngestError(said=Said("ingest.image_unreadable", {"name": name, "error": type(exc).__name__})) from None
    if max(picture.size) > MAX_SIDE:
        picture.thumbnail((MAX_SIDE, MAX_SIDE))
    from ragapp.models.ocr import read_image

    report("ocr", 0.0, "OCR page 1/1", 0, 1)
    result = read_image(np.asarray(picture), latin=options().ocr_latin, threads=options().ocr_threads)
    report("ocr", 1.0, "OCR done", 1, 1)
    text = result.text.strip()
    sections = (Section(text=text, page=1, ocr_confidence=result.confidence),) if text else ()
    quality = ParseReport(
        pages_with_text=1 if text else 0,
        ocr_pages=(1,) if text else (),
        empty_pages=() if text else (1,),
        ocr_confidence=result.confidence if text else None,
    )
    boxes = page_boxes(1, result.lines, picture.size[0], picture.size[1])
    file_type = Path(name).suffix.lower().lstrip(".")
    return ParsedDocument(name, file_type, sections, 1, quality, tuple(boxes))


for _extension in (".jpg", ".jpeg", ".webp", ".bmp", ".tif", ".tiff"):
    PARSERS.register(_extension)(parse_image)
