"""PDF: the text layer page by page (pypdf); ruled tables found by pdfplumber become Markdown tables in their
place on the page; pages with no text layer (or one of garbage) are rendered (pypdfium2) and read by OCR.

PDFium is not thread-safe, so every use of pypdfium2 holds ``PDFIUM_LOCK`` (two users uploading at once, or an
upload while a citation's page is drawn).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragapp.core.errors import IngestCancelled, IngestError
from ragapp.core.types import OcrBox, ParsedDocument, ParseReport, Said, Section
from ragapp.ingest.parse_context import ParseOptions, options, report
from ragapp.ingest.parsers.base import PARSERS, REFERENCES
from ragapp.ingest.parsers.pdf_figures import read_figures
from ragapp.ingest.parsers.pdfium import PDFIUM_LOCK
from ragapp.ingest.tables import markdown_table

if TYPE_CHECKING:
    from ragapp.models.ocr import OcrLine

log = logging.getLogger(__name__)

MIN_TEXT_CHARS = 20  # a page with fewer characters of text than this is taken for a scan
_GARBAGE = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\ufffd\ue000-\uf8ff]")
MAX_RENDER_SIDE = 4000  # pixels
_GARBAGE_SHARE = 0.3  # a text layer with more unreadable characters than this is read by OCR instead


def needs_ocr(text: str) -> bool:
    """True for a page whose text layer is (nearly) empty or mostly characters no font maps to text."""
    visible = "".join(text.split())
    if len(visible) < MIN_TEXT_CHARS:
        return True
    return len(_GARBAGE.findall(visible)) > _GARBAGE_SHARE * len(visible)


@PARSERS.register(".pdf")
def parse_pdf(path: Path, name: str) -> ParsedDocument:
    from pypdf import PdfReader

    settings = options()
    reader = PdfReader(path)
    if reader.is_encrypted:
        raise IngestError(said=Said("ingest.pdf_password", {"name": name}))
    count = len(reader.pages)
    texts: dict[int, str] = {}
    for number, page in enumerate(reader.pages, start=1):
        texts[number] = page.extract_text() or ""
        if number % 5 == 0 or number == count:  # a report costs nothing next to a page's text
            report("parse", 0.3 * number / count, f"reading page {number}/{count}", number, count)
    tables = _pages_with_tables(path, count) if settings.pdf_tables else {}
    scans = [n for n in range(1, count + 1) if needs_ocr(texts[n])]
    boxes: list[OcrBox] = []
    read = _ocr_pages(path, scans[: settings.ocr_max_pages], settings, count, boxes) if settings.ocr else {}
    # A scanned page is one picture, read whole by OCR: figures are looked for on the pages with a text layer.
    with_text = [n for n in range(1, count + 1) if n not in read]
    figures, decoration = read_figures(path, with_text, settings) if settings.figures else ({}, 0)
    sections: list[Section] = []
    empty: list[int] = []
    outline: Outline | NumberedHeadings = Outline(reader)
    if not outline:  # no bookmarks: the text's own numbered headings ("2.1 Lexical conventions"), if it has some
        outline = NumberedHeadings()
    for number in range(1, count + 1):
        heading = outline.heading()  # where the page begins
        if number in read:
            text, confidence = read[number]
            page_sections = [Section(text=text, page=number, ocr_confidence=confidence, heading=heading)]
            outline.turn(number, text)  # kept whole; the headings on it move the path on
        elif number in tables:
            page_sections = [Section(text=tables[number][0], page=number, has_table=True, heading=heading)]
            outline.turn(number, texts[number])
        else:  # split where the outline's sections begin on the page
            page_sections = [
                Section(text=part, page=number, heading=h) for h, part in outline.turn(number, texts[number])
            ]
        kept = [section for section in page_sections if section.text.strip()]
        if not kept:
            empty.append(number)
        # after the page's text, under the heading its end is under
        under = kept[-1].heading if kept else heading
        kept += [replace(figure, heading=under) for figure in figures.get(number, [])]
        sections.extend(kept)
    scores = [confidence for text, confidence in read.values() if text.strip()]
    quality = ParseReport(
        pages_with_text=count - len(empty),
        ocr_pages=tuple(sorted(n for n, (text, _c) in read.items() if text.strip())),
        empty_pages=tuple(empty),
        tables=sum(found for _text, found in tables.values()),
        ocr_confidence=round(sum(scores) / len(scores), 4) if scores else None,
        figures=sum(len(on_page) for on_page in figures.values()),
    )
    if decoration:
        quality = quality.leaving_out(Said("left_out.decoration", {"count": decoration}))
    return ParsedDocument(name, "pdf", tuple(sections), count, quality, tuple(boxes))


MAX_OUTLINE_ENTRIES = 5_000  # a larger (or looping) outline is read this far
MAX_OUTLINE_DEPTH = 8
MIN_SECTION_CHARS = 40  # non-space characters: a shorter part of a page joins the next part


class Outline:
    """The PDF's outline (bookmarks) as section headings: page by page, ``turn`` splits a page's text where a
    section the outline places on it begins (its title found as a line of its own, with the number the text
    gives it: "2.1 Basic types") and says each part's heading path ("2 Objects > 2.1 Basic types"). A title
    not found on its page starts at the page's top. No outline, or an unreadable one: no headings."""

    def __init__(self, reader: Any) -> None:
        self._by_page: dict[int, list[tuple[int, str]]] = {}
        self._path: list[str] = []
        try:
            self._walk(reader, reader.outline, 0, [0])
        except Exception as exc:  # a broken outline costs the headings, never the document
            log.info("PDF outline not read: %r", exc)
            self._by_page = {}

    def _walk(self, reader: Any, items: Any, depth: int, seen: list[int]) -> None:
        for item in items:
            if seen[0] >= MAX_OUTLINE_ENTRIES or depth > MAX_OUTLINE_DEPTH:
                return
            if isinstance(item, list):
                self._walk(reader, item, depth + 1, seen)
                continue
            seen[0] += 1
            title = " ".join(str(getattr(item, "title", "") or "").split())[:200]
            page = reader.get_destination_page_number(item)
            if title and page is not None and page >= 0:
                self._by_page.setdefault(page + 1, []).append((depth, title))

    def __bool__(self) -> bool:
        return bool(self._by_page)

    def heading(self) -> str | None:
        return " > ".join(self._path) or None

    def turn(self, page: int, text: str) -> list[tuple[str | None, str]]:
        """``text`` of ``page`` in parts, each with its heading path; the path moves on to the page's end."""
        parts: list[tuple[str | None, str]] = []
        at = 0
        for depth, title in self._by_page.get(page, []):
            found = _title_line(title, text, at)
            if found is not None and found.start() > at:
                parts.append((self.heading(), text[at : found.start()]))
                at = found.start()
            del self._path[depth:]
            self._path.append(found.group(1).strip() if found is not None else title)
        parts.append((self.heading(), text[at:]))
        return _short_parts_joined(parts)


