"""Plain text, Markdown and HTML."""

from __future__ import annotations

import re
from pathlib import Path

from ragapp.core.types import ParsedDocument, ParseReport, Said, Section
from ragapp.ingest.parse_context import TextBudgetReached, options
from ragapp.ingest.parsers.base import PARSERS, REFERENCES, decode_text
from ragapp.ingest.parsers.html_text import HtmlText, html_sections, visible_text

__all__ = ["HtmlText", "apart_notes", "html_sections", "markdown_heading", "visible_text"]

_MD_HEADING_START = re.compile(r"(#{1,6})[ \t]+")  # anchored, no backtracking: see ``markdown_heading``
_FENCE = re.compile(r"^\s*(```|~~~)")


def markdown_heading(line: str) -> tuple[int, str] | None:
    """(level, title) of an ATX heading line ("## Title ##"), else None. Written out by hand, in linear time: the
    regular expression it replaces backtracked cubically on a heading with a long run of spaces inside."""
    match = _MD_HEADING_START.match(line)
    if match is None:
        return None
    title = line[match.end() :].strip()
    closed = title.rstrip("#")
    if closed != title and (not closed or closed[-1] in " \t"):  # a closing run of #s, after a space
        title = closed.strip()
    return (len(match.group(1)), title) if title else None


@PARSERS.register(".txt")
def parse_txt(path: Path, name: str) -> ParsedDocument:
    text = decode_text(path.read_bytes(), name)
    return ParsedDocument(name=name, file_type="txt", sections=(Section(text=text),))


@PARSERS.register(".md")
def parse_markdown(path: Path, name: str) -> ParsedDocument:
    """Split at ATX headings (not inside code fences); each section keeps its heading path."""
    text = decode_text(path.read_bytes(), name)
    sections: list[Section] = []
    trail: list[str] = []  # heading path, one entry per level
    buf: list[str] = []
    in_fence = False

    def flush() -> None:
        body = "\n".join(buf).strip()
        if body:
            sections.append(Section(text=body, heading=" > ".join(t for t in trail if t) or None))
        buf.clear()

    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else markdown_heading(line)
        if heading:
            flush()
            level, title = heading
            del trail[level - 1 :]
            trail.extend([""] * (level - 1 - len(trail)))
            trail.append(title)  # "" keeps the place of a skipped level (## with no # above)
        else:
            buf.append(line)
    flush()
    return ParsedDocument(name=name, file_type="md", sections=tuple(sections))


PARSERS.register(".markdown")(parse_markdown)


@PARSERS.register(".html")
def parse_html(path: Path, name: str) -> ParsedDocument:
    """Every visible text of the page's main content in document order under the heading it follows, tables as
    Markdown tables; scripts, styles, hidden parts and the blocks framing the page (navigation, the page's header
    and footer, what is outside its ``<main>``) are left out, and the report counts them."""
    page = html_sections(decode_text(path.read_bytes(), name), options().text_budget)
    report = ParseReport(tables=page.tables).leaving_out(*apart_notes(page.apart))
    doc = ParsedDocument(name=name, file_type="html", sections=tuple(page.sections), report=report)
    if page.cut:
        raise TextBudgetReached(doc)  # the ingestor refuses it, or reads it again whole
    return doc


# Each kind of block that frames a page (``html_text.APART_KINDS``): its record for one block and for several.
_APART_SAID = {
    "navigation": ("left_out.navigation_one", "left_out.navigation"),
    "header": ("left_out.header_one", "left_out.header"),
    "footer": ("left_out.footer_one", "left_out.footer"),
    "search": ("left_out.search_one", "left_out.search"),
}


def apart_notes(apart: dict[str, int]) -> tuple[Said, ...]:
    """What framed a page and was left out, one record per kind: "navigation (2 blocks)", "footer (1 block)"."""
    notes = []
    for kind, blocks in apart.items():
        if blocks and kind == "outside main":
            notes.append(Said("left_out.outside_main", {}))
        elif blocks and kind in _APART_SAID:
            one, several = _APART_SAID[kind]
            notes.append(Said(one if blocks == 1 else several, {"blocks": blocks}))
    return tuple(notes)


PARSERS.register(".htm")(parse_html)


@REFERENCES.register(".txt")
@REFERENCES.register(".md")
@REFERENCES.register(".markdown")
@REFERENCES.register(".csv")
def text_reference(path: Path, report: ParseReport) -> str:
    return decode_text(path.read_bytes())


@REFERENCES.register(".html")
@REFERENCES.register(".htm")
def html_reference(path: Path, report: ParseReport) -> str:
    """All visible text of the page, navigation aside (left out by rule, and said so)."""
    return visible_text(decode_text(path.read_bytes()))
