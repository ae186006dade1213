"""EPUB: the book's chapters in reading order (the package's spine), each read like an HTML page (headings,
paragraphs, tables as Markdown). An EPUB is a zip of XHTML files; no extra library is needed."""

from __future__ import annotations

import posixpath
import zipfile
from pathlib import Path, PurePosixPath

from ragapp.core.errors import IngestError
from ragapp.core.types import ParsedDocument, ParseReport, Section
from ragapp.ingest.parsers.base import PARSERS, check_zip, decode_text
from ragapp.ingest.parsers.text import html_sections, navigation_note

MAX_CHAPTER_MB = 20  # one chapter larger than this unpacked is skipped (and said)


@PARSERS.register(".epub")
def parse_epub(path: Path, name: str) -> ParsedDocument:
    from bs4 import BeautifulSoup

    check_zip(path, name)
    with zipfile.ZipFile(path) as book:
        try:
            container = BeautifulSoup(book.read("META-INF/container.xml"), "html.parser")
            rootfile = container.find("rootfile")
            opf_path = str(rootfile["full-path"]) if rootfile is not None else ""
            package = BeautifulSoup(book.read(opf_path), "html.parser")
        except (KeyError, TypeError):
            raise IngestError(f"{name}: this EPUB has no readable package file (META-INF/container.xml).") from None
        base = str(PurePosixPath(opf_path).parent)
        items = {
            str(item.get("id")): posixpath.normpath(posixpath.join(base, str(item.get("href"))))
            for item in package.find_all("item")
            if "html" in str(item.get("media-type", ""))
        }
        spine = [items[str(ref.get("idref"))] for ref in package.find_all("itemref") if str(ref.get("idref")) in items]
        sections: list[Section] = []
        tables = navigation = 0
        for number, member in enumerate(spine, start=1):
            try:
                info = book.getinfo(member)
            except KeyError:
                continue  # listed but absent: a broken book still gives what it has
            if info.file_size > MAX_CHAPTER_MB * 1024 * 1024:
                continue
            chapter = html_sections(decode_text(book.read(member), name))
            tables += chapter.tables
            navigation += chapter.navigation
            sections += [Section(s.text, number, s.heading, has_table=s.has_table) for s in chapter.sections]
    report = ParseReport(
        pages_with_text=len({s.page for s in sections}), tables=tables, left_out=navigation_note(navigation)
    )
    return ParsedDocument(name, "epub", tuple(sections), len(spine), report)
