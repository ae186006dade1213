"""A cited page as it looks: the PDF page (or the uploaded image) drawn as a PNG, the cited passage highlighted;
a cited figure, its page cropped to it (a slide's, a Word file's or an EPUB's picture, as embedded).

Where the page has a text layer, the passage is found among its characters (``ragapp.ingest.passage_boxes``);
where OCR read the page, the boxes it read the passage's lines from are highlighted. Rendering is bounded
(``MAX_WIDTH``) and holds ``PDFIUM_LOCK``: PDFium is not thread-safe.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ragapp.core.types import Figure, OcrBox
from ragapp.ingest.parsers.pdfium import PDFIUM_LOCK
from ragapp.ingest.parsers.pictures import opened_picture, zip_picture
from ragapp.ingest.parsers.pptx_figures import picture_at
from ragapp.ingest.passage_boxes import PageText, locate, page_text

MAX_WIDTH = 1400
DEFAULT_WIDTH = 1000
MIN_BOX_CHARS = 3  # an OCR line shorter than this is not looked for (a lone "1" is in every passage)
_HIGHLIGHT = (255, 221, 0, 110)
_OUTLINE = (230, 160, 0, 255)


def render_pdf_page(
    path: Path, page: int, passages: Sequence[str], boxes: Sequence[OcrBox] = (), width: int = DEFAULT_WIDTH
) -> tuple[bytes, int]:
    """(PNG of page ``page`` with the passages highlighted, how many places were highlighted)."""
    width = max(200, min(width, MAX_WIDTH))
    with _opened(path, page) as pdf_page:
        page_width, page_height = pdf_page.get_size()
        scale = width / page_width
        image = pdf_page.render(scale=scale).to_pil().convert("RGB")
        text = None if boxes else _page_text(pdf_page)
    # Matching needs no PDFium: outside the lock.
    rects = [r for p in passages if text is not None and (where := locate(p, text)).found for r in where.rects]
    # PDF points (origin bottom left) -> pixels (origin top left); OCR boxes are fractions of the page.
    places = [
        (x0 * scale, (page_height - y1) * scale, x1 * scale, (page_height - y0) * scale) for x0, y0, x1, y1 in rects
    ]
    places += [
        (b.x0 * image.width, b.y0 * image.height, b.x1 * image.width, b.y1 * image.height)
        for b in matching_boxes(boxes, passages)
    ]
    return _png(image, places), len(places)


FIGURE_MARGIN = 0.01  # of the page, around a figure's box: its edge lines are not cut


def render_pdf_figure(path: Path, page: int | None, figure: Figure, width: int = DEFAULT_WIDTH) -> bytes:
    """A PNG of ``figure`` (its box on page ``page``, a little margin around it), ``width`` pixels wide at most."""
    if page is None:
        raise ValueError("a PDF's figure is cropped from its page, and this one has none")
    width = max(200, min(width, MAX_WIDTH))
    with _opened(path, page) as pdf_page:
        page_width, page_height = pdf_page.get_size()
        x0, y0 = max(0.0, figure.x0 - FIGURE_MARGIN), max(0.0, figure.y0 - FIGURE_MARGIN)
        x1, y1 = min(1.0, figure.x1 + FIGURE_MARGIN), min(1.0, figure.y1 + FIGURE_MARGIN)
        # pypdfium2 crops by what it cuts off each side, in points: left, bottom, right, top
        crop = (x0 * page_width, (1 - y1) * page_height, (1 - x1) * page_width, y0 * page_height)
        scale = width / max(1.0, (x1 - x0) * page_width)
        image = pdf_page.render(scale=min(scale, 4.0), crop=crop).to_pil().convert("RGB")
    return _png(image, [])


def render_pptx_figure(path: Path, slide: int | None, figure: Figure, width: int = DEFAULT_WIDTH) -> bytes:
    """A PNG of the picture at ``figure``'s place on slide ``slide`` of a PowerPoint deck (as embedded: a slide's
    pictures are files of their own, no page to crop), ``width`` pixels wide at most."""
    if slide is None:
        raise ValueError("a slide's figure is found on its slide, and this one has none")
    return _picture_png(picture_at(path, slide, figure), width)


def render_zip_figure(path: Path, page: int | None, figure: Figure, width: int = DEFAULT_WIDTH) -> bytes:
    """A PNG of a Word file's or an EPUB's figure: its picture file inside the zip at ``path``, named by
    ``figure.part`` (``page`` is not needed), ``width`` pixels wide at most. Raises ``ValueError``
    (``PictureError``) for a figure that names none, or a picture that is gone or will not open."""
    if not figure.part:
        raise ValueError("this figure was indexed without its picture's name: index the document again")
    return _picture_png(zip_picture(path, figure.part), width)


def _picture_png(blob: bytes, width: int) -> bytes:
    """The picture file ``blob`` as a PNG, ``width`` pixels wide at most (a decompression bomb is not decoded)."""
    width = max(200, min(width, MAX_WIDTH))
    image = opened_picture(blob)
    if image.width > width:
        image = image.resize((width, max(1, round(image.height * width / image.width))))
    return _png(image, [])


@contextmanager
def _opened(path: Path, page: int) -> Iterator[Any]:
    """Page ``page`` of the PDF at ``path`` (pypdfium2), under ``PDFIUM_LOCK`` until the block ends."""
    import pypdfium2 as pdfium

    with PDFIUM_LOCK:
        document = pdfium.PdfDocument(str(path))
        try:
            if not 1 <= page <= len(document):
                raise ValueError(f"page {page} is not in this PDF ({len(document)} pages)")
            yield document[page - 1]
        finally:
            document.close()


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
        if len(line) >= MIN_BOX_CHARS and any(line in text for text in squeezed):
            found.append(box)
    return found


def _page_text(pdf_page: Any) -> PageText:
    textpage = pdf_page.get_textpage()
    try:
        return page_text(textpage)
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