# A line that may be a numbered heading: "2", "2.1" or "2.1.3" (a dot after it or not), then a title that starts
# with a capital or a Chinese character, ends without a page number (a table of contents, a running header) and
# is short.
_NUMBERED = re.compile(r"(?m)^[ \t]*((\d{1,2}(?:\.\d{1,2}){0,3})\.?[ \t]+([A-Z\u4e00-\u9fff][^\n]{0,78}?))[ \t]*$")
MAX_TITLE_WORDS = 12


class NumberedHeadings:
    """Section headings from the text's own numbering, for a PDF without an outline: a line "2.1 Lexical
    conventions" starts a section when its number follows the last one taken (the next sibling, the first
    child, or the next section of a level above: 2.1 after 2, 2.2 after 2.1, 3 after 2.2.4); the first taken is
    a 1 (or 1.1). Anything else that looks like one (a numbered list item, a figure's axis, a table of contents
    line ending with its page) is text. Headings numbered in words ("第一章", "一、") are not read."""

    def __init__(self) -> None:
        self._numbers: list[int] = []
        self._path: list[str] = []

    def heading(self) -> str | None:
        return " > ".join(self._path) or None

    def turn(self, page: int, text: str) -> list[tuple[str | None, str]]:
        """``text`` of ``page`` in parts, each with its heading path; the path moves on to the page's end."""
        parts: list[tuple[str | None, str]] = []
        at = 0
        for found in _NUMBERED.finditer(text):
            numbers = [int(n) for n in found.group(2).split(".")]
            title = found.group(3).strip()
            if not self._follows(numbers) or not _title_like(title):
                continue
            if found.start() > at:
                parts.append((self.heading(), text[at : found.start()]))
                at = found.start()
            self._numbers = numbers
            del self._path[len(numbers) - 1 :]
            self._path.append(" ".join(found.group(1).split()))
        parts.append((self.heading(), text[at:]))
        return _short_parts_joined(parts)

    def _follows(self, numbers: list[int]) -> bool:
        last = self._numbers
        if not last:
            return numbers in ([1], [1, 1])
        depth = len(numbers)
        if depth == len(last) + 1:  # the first child
            return numbers[:-1] == last and numbers[-1] == 1
        if depth <= len(last):  # the next at that level
            return numbers[:-1] == last[: depth - 1] and numbers[-1] == last[depth - 1] + 1
        return False


