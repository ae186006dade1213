"""An EPUB's figures as passages of their own, as a Word file's are (``ragapp.ingest.parsers.docx_figures``): each
``<img>`` a chapter shows becomes a section holding its caption (its ``<figure>``'s ``<figcaption>``, else the
paragraph just under it, else just over it, that starts like a caption: "Figure 3: …"), its alt text and title,
the words inside it (OCR) and the paragraphs around it, under the heading it follows, on its chapter's page.

A book has no pages to crop from: the ``Figure`` box is the whole picture, and its ``part`` names the picture's
file inside the EPUB ("OEBPS/images/plot.png"), by which it is found again to be shown
(``ragapp.ingest.page_images.render_zip_figure``). The chapters are read as a stream (``html_text.stream_html``:
the same elements shown, hidden and framing ones not), so a figure costs no tree of the chapter.

Left out, by the rules the other formats follow: decoration by size and shape (``decorative``, on the size the
``<img>`` asks for, else the picture's own size in CSS pixels, a book having no page) and by repetition (the same
picture file in ``REPEATED_PAGES`` chapters or more: an ornament, a publisher's logo); a picture that is not in the
book or will not open (``pictures.PictureError``), counted apart; a remote or ``data:`` picture, which is not a
file of the book. Written here: no library pairs an EPUB's pictures with their captions.
"""

from __future__ import annotations

import logging
import posixpath
import re
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ragapp.core.types import Figure, Section
from ragapp.ingest.parse_context import ParseOptions, report
from ragapp.ingest.parsers.docx_figures import FiguresFound, caption_at
from ragapp.ingest.parsers.html_text import _BLOCKS, _HEADINGS, stream_html
from ragapp.ingest.parsers.pdf_figures import AROUND_CHARS, INSIDE_CHARS, MAX_OCR_FIGURES, REPEATED_PAGES, decorative
from ragapp.ingest.parsers.pictures import PictureError, opened_picture, part_bytes, picture_words

log = logging.getLogger(__name__)

PT_PER_CSS_PX = 0.75  # CSS's pixel is 1/96 inch, a point 1/72
_LENGTH = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:px)?\s*$")  # "300", "300px"; "50%" or "20em" say no size


@dataclass
class _Picture:
    chapter: int
    part: str  # its file inside the EPUB
    alt: str
    size_pt: tuple[float, float] | None  # as the <img> asks for it, when it says
    heading: str | None
    caption: str = ""
    around: str = ""


@dataclass
class _Figure:
    """An open ``<figure>``: its pictures, waiting for its caption (a ``<figcaption>`` may come after them)."""

    pictures: list[_Picture] = field(default_factory=list)
    caption: list[str] = field(default_factory=list)


class _Chapter:
    """A ``stream_html`` sink that keeps a chapter's paragraphs and where its pictures are among them."""

    def __init__(self, number: int, member: str) -> None:
        self.number, self.member = number, member
        self.paragraphs: list[str] = []
        self.is_caption: list[bool] = []  # a <figcaption>'s paragraph: its figure's, not text around another
        self.pictures: list[tuple[_Picture, int, _Figure | None]] = []
        self.skipped = 0  # pictures outside the book (remote, data:)
        self._buffer: list[str] = []
        self._heading: str | None = None
        self._in_heading: list[str] | None = None
        self._figures: list[_Figure] = []
        self._in_caption = 0
        self._waiting = False  # a picture is in the paragraph being read: it is kept even without words

    def start(self, name: str) -> None:
        self._element(name, opening=True)

    def end(self, name: str) -> None:
        self._element(name, opening=False)

    def text(self, data: str) -> None:
        (self._in_heading if self._in_heading is not None else self._buffer).append(data)

    def table(self, markdown: str) -> None:  # pragma: no cover - no table stage before this sink
        self._buffer.append(markdown)

    def _element(self, name: str, opening: bool) -> None:
        if name in _HEADINGS:
            self._flush()
            if opening:
                self._in_heading = []
            elif self._in_heading is not None:
                self._heading = " ".join("".join(self._in_heading).split()) or self._heading
                self._in_heading = None
        elif name in _BLOCKS or name == "br":
            self._flush()
        if name == "figure":
            if opening:
                self._figures.append(_Figure())
            elif self._figures:
                done = self._figures.pop()
                caption = " ".join(" ".join(done.caption).split())
                for picture in done.pictures:
                    picture.caption = caption
        elif name == "figcaption":
            self._in_caption += 1 if opening else -1 if self._in_caption else 0

    def _flush(self) -> None:
        text = " ".join("".join(self._buffer).split())
        self._buffer.clear()
        if text or self._waiting:
            self._waiting = False
            self.paragraphs.append(text)
            self.is_caption.append(bool(self._in_caption and self._figures))
            if self._in_caption and self._figures and text:
                self._figures[-1].caption.append(text)

    def picture(self, attrs: dict[str, str | None]) -> None:
        source = (attrs.get("src") or "").strip()
        split = urlsplit(source)
        if not source or split.scheme or split.netloc:  # remote, or data: — not a file of this book
            self.skipped += bool(source)
            return
        part = posixpath.normpath(posixpath.join(posixpath.dirname(self.member), unquote(split.path)))
        alt = " ".join(" ".join(v.split()) for key in ("alt", "title") if (v := attrs.get(key) or "").strip())
        sizes = [_LENGTH.match(attrs.get(key) or "") for key in ("width", "height")]
        size = (
            (float(sizes[0].group(1)) * PT_PER_CSS_PX, float(sizes[1].group(1)) * PT_PER_CSS_PX)
            if sizes[0] and sizes[1]
            else None
        )
        found = _Picture(self.number, part, alt, size, self._heading)
        at = len(self.paragraphs)  # the paragraph being read, once it is flushed
        figure = self._figures[-1] if self._figures else None
        if figure is not None:
            figure.pictures.append(found)
        self.pictures.append((found, at, figure))
        self._waiting = True

    def finish(self) -> list[_Picture]:
        """The chapter's pictures, each with its caption and the text around it."""
        self._flush()
        texts = [t if not c else "" for t, c in zip(self.paragraphs, self.is_caption, strict=True)]
        found = []
        for picture, at, figure in self.pictures:
            near: int | None = None
            if figure is None or not picture.caption:
                near = caption_at(at, texts, [""] * len(texts))
                picture.caption = texts[near] if near is not None else picture.caption
            used = {at, near}
            before = next((texts[i] for i in range(at - 1, -1, -1) if texts[i] and i not in used), "")
            after = next((texts[i] for i in range(at + 1, len(texts)) if texts[i] and i not in used), "")
            picture.around = "\n".join(p for p in (before[-AROUND_CHARS:], after[:AROUND_CHARS]) if p)
            found.append(picture)
        return found


