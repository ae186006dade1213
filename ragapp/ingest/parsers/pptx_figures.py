"""A PowerPoint deck's pictures as passages of their own, as a PDF's and a Word file's are
(``ragapp.ingest.parsers.pdf_figures``, ``docx_figures``): each picture on a slide (grouped ones too) becomes a
section holding its caption (the slide's text box nearest under it, else over it, that starts like a caption:
"Figure 3: …", "图 3 …"), its alt text, the words inside it (OCR) and the slide's other text, under the slide's
title, on the slide's page. Its ``Figure`` box is where it sits on the slide, so the picture can be found again
to be shown (``picture_at``).

Decoration is left out by the PDF's rule of size and shape (``decorative``, on the picture's size on the slide, the
slide as the page: a picture covering the slide is its background) and of repetition (the same picture on
``REPEATED_PAGES`` slides or more: a logo on every slide). Written here: python-pptx lists pictures, not captions.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragapp.core.types import Figure, Section
from ragapp.ingest.parse_context import ParseOptions, report
from ragapp.ingest.parsers.docx_figures import EMU_PER_POINT
from ragapp.ingest.parsers.pdf_figures import (
    AROUND_CHARS,
    INSIDE_CHARS,
    MAX_OCR_FIGURES,
    REPEATED_PAGES,
    decorative,
    is_caption,
)
from ragapp.ingest.parsers.pictures import read_picture

log = logging.getLogger(__name__)

Box = tuple[float, float, float, float]  # left, top, right, bottom on the slide, in EMU (origin top left)


@dataclass(frozen=True)
class _Picture:
    slide: int
    box: Box
    blob: bytes
    alt: str


def _placed(
    shapes: Any, transform: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0)
) -> Iterator[tuple[Any, Box]]:
    """Every shape of ``shapes`` with its box on the slide, a group's members too: a group keeps its members in
    coordinates of its own (``chOff``/``chExt``), mapped here onto the slide by ``transform`` (x, y offsets and
    scales)."""
    from pptx.shapes.group import GroupShape

    dx, dy, sx, sy = transform
    for shape in shapes:
        left, top = float(shape.left or 0), float(shape.top or 0)
        width, height = float(shape.width or 0), float(shape.height or 0)
        box = (dx + left * sx, dy + top * sy, dx + (left + width) * sx, dy + (top + height) * sy)
        if isinstance(shape, GroupShape):
            child_off, child_ext = (
                shape._element.xpath("./p:grpSpPr/a:xfrm/a:chOff"),
                shape._element.xpath("./p:grpSpPr/a:xfrm/a:chExt"),
            )
            cx = float(child_off[0].get("x", 0)) if child_off else 0.0
            cy = float(child_off[0].get("y", 0)) if child_off else 0.0
            cw = float(child_ext[0].get("cx", 0)) if child_ext else 0.0
            ch = float(child_ext[0].get("cy", 0)) if child_ext else 0.0
            gx, gy = (width / cw if cw else 1.0) * sx, (height / ch if ch else 1.0) * sy
            yield from _placed(shape.shapes, (box[0] - cx * gx, box[1] - cy * gy, gx, gy))
            continue
        yield shape, box


def _is_picture(shape: Any) -> bool:
    from pptx.shapes.picture import Picture

    return isinstance(shape, Picture)  # a placeholder filled with a picture is one too


def _alt(shape: Any) -> str:
    """A picture's alt text: its title and description (python-pptx reads neither)."""
    found = shape._element.xpath("./p:nvPicPr/p:cNvPr")
    return " ".join((found[0].get(key) or "").strip() for key in ("title", "descr") if found).strip()


