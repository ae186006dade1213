"""EPUB: the book's chapters in reading order (the package's spine), each read like an HTML page (headings,
paragraphs, tables as Markdown), and its pictures as figures (``ragapp.ingest.parsers.epub_figures``). An EPUB is
a zip of XHTML files; no extra library is needed."""

from __future__ import annotations

import posixpath
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from ragapp.core.errors import IngestError
from ragapp.core.types import ParsedDocument, ParseReport, Said, Section
from ragapp.ingest.parse_context import options
from ragapp.ingest.parsers.base import PARSERS, REFERENCES, check_zip, decode_text
from ragapp.ingest.parsers.epub_figures import EpubFigures
from ragapp.ingest.parsers.text import apart_notes, html_sections, visible_text

MAX_CHAPTER_MB = 20  # one chapter larger than this unpacked is skipped (and said)


@PARSERS.register(".epub")
def parse_epub(path: Path, name: str) -> ParsedDocument:
    check_zip(path, name)
    sections: list[Section] = []
    tables = chapters = 0
    apart: dict[str, int] = {}
    figures = EpubFigures(options()) if options().figures else None
    for number, member, markup in _chapters(path, name):
        chapters = number
        if markup is None:
            continue
        if figures is not None:
            figures.read(number, member, markup)
        chapter = html_sections(markup)
        tables += chapter.tables
        for kind, n in chapter.apart.items():
            apart[kind] = apart.get(kind, 0) + n
        sections += [Section(s.text, number, s.heading, has_table=s.has_table) for s in chapter.sections]
    report = ParseReport(pages_with_text=len({s.page for s in sections}), tables=tables).leaving_out(
        *apart_notes(apart)
    )
    if figures is not None:
        found = figures.finish(path)
        sections += found.sections
        report = found.noted(report)
    return ParsedDocument(name, "epub", tuple(sections), chapters, report)


def _chapters(path: Path, name: str) -> Iterator[tuple[int, str, str | None]]:
    """The chapters in reading order (the package's spine), numbered from 1, with their file in the book, as
    markup; one listed but absent, or over ``MAX_CHAPTER_MB``, keeps its number and gives None (a broken book
    still gives what it has)."""
    from bs4 import BeautifulSoup

    with zipfile.ZipFile(path) as book:
        try:
            container = BeautifulSoup(book.read("META-INF/container.xml"), "html.parser")
            rootfile = container.find("rootfile")
            opf_path = str(rootfile["full-path"]) if rootfile is not None else ""
            package = BeautifulSoup(book.read(opf_path), "html.parser")
        except (KeyError, TypeError):
            raise IngestError(said=Said("ingest.epub_package", {"name": name})) from None
        base = str(PurePosixPath(opf_path).parent)
        items = {
            str(item.get("id")): posixpath.normpath(posixpath.join(base, str(item.get("href"))))
            for item in package.find_all("item")
            if "html" in str(item.get("media-type", ""))
        }
        spine = [items[str(ref.get("idref"))] for ref in package.find_all("itemref") if str(ref.get("idref")) in items]
        for number, member in enumerate(spine, start=1):
            try:
                info = book.getinfo(member)
            except KeyError:
                yield number, member, None
                continue
            too_big = info.file_size > MAX_CHAPTER_MB * 1024 * 1024
            yield number, member, None if too_big else decode_text(book.read(member), name)


@REFERENCES.register(".epub")
def epub_reference(path: Path, report: ParseReport) -> str:
    """All visible text of every chapter, navigation aside."""
    chapters = (markup for _number, _member, markup in _chapters(path, path.name) if markup is not None)
    return "\n".join(visible_text(markup) for markup in chapters)
