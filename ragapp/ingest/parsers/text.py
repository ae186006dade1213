"""Plain text, Markdown and HTML."""

from __future__ import annotations

import re
from pathlib import Path

from ragapp.core.types import ParsedDocument, ParseReport, Section
from ragapp.ingest.parsers.base import PARSERS, decode_text
from ragapp.ingest.tables import markdown_table

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


_TABLE_TAG = "ragapp-table"  # where a table was: its Markdown, visited like any other block


@PARSERS.register(".html")
def parse_html(path: Path, name: str) -> ParsedDocument:
    """Visible text grouped under h1-h6, tables as Markdown tables; scripts, styles and other invisible parts are
    dropped."""
    sections, tables = html_sections(decode_text(path.read_bytes()))
    return ParsedDocument(name=name, file_type="html", sections=tuple(sections), report=ParseReport(tables=tables))


def html_sections(markup: str) -> tuple[list[Section], int]:
    """The sections of an HTML page (the text under each heading) and how many tables it had."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(markup, "html.parser")
    for tag in soup(["script", "style", "noscript", "template", "head", "svg"]):
        tag.decompose()
    tables = 0
    for table in reversed(soup.find_all("table")):  # innermost last in document order: nested ones go first
        rows = [[c.get_text(" ", strip=True) for c in tr.find_all(["td", "th"])] for tr in table.find_all("tr")]
        markdown = markdown_table(rows)
        holder = soup.new_tag(_TABLE_TAG)
        holder.string = markdown
        table.replace_with(holder)
        tables += bool(markdown)
    sections: list[Section] = []
    heading: str | None = None
    buf: list[str] = []
    in_table = False
    blocks = ["h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "td", "th", "pre", "blockquote", "dt", "dd", _TABLE_TAG]
    for element in soup.find_all(blocks):
        if element.name != _TABLE_TAG and element.find(blocks):  # a container: its children are visited instead
            continue
        if element.name == _TABLE_TAG:
            text, in_table = element.get_text().strip(), in_table or bool(element.get_text().strip())
        else:
            text = " ".join(element.get_text(" ", strip=True).split())
        if not text:
            continue
        if element.name in blocks[:6]:
            if buf:
                sections.append(Section(text="\n".join(buf), heading=heading, has_table=in_table))
                buf, in_table = [], False
            heading = text
        else:
            buf.append(text)
    if buf:
        sections.append(Section(text="\n".join(buf), heading=heading, has_table=in_table))
    if not sections:  # markup without block tags: fall back to all visible text
        sections.append(Section(text=soup.get_text("\n", strip=True)))
    return sections, tables


PARSERS.register(".htm")(parse_html)