def pptx_figures(deck: Any, settings: ParseOptions) -> tuple[list[Section], int]:
    """The figures' sections of a python-pptx ``deck``, each on its slide's page under its title; and how many
    pictures were left out as decoration."""
    slide_size = (float(deck.slide_width or 1), float(deck.slide_height or 1))
    page_pt = (slide_size[0] / EMU_PER_POINT, slide_size[1] / EMU_PER_POINT)
    pictures: list[_Picture] = []
    texts: dict[int, list[tuple[Box, str]]] = {}  # each slide's text boxes (its title aside)
    titles: dict[int, str] = {}
    left_out = 0
    for number, slide in enumerate(deck.slides, start=1):
        title_shape = slide.shapes.title
        title_id = title_shape.shape_id if title_shape is not None else None
        titles[number] = (
            title_shape.text_frame.text.strip() if title_shape is not None and title_shape.has_text_frame else ""
        )
        texts[number] = []
        for shape, box in _placed(slide.shapes):
            if _is_picture(shape):
                width, height = (box[2] - box[0]) / EMU_PER_POINT, (box[3] - box[1]) / EMU_PER_POINT
                if width <= 0 or height <= 0 or decorative((0, 0, width, height), page_pt):
                    left_out += 1
                    continue
                try:
                    blob = shape.image.blob
                except Exception:  # a linked picture, or one whose part is missing: nothing to read or show
                    continue
                pictures.append(_Picture(number, box, blob, _alt(shape)))
            elif (
                shape.shape_id != title_id and getattr(shape, "has_text_frame", False) and shape.text_frame.text.strip()
            ):
                texts[number].append((box, shape.text_frame.text.strip()))
    slides_of = Counter(digest for digest, _slide in {(hashlib.sha256(p.blob).digest(), p.slide) for p in pictures})
    kept = [p for p in pictures if slides_of[hashlib.sha256(p.blob).digest()] < REPEATED_PAGES]
    left_out += len(pictures) - len(kept)
    sections = []
    for done, picture in enumerate(kept):
        caption = _caption(picture.box, texts[picture.slide])
        inside = ""
        if settings.ocr and done < MAX_OCR_FIGURES:
            report("ocr", done / len(kept), f"OCR figure {done + 1} of {len(kept)}", done, len(kept))
            inside = read_picture(picture.blob, settings)
        around = "\n".join(t for _box, t in texts[picture.slide] if t != caption)[: 2 * AROUND_CHARS]
        text = "\n\n".join(part for part in (caption, picture.alt, inside[:INSIDE_CHARS], around) if part)
        if not text.strip():
            left_out += 1
            continue
        x0, y0, x1, y1 = picture.box
        width, height = slide_size
        place = Figure(x0 / width, y0 / height, x1 / width, y1 / height, caption)
        title = titles[picture.slide] or f"Slide {picture.slide}"
        sections.append(Section(text, page=picture.slide, heading=title, figure=place))
    return sections, left_out


def _caption(box: Box, texts: list[tuple[Box, str]]) -> str:
    """The caption of a picture at ``box``: the caption-like text box nearest under it, else nearest over it."""
    under = [(near[1] - box[3], text) for near, text in texts if is_caption(text) and near[1] >= box[3] - 1]
    over = [(box[1] - near[3], text) for near, text in texts if is_caption(text) and near[3] <= box[1] + 1]
    for found in (under, over):
        if found:
            return min(found)[1]
    return ""


def picture_at(path: Path, slide: int, figure: Figure) -> bytes:
    """The picture file (its bytes as embedded) at ``figure``'s box on slide ``slide`` of the deck at ``path``: the
    picture whose box is nearest it. Raises ``ValueError`` when the slide holds no picture."""
    from pptx import Presentation

    deck = Presentation(str(path))
    if not 1 <= slide <= len(deck.slides):
        raise ValueError(f"slide {slide} is not in this deck ({len(deck.slides)} slides)")
    width, height = float(deck.slide_width or 1), float(deck.slide_height or 1)
    wanted = (figure.x0 * width, figure.y0 * height, figure.x1 * width, figure.y1 * height)
    found = [
        (sum(abs(a - b) for a, b in zip(box, wanted, strict=True)), shape)
        for shape, box in _placed(deck.slides[slide - 1].shapes)
        if _is_picture(shape)
    ]
    if not found:
        raise ValueError(f"slide {slide} holds no picture")
    return bytes(min(found, key=lambda f: f[0])[1].image.blob)