class EpubFigures:
    """A book's figures, gathered chapter by chapter as they are read (``read``), then made sections (``finish``)."""

    def __init__(self, settings: ParseOptions) -> None:
        self.settings = settings
        self._pictures: list[_Picture] = []
        self._outside = 0

    def read(self, number: int, member: str, markup: str) -> None:
        """Gather the pictures of chapter ``number``, the book's file ``member``, whose text is ``markup``."""
        if "<img" not in markup.lower():  # most chapters: no second reading
            return
        chapter = _Chapter(number, member)
        stream_html(chapter, markup, chapter.picture)
        self._pictures += chapter.finish()
        self._outside += chapter.skipped

    def finish(self, path: Path) -> FiguresFound:
        """The figures' sections, the pictures read from the EPUB at ``path``."""
        if self._outside:
            log.info("%d pictures of %s are not in the book (remote or data:)", self._outside, path.name)
        chapters_of = Counter(part for part, _chapter in {(p.part, p.chapter) for p in self._pictures})
        repeated = [p for p in self._pictures if chapters_of[p.part] >= REPEATED_PAGES]
        # A picture file shown again is the same figure: kept once, where it is first shown. So a book makes at
        # most one figure (and one decoding) per picture file it holds, however many <img> name it.
        kept: dict[str, _Picture] = {}
        for picture in self._pictures:
            if chapters_of[picture.part] < REPEATED_PAGES:
                kept.setdefault(picture.part, picture)
        decoration, broken = len(repeated), 0
        sections: list[Section] = []
        with zipfile.ZipFile(path) as book:
            for picture in kept.values():
                found = self._section(book, picture, len(sections), len(kept))
                if isinstance(found, Section):
                    sections.append(found)
                elif found == "broken":
                    broken += 1
                else:
                    decoration += 1
        return FiguresFound(sections, decoration, broken)

    def _section(self, book: zipfile.ZipFile, picture: _Picture, done: int, of: int) -> Section | str:
        """A picture's section (``done`` figures made so far, of ``of`` at most); else why it is left out:
        "broken" or "decoration"."""
        if picture.size_pt is not None and _decorative(picture.size_pt):
            return "decoration"
        try:
            image = opened_picture(part_bytes(book, picture.part))
        except PictureError as exc:  # its figure is left out; the chapter's text is kept
            log.info("an EPUB picture left out: %s", exc)
            return "broken"
        if picture.size_pt is None and _decorative((image.width * PT_PER_CSS_PX, image.height * PT_PER_CSS_PX)):
            return "decoration"
        inside = ""
        if self.settings.ocr and done < MAX_OCR_FIGURES:
            report("ocr", done / of, f"OCR figure {done + 1} of {of}", done, of)
            inside = picture_words(image, self.settings)
        text = "\n\n".join(p for p in (picture.caption, picture.alt, inside[:INSIDE_CHARS], picture.around) if p)
        if not text.strip():  # nothing to find it by
            return "decoration"
        place = Figure(0.0, 0.0, 1.0, 1.0, picture.caption, part=picture.part)
        return Section(text, page=picture.chapter, heading=picture.heading, figure=place)


def _decorative(size_pt: tuple[float, float]) -> bool:
    """The rule of size and shape, on a picture's size; a book has no page, so none is covered."""
    width, height = size_pt
    return width <= 0 or height <= 0 or decorative((0, 0, width, height), (1e6, 1e6))