def _title_like(title: str) -> bool:
    words = title.split()
    return len(words) <= MAX_TITLE_WORDS and not title.endswith((",", ";", ":")) and not words[-1].isdigit()


def _short_parts_joined(parts: list[tuple[str | None, str]]) -> list[tuple[str | None, str]]:
    """A part too short to stand alone (a title line with nothing under it before the next one, a running
    header above the page's first section) goes with the part after it, under that one's heading."""
    out: list[tuple[str | None, str]] = []
    carried = ""
    for index, (heading, text) in enumerate(parts):
        if index < len(parts) - 1 and len("".join(text.split())) < MIN_SECTION_CHARS:
            carried += text
            continue
        out.append((heading, carried + text))
        carried = ""
    return out


def _title_line(title: str, text: str, start: int) -> re.Match[str] | None:
    """The first line of ``text`` from ``start`` holding ``title`` alone after a section number ("2.1.6 NULL"),
    else holding it alone ("NULL" written as a line of code comes second)."""
    if not text:
        return None
    words = r"\s+".join(re.escape(word) for word in title.split())
    numbered = re.compile(rf"(?m)^[ \t]*(\d+(?:\.\d+)*\.?[ \t]+{words})[ \t]*$").search(text, start)
    return numbered or re.compile(rf"(?m)^[ \t]*({words})[ \t]*$").search(text, start)


TABLE_KEEPS = 0.8  # a table whose cells hold less of its band's letters than this is read as text instead


def _pages_with_tables(path: Path, count: int) -> dict[int, tuple[str, int]]:
    """Page number -> (the page's text with its tables as Markdown in their place, how many), for the pages
    where pdfplumber finds a ruled table of two columns or more. A page it cannot read keeps its text layer."""
    import pdfplumber

    found: dict[int, tuple[str, int]] = {}
    try:
        with pdfplumber.open(path) as pdf:
            for number, page in enumerate(pdf.pages, start=1):
                try:
                    text, tables = _page_with_tables(page)
                except Exception as exc:  # one odd page must not cost the document its other tables
                    log.info("table detection failed on page %d of %s: %r", number, path.name, exc)
                    text, tables = "", 0
                finally:
                    page.close()  # pdfplumber caches every page's objects otherwise
                if tables:
                    found[number] = (text, tables)
                # every page: finding a page's tables takes a fair part of a second
                said = f"looking for tables: page {number}/{count}"
                report("tables", 0.3 + 0.2 * number / count, said, number, count)
    except IngestCancelled:  # the upload was stopped: not a table detection gone wrong
        raise
    except Exception as exc:
        log.info("table detection skipped for %s: %r", path.name, exc)
    return found


def _page_with_tables(page: Any) -> tuple[str, int]:
    tables = []
    for table in page.find_tables():
        rows = table.extract()
        if max((sum(1 for cell in row if cell) for row in rows), default=0) >= 2:  # a framed box is no table
            markdown = markdown_table(rows)
            if markdown:
                tables.append((table.bbox, markdown))
    if not tables:
        return "", 0
    tables.sort(key=lambda t: t[0][1])
    parts: list[str] = []
    top = 0.0
    kept = 0
    for (_x0, table_top, _x1, table_bottom), markdown in tables:
        if table_top > top:
            parts.append(_text(page, top, table_top))
        # A table ruled only in part (the Debian Reference rules its numeric columns, not the names beside them)
        # yields the ruled cells alone: its band of the page is then kept as text, every word in it.
        band = _text(page, max(top, table_top), table_bottom)
        if _letters(markdown) >= TABLE_KEEPS * _letters(band):
            parts.append(markdown)
            kept += 1
        else:
            parts.append(band)
        top = max(top, table_bottom)
    if top < page.height:
        parts.append(_text(page, top, page.height))
    return "\n\n".join(part.strip() for part in parts if part.strip()), kept


