"""A PDF's figures as passages of their own: each embedded image or drawing (a form XObject: the plots of a manual)
that is a figure becomes a section holding its caption, the words inside it and a little text around it, with
where it is on its page (``Figure``), so that a question about it finds it and its answer cites it; the page
image is cropped to it for the sources panel (``ragapp.ingest.page_images.render_pdf_figure``).

What is left out, as decoration (the rule the docs state, docs/documents.md "Figures"):

- smaller than ``MIN_SIDE_PT`` on either side (an icon, a bullet, a small logo);
- longer than ``MAX_ASPECT`` times its width, or wider than that times its height (a rule, a banner, a border);
- covering ``PAGE_SHARE`` of the page or more (the page itself: a scan, read by OCR, or a whole-page wrapper);
- the same picture at the same place on ``REPEATED_PAGES`` pages or more (a letterhead, a running logo): same box,
  same words inside, same caption, same pixel size.

The caption is the nearest line under the figure (or above it) within ``CAPTION_GAP_PT`` that starts like one
("Figure 3:", "Fig. 2", "图 3", "圖3"), with the lines that follow it closely. The words inside come from the text
layer (a plot's labels); an image with none is read by OCR (``ragapp.models.ocr``, as scans are), at most
``MAX_OCR_FIGURES`` a document. Written here: neither pypdf nor pdfplumber pairs images with captions.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ragapp.core.types import Figure, Section
from ragapp.ingest.parse_context import ParseOptions, report
from ragapp.ingest.parsers.pdfium import PDFIUM_LOCK

log = logging.getLogger(__name__)

MIN_SIDE_PT = 72.0  # one inch; smaller is an icon, a bullet or a logo
MAX_ASPECT = 8.0  # a rule, a banner or a border is longer than this to one
PAGE_SHARE = 0.9  # of the page's area: the page itself, not a figure on it
REPEATED_PAGES = 3  # the same picture at the same place on this many pages is a letterhead or a logo
CAPTION_GAP_PT = 40.0  # a caption starts this close under (or over) its figure
CAPTION_LINES = 4  # a caption's lines at most
AROUND_PT = 60.0  # the bands of the page just over the figure and just under it (its caption aside)...
AROUND_CHARS = 300  # ...this much of each kept with it
INSIDE_CHARS = 1200  # of the words inside it (a plot's labels, a diagram's boxes)
OCR_BELOW_CHARS = 20  # an image with fewer words in the text layer than this is read by OCR
MAX_OCR_FIGURES = 50  # images read by OCR in one document: a photo album must not take an hour
# "Figure 3:", "Fig. 2.1", "FIGURE 4", "图 3", "图3-1", "圖 2", "Abbildung 5": a word for figure, then its number
_CAPTION = re.compile(r"^\s*(?:fig(?:ure|\.)?|abbildung|图|圖)\s*[0-9０-９一二三四五六七八九十IVX]", re.IGNORECASE)

Box = tuple[float, float, float, float]  # left, bottom, right, top in PDF points (origin bottom left)


@dataclass(frozen=True)
class _Line:
    box: Box
    text: str


@dataclass(frozen=True)
class _Found:
    page: int
    box: Box
    is_image: bool
    pixels: tuple[int, int]
    caption: str
    inside: str
    around: str
    page_size: tuple[float, float]

    @property
    def key(self) -> tuple[object, ...]:
        """What a picture repeated on many pages keeps from page to page."""
        return (tuple(round(v / 2) for v in self.box), self.inside, self.caption, self.pixels)


def is_caption(line: str) -> bool:
    """Whether ``line`` starts like a figure's caption ("Figure 3: …", "图 3 …")."""
    return bool(_CAPTION.match(line))


def decorative(box: Box, page_size: tuple[float, float]) -> bool:
    """Whether a picture at ``box`` on a page of ``page_size`` is left out by the rule of size (see the module)."""
    width, height = box[2] - box[0], box[3] - box[1]
    if min(width, height) < MIN_SIDE_PT:
        return True
    if max(width / height, height / width) > MAX_ASPECT:
        return True
    return width * height >= PAGE_SHARE * page_size[0] * page_size[1]


