"""A cited page as it looks: the PDF page (or the uploaded image) drawn as a PNG, the cited passage highlighted.

Where the page has a text layer, PDFium finds the passage's lines (and a table's cells) on it; where OCR read
the page, the boxes it read the passage's lines from are highlighted. Rendering is bounded (``MAX_WIDTH``) and
holds ``PDFIUM_LOCK``: PDFium is not thread-safe.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from ragapp.core.types import OcrBox
from ragapp.ingest.parsers.pdf import PDFIUM_LOCK

MAX_WIDTH = 1400
DEFAULT_WIDTH = 1000
MAX_FRAGMENTS = 60  # lines of a passage looked for on the page
MIN_FRAGMENT_CHARS = 3
_HIGHLIGHT = (255, 221, 0, 110)
_OUTLINE = (230, 160, 0, 255)
_TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}")


def fragments(passage: str) -> list[str]:
    """What to look for on the page: the passage's lines, and a table row's cells one by one (the page does not
    have the Markdown pipes)."""
    found: list[str] = []
    for line in passage.splitlines():
        line = line.strip()
        if _TABLE_RULE.match(line):
            continue
        parts = (
            [c.strip().replace("\\|", "|") for c in line.strip("|").split(" | ")] if line.startswith("|") else [line]
        )
        found += [" ".join(p.split()) for p in parts if len(p.strip()) >= MIN_FRAGMENT_CHARS]
    return list(dict.fromkeys(found))[:MAX_FRAGMENTS]


def render_pdf_page(
    path: Path, page: int, passages: Sequence[str], boxes: Sequence[OcrBox] = (), width: int = DEFAULT_WIDTH
) -> tuple[bytes, int]:
    """(PNG of page ``page`` with the passages highlighted, how many places were highlighted)."""
    import pypdfium2 as pdfium

    width = max(200, min(width, MAX_WIDTH))
    with PDFIUM_LOCK:
        document = pdfium.PdfDocument(str(path))
        try:
            if not 1 <= page <= len(document):
                raise ValueError(f"page {page} is not in this PDF ({len(document)} pages)")
            pdf_page = document[page - 1]
            page_width, page_height = pdf_page.get_size()
            scale = width / page_width
            image = pdf_page.render(scale=scale).to_pil().convert("RGB")
            rects = [] if boxes else list(_text_rects(pdf_page, passages))
        finally:
            document.close()
    # PDF points (origin bottom left) -> pixels (origin top left); OCR boxes are fractions of the page.
    places = [
        (x0 * scale, (page_height - y1) * scale, x1 * scale, (page_height - y0) * scale) for x0, y0, x1, y1 in rects
    ]
    places += [
        (b.x0 * image.width, b.y0 * image.height, b.x1 * image.width, b.y1 * image.height)
        for b in matching_boxes(boxes, passages)
    ]
    return _png(image, places), len(places)


def render_image(
    path: Path, passages: Sequence[str], boxes: Sequence[OcrBox], width: int = DEFAULT_WIDTH
) -> tuple[bytes, int]:
    """An uploaded image (a scan read by OCR), the boxes of the passages' lines highlighted."""
    from PIL import Image

    with Image.open(path) as opened:
        opened.draft("RGB", (MAX_WIDTH * 2, MAX_WIDTH * 2))
        image = opened.convert("RGB")
    width = max(200, min(width, MAX_WIDTH))
    if image.width > width:
        image = image.resize((width, round(image.height * width / image.width)))
    places = [
        (b.x0 * image.width, b.y0 * image.height, b.x1 * image.width, b.y1 * image.height)
        for b in matching_boxes(boxes, passages)
    ]
    return _png(image, places), len(places)


def matching_boxes(boxes: Iterable[OcrBox], passages: Sequence[str]) -> list[OcrBox]:
    """The OCR boxes whose line is part of one of the passages (the chunk was made from these lines)."""
    texts = [" ".join(p.split()) for p in passages]
    squeezed = ["".join(t.split()) for t in texts]
    found = []
    for box in boxes:
        line = "".join(box.text.split())
        if len(line) >= MIN_FRAGMENT_CHARS and any(line in text for text in squeezed):
            found.append(box)
    return found


def _text_rects(pdf_page: object, passages: Sequence[str]) -> Iterable[tuple[float, float, float, float]]:
    textpage = pdf_page.get_textpage()  # type: ignore[attr-defined]
    try:
        for passage in passages:
            for fragment in fragments(passage):
                searcher = textpage.search(fragment, match_case=False)
                try:
                    hit = searcher.get_next()
                    if hit is None:
                        continue
                    index, count = hit
                    for i in range(textpage.count_rects(index, count)):
                        yield textpage.get_rect(i)
                finally:
                    searcher.close()
    finally:
        textpage.close()


def _png(image: object, places: Sequence[tuple[float, float, float, float]]) -> bytes:
    from PIL import Image, ImageDraw

    base = image.convert("RGBA")  # type: ignore[attr-defined]
    overlay = Image.new("RGBA", base.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    for x0, y0, x1, y1 in places:
        draw.rectangle((x0 - 2, y0 - 2, x1 + 2, y1 + 2), fill=_HIGHLIGHT, outline=_OUTLINE, width=2)
    out = io.BytesIO()
    Image.alpha_composite(base, overlay).convert("RGB").save(out, "PNG", optimize=True)
    return out.getvalue()