def _text(page: Any, top: float, bottom: float) -> str:
    """The text of a band of ``page``, words apart: pdfplumber's default tolerance (3 pt) joins the words of
    tightly set fonts ("Donoteraseoralterfiles"), 1.5 pt keeps them."""
    return str(page.crop((0, top, page.width, bottom)).extract_text(x_tolerance=1.5) or "") if bottom > top else ""


def _letters(text: str) -> int:
    return sum(ch.isalnum() for ch in text)


def page_boxes(page: int, lines: Sequence[OcrLine], width: int, height: int) -> list[OcrBox]:
    """OCR lines in pixels of a ``width`` × ``height`` image -> boxes in fractions of the page."""
    return [
        OcrBox(page, line.text, line.box[0] / width, line.box[1] / height, line.box[2] / width, line.box[3] / height)
        for line in lines
    ]


def _ocr_pages(
    path: Path, pages: list[int], settings: ParseOptions, count: int, boxes: list[OcrBox]
) -> dict[int, tuple[str, float]]:
    """Page number -> (text read by OCR, its confidence) for ``pages``; where each line was, into ``boxes``."""
    if not pages:
        return {}
    import pypdfium2 as pdfium

    from ragapp.models.ocr import read_image

    read: dict[int, tuple[str, float]] = {}
    with PDFIUM_LOCK:
        document = pdfium.PdfDocument(str(path))  # opened once; each call into PDFium holds the lock
    try:
        for done, number in enumerate(pages):
            said = f"OCR page {number}/{count} ({done + 1} of {len(pages)} scanned pages)"
            report("ocr", done / len(pages), said, done, len(pages))
            with PDFIUM_LOCK:
                page = document[number - 1]
                # A blank page has nothing to read: told by a thumbnail without ink (milliseconds), not by OCR
                # (a second or more). A PDF of thousands of blank pages took minutes.
                if blank(page):
                    page.close()
                    continue
                # a poster-sized page stays bounded
                scale = min(settings.ocr_dpi / 72, MAX_RENDER_SIDE / max(page.get_size()))
                image = np.asarray(page.render(scale=scale).to_pil().convert("RGB"))
                page.close()
            # OCR outside the lock: another upload's pages may render meanwhile
            result = read_image(image, latin=settings.ocr_latin, threads=settings.ocr_threads)
            read[number] = (result.text, result.confidence)
            boxes.extend(page_boxes(number, result.lines, image.shape[1], image.shape[0]))
    finally:
        with PDFIUM_LOCK:
            document.close()
    report("ocr", 1.0, f"OCR done: {len(pages)} scanned pages read", len(pages), len(pages))
    return read


THUMBNAIL_DPI = 36
INK = 230  # a pixel darker than this (of 255) is ink: text at 36 dpi stays darker, a blank page is all 255


def blank(page: Any) -> bool:
    """Whether a PDFium page shows no ink at all, from a thumbnail (the caller holds ``PDFIUM_LOCK``)."""
    scale = min(THUMBNAIL_DPI / 72, 512 / max(page.get_size()))
    thumbnail = np.asarray(page.render(scale=scale, grayscale=True).to_pil().convert("L"))
    return bool(thumbnail.size) and int(thumbnail.min()) > INK


@REFERENCES.register(".pdf")
def pdf_reference(path: Path, report: ParseReport) -> str:
    """The text layer by PDFium (the parser reads it with pypdf), the pages the parser read by OCR aside."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        pages = [pdf[i].get_textpage().get_text_range() for i in range(len(pdf)) if i + 1 not in set(report.ocr_pages)]
    finally:
        pdf.close()
    return "\n".join(pages)
