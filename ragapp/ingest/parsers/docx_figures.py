"""A Word file's figures as passages of their own, as a PDF's are (``ragapp.ingest.parsers.pdf_figures``): each
picture in the body's paragraphs becomes a section holding its caption (the paragraph under it, else over it, that
is styled "Caption" or starts like one), its alt text, the words inside it (OCR) and the paragraphs around it.

A Word file has no pages: the figure's ``Figure`` box is the whole picture (0, 0, 1, 1), its chunk has no page, and
its ``part`` names the picture's file inside the .docx ("word/media/image1.png"), by which it is found again to be
shown (``ragapp.ingest.page_images.render_zip_figure``). A picture that will not open (corrupt, an EMF) is left
out, counted apart (``ragapp.ingest.parsers.pictures``). Decoration is left out by the PDF's rule of size and shape
(``decorative``, on the picture's size as placed in the document) and of repetition (the same picture placed
``REPEATED_PAGES`` times or more: a letterhead's logo).
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

from ragapp.core.types import Figure, ParseReport, Said, Section
from ragapp.ingest.parse_context import ParseOptions, report
from ragapp.ingest.parsers.pdf_figures import (
    AROUND_CHARS,
    INSIDE_CHARS,
    MAX_OCR_FIGURES,
    REPEATED_PAGES,
    decorative,
    is_caption,
)
from ragapp.ingest.parsers.pictures import PictureError, opened_picture, picture_words

log = logging.getLogger(__name__)

EMU_PER_POINT = 12700


@dataclass
class _Picture:
    blob: bytes
    part: str  # its file inside the .docx, without the leading "/"
    alt: str
    index: int  # the paragraph it is in
    heading: str | None


class StyleNames:
    """A paragraph's style name, each style looked up once by its id. python-docx finds a paragraph's style by
    scanning every style of the file, each time: quadratic in effect (20,000 paragraphs read 28 times slower)."""

    def __init__(self) -> None:
        self._names: dict[str | None, str] = {}

    def __call__(self, paragraph: Any) -> str:
        style_id = paragraph._p.style
        if style_id not in self._names:
            self._names[style_id] = (paragraph.style.name if paragraph.style is not None else "") or ""
        return self._names[style_id]


@dataclass
class FiguresFound:
    """A document's figures' sections, and how many pictures were left out as decoration and as broken."""

    sections: list[Section]
    decoration: int = 0
    broken: int = 0

    def noted(self, report: ParseReport) -> ParseReport:
        """``report`` with the figures counted and what was left out said."""
        said = [Said("left_out.decoration", {"count": self.decoration})] if self.decoration else []
        said += [Said("left_out.broken_pictures", {"count": self.broken})] if self.broken else []
        return replace(report, figures=len(self.sections)).leaving_out(*said)


def docx_figures(paragraphs: list[Any], headings: list[str | None], settings: ParseOptions) -> FiguresFound:
    """The figures' sections of a Word body's ``paragraphs`` (python-docx), each under ``headings[i]``, the
    heading its paragraph is under."""
    pictures: list[_Picture] = []
    left_out = 0
    for index, paragraph in enumerate(paragraphs):
        for drawing in paragraph._p.xpath(".//w:drawing"):
            extent = drawing.xpath(".//wp:extent")
            blips = drawing.xpath(".//a:blip/@r:embed")
            if not extent or not blips:
                continue
            width = int(extent[0].get("cx", "0")) / EMU_PER_POINT
            height = int(extent[0].get("cy", "0")) / EMU_PER_POINT
            if width <= 0 or height <= 0 or decorative((0, 0, width, height), (1e6, 1e6)):
                left_out += 1
                continue
            part = paragraph.part.related_parts.get(blips[0])
            if part is None:
                continue
            properties = drawing.xpath(".//wp:docPr")
            alt = " ".join((properties[0].get(key) or "").strip() for key in ("title", "descr") if properties).strip()
            pictures.append(_Picture(part.blob, str(part.partname).lstrip("/"), alt, index, headings[index]))
    seen = Counter(hashlib.sha256(p.blob).digest() for p in pictures)
    kept = [p for p in pictures if seen[hashlib.sha256(p.blob).digest()] < REPEATED_PAGES]
    left_out += len(pictures) - len(kept)
    if not kept:
        return FiguresFound([], left_out)
    texts = [paragraph.text.strip() for paragraph in paragraphs]
    style_of = StyleNames()
    styles = [style_of(paragraph) for paragraph in paragraphs]
    sections = []
    broken = 0
    for done, picture in enumerate(kept):
        try:
            image = opened_picture(picture.blob)
        except PictureError as exc:  # nothing to show nor read: left out, said; the text around it is kept
            log.info("a Word picture left out: %s", exc)
            broken += 1
            continue
        near = caption_at(picture.index, texts, styles)
        caption = texts[near] if near is not None else ""
        used = {picture.index, near}
        before = next((texts[i] for i in range(picture.index - 1, -1, -1) if texts[i] and i not in used), "")
        after = next((texts[i] for i in range(picture.index + 1, len(texts)) if texts[i] and i not in used), "")
        inside = ""
        if settings.ocr and done < MAX_OCR_FIGURES:
            report("ocr", done / len(kept), f"OCR figure {done + 1} of {len(kept)}", done, len(kept))
            inside = picture_words(image, settings)
        around = "\n".join(part for part in (before[-AROUND_CHARS:], after[:AROUND_CHARS]) if part)
        text = "\n\n".join(part for part in (caption, picture.alt, inside[:INSIDE_CHARS], around) if part)
        if not text.strip():
            left_out += 1
            continue
        place = Figure(0.0, 0.0, 1.0, 1.0, caption, part=picture.part)
        sections.append(Section(text, heading=picture.heading, figure=place))
    return FiguresFound(sections, left_out, broken)


def caption_at(index: int, texts: list[str], styles: list[str]) -> int | None:
    """The caption's paragraph: the first one with text under the picture's, else the last one over it, when it
    is styled as a caption or starts like one."""
    for step in (1, -1):
        at = index + step
        while 0 <= at < len(texts) and not texts[at]:
            at += step
        if 0 <= at < len(texts) and (styles[at].lower() == "caption" or is_caption(texts[at])):
            return at
    return None