def pdf_figures(
    document: Any, pages: list[int], settings: ParseOptions, lock: Any
) -> tuple[dict[int, list[Section]], int]:
    """Page number -> its figures' sections (heading not set) for ``pages`` of a pypdfium2 ``document``, and how
    many pictures were left out as decoration. ``lock`` is held around every call into PDFium."""
    found: list[_Found] = []
    left_out = 0
    for done, number in enumerate(pages):
        with lock:
            page = document[number - 1]
            try:
                on_page, small = _page_figures(page, number)
            finally:
                page.close()
        found += on_page
        left_out += small
        if done % 10 == 0:
            report("figures", 0.3, f"looking for figures: page {number}/{len(pages)}", done, len(pages))
    seen = Counter(f.key for f in found)
    kept = [f for f in found if seen[f.key] < REPEATED_PAGES]
    left_out += len(found) - len(kept)
    if settings.ocr:
        kept = _read_images(document, kept, settings, lock)
    sections: dict[int, list[Section]] = {}
    for f in kept:
        text = "\n\n".join(part for part in (f.caption, f.inside, f.around) if part)
        if not text.strip():  # nothing to find it by: a picture without a caption, words or text near it
            left_out += 1
            continue
        width, height = f.page_size
        left, bottom, right, top = f.box
        where = Figure(_frac(left / width), _frac(1 - top / height), _frac(right / width), _frac(1 - bottom / height))
        sections.setdefault(f.page, []).append(Section(text, page=f.page, figure=replace(where, caption=f.caption)))
    return sections, left_out


def _frac(value: float) -> float:
    return round(min(1.0, max(0.0, value)), 4)


def _page_figures(page: Any, number: int) -> tuple[list[_Found], int]:
    """The figures of one page (the caller holds the lock), and how many pictures were too small or too thin."""
    import pypdfium2.raw as pdfium_c

    size = page.get_size()
    boxes: list[tuple[Box, bool, tuple[int, int]]] = []
    small = 0
    for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE, pdfium_c.FPDF_PAGEOBJ_FORM], max_depth=0):
        left, bottom, right, top = obj.get_bounds()
        box = (max(0.0, left), max(0.0, bottom), min(size[0], right), min(size[1], top))
        if box[2] <= box[0] or box[3] <= box[1] or decorative(box, size):
            small += 1
            continue
        is_image = obj.type == pdfium_c.FPDF_PAGEOBJ_IMAGE
        pixels = tuple(obj.get_px_size()) if is_image else (0, 0)
        boxes.append((box, is_image, (int(pixels[0]), int(pixels[1]))))
    # A picture inside another one (a photo on a drawn frame) is part of it.
    boxes = [b for b in boxes if not any(o is not b and _inside(b[0], o[0]) for o in boxes)]
    if not boxes:
        return [], small
    lines, textpage = _lines(page)
    out = []
    try:
        for box, is_image, pixels in boxes:
            caption, used = _caption(box, lines)
            inside = " ".join(textpage.get_text_bounded(*box).split())
            # a band over it and one under it (under its caption, when that is under it)
            low = min([box[1], *(line.box[1] for line in used)])
            high = max([box[3], *(line.box[3] for line in used)])
            before = " ".join(ln.text for ln in lines if ln.box[1] >= high - 1 and ln.box[3] <= high + AROUND_PT)
            after = " ".join(ln.text for ln in lines if ln.box[3] <= low + 1 and ln.box[1] >= low - AROUND_PT)
            before, after = before[-AROUND_CHARS:], after[:AROUND_CHARS]
            around = "\n".join(part for part in (before, after) if part)
            out.append(_Found(number, box, is_image, pixels, caption, inside[:INSIDE_CHARS], around, size))
    finally:
        textpage.close()
    return out, small


def _inside(inner: Box, outer: Box, slack: float = 0.0) -> bool:
    return (
        inner[0] >= outer[0] - slack
        and inner[1] >= outer[1] - slack
        and inner[2] <= outer[2] + slack
        and inner[3] <= outer[3] + slack
    )


def _lines(page: Any) -> tuple[list[_Line], Any]:
    """The page's lines (PDFium's text rectangles on one baseline joined), top to bottom, and its text page (the
    caller closes it)."""
    textpage = page.get_textpage()
    rows: list[list[float]] = []
    for box in sorted((textpage.get_rect(i) for i in range(textpage.count_rects())), key=lambda b: -b[3]):
        row = rows[-1] if rows else None
        middle = (box[1] + box[3]) / 2
        if row is not None and row[1] <= middle <= row[3]:  # the same line: a run in another font
            row[0], row[1], row[2], row[3] = min(row[0], box[0]), min(row[1], box[1]), max(row[2], box[2]), row[3]
        else:
            rows.append(list(box))
    lines = []
    for left, bottom, right, top in rows:
        text = " ".join(textpage.get_text_bounded(left, bottom, right, top).split())
        if text:
            lines.append(_Line((left, bottom, right, top), text))
    return lines, textpage


def _beside(line: Box, box: Box) -> bool:
    """Whether a line overlaps the figure's columns (a caption under a figure in the other column does not)."""
    return line[0] < box[2] and line[2] > box[0]


def _caption(box: Box, lines: list[_Line]) -> tuple[str, list[_Line]]:
    """The figure's caption and its lines: the nearest line under it (else over it) starting like a caption."""
    under = [ln for ln in lines if _beside(ln.box, box) and box[1] + 2 >= ln.box[3] >= box[1] - CAPTION_GAP_PT]
    over = [ln for ln in reversed(lines) if _beside(ln.box, box) and box[3] - 2 <= ln.box[1] <= box[3] + CAPTION_GAP_PT]
    for candidates in (under, over):
        first = next((i for i, ln in enumerate(candidates) if is_caption(ln.text)), None)
        if first is None:
            continue
        start = lines.index(candidates[first])
        used = [lines[start]]
        for line in lines[start + 1 : start + CAPTION_LINES]:
            last = used[-1].box
            height = last[3] - last[1]
            if is_caption(line.text) or last[1] - line.box[3] > 0.8 * height or not _beside(line.box, box):
                break
            used.append(line)
        return " ".join(line.text for line in used), used
    return "", []


def _read_images(document: Any, found: list[_Found], settings: ParseOptions, lock: Any) -> list[_Found]:
    """``found``, the images with (almost) no words in the text layer read by OCR, ``MAX_OCR_FIGURES`` at most."""
    from ragapp.models.ocr import read_image

    wanted = [f for f in found if f.is_image and len(f.inside) < OCR_BELOW_CHARS][:MAX_OCR_FIGURES]
    read: dict[int, str] = {}
    for done, figure in enumerate(wanted):
        report("ocr", done / len(wanted), f"OCR figure {done + 1} of {len(wanted)}", done, len(wanted))
        with lock:
            page = document[figure.page - 1]
            try:
                image = np.asarray(_crop(page, figure.box, settings.ocr_dpi).convert("RGB"))
            finally:
                page.close()
        try:  # outside the lock: another upload's pages may render meanwhile
            words = read_image(image, latin=settings.ocr_latin, threads=settings.ocr_threads).text
            read[id(figure)] = " ".join(words.split())
        except Exception as exc:  # one unreadable picture costs its words, never the document
            log.info("OCR of a figure on page %d failed: %r", figure.page, exc)
    return [replace(f, inside=read[id(f)][:INSIDE_CHARS]) if read.get(id(f)) else f for f in found]


MAX_CROP_SIDE = 2000  # pixels


def _crop(page: Any, box: Box, dpi: int) -> Any:
    """A PIL image of ``box`` on ``page`` at ``dpi`` (bounded by ``MAX_CROP_SIDE``); the caller holds the lock."""
    width, height = page.get_size()
    left, bottom, right, top = box
    scale = min(dpi / 72, MAX_CROP_SIDE / max(right - left, top - bottom, 1.0))
    crop = (left, bottom, width - right, height - top)
    return page.render(scale=scale, crop=crop).to_pil()


def read_figures(path: Path, pages: list[int], settings: ParseOptions) -> tuple[dict[int, list[Section]], int]:
    """``pdf_figures`` of the PDF at ``path``, opened here (under ``PDFIUM_LOCK``)."""
    import pypdfium2 as pdfium

    with PDFIUM_LOCK:
        document = pdfium.PdfDocument(str(path))
    try:
        return pdf_figures(document, pages, settings, PDFIUM_LOCK)
    finally:
        with PDFIUM_LOCK:
            document.close()
