"""Plain text, Markdown and HTML."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragapp.core.types import ParsedDocument, ParseReport, Section
from ragapp.ingest.parsers.base import PARSERS, REFERENCES, decode_text
from ragapp.ingest.tables import MAX_CELL_CHARS, markdown_table

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
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# Elements that end the paragraph before them and start a new one: every block-level element of HTML. Text
# anywhere else (inline elements, or directly in <body>) joins the paragraph it stands in.
_BLOCKS = frozenset(
    "address article aside blockquote body caption center dd details dialog dir div dl dt fieldset figcaption "
    "figure footer form frameset header hgroup hr html legend li main menu ol optgroup option p section "
    "summary table ul tbody thead tfoot tr td th".split()
)
_STRUCTURE = sorted(_BLOCKS | _HEADINGS | {"pre", _TABLE_TAG})  # what a heading's own text stops at
EMPTY_HEADINGS_KEPT = 3  # at most this many headings in a row without text lead a section's heading
_INVISIBLE = ["script", "style", "noscript", "template", "head", "svg", "iframe", "object"]
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)


@dataclass(frozen=True)
class HtmlText:
    """What an HTML page holds: its sections (the text under each heading), how many tables it had, and how many
    navigation blocks (``<nav>``) were left out."""

    sections: list[Section]
    tables: int = 0
    navigation: int = 0


@PARSERS.register(".html")
def parse_html(path: Path, name: str) -> ParsedDocument:
    """Every visible text of the page in document order under the heading it follows, tables as Markdown tables;
    scripts, styles, hidden parts and navigation blocks are left out (the report counts the navigation)."""
    page = html_sections(decode_text(path.read_bytes(), name))
    report = ParseReport(tables=page.tables, left_out=navigation_note(page.navigation))
    return ParsedDocument(name=name, file_type="html", sections=tuple(page.sections), report=report)


def navigation_note(blocks: int) -> tuple[str, ...]:
    return (f"navigation ({blocks} block{'s' if blocks != 1 else ''})",) if blocks else ()


def visible_soup(markup: str) -> tuple[Any, int]:
    """The page parsed, without what a reader never sees (scripts, styles, hidden elements) and without its
    navigation blocks, and how many of those there were."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(markup, "html.parser")
    for tag in soup(_INVISIBLE):
        tag.decompose()
    for tag in soup.find_all(lambda t: t.has_attr("hidden") or bool(_HIDDEN_STYLE.search(str(t.get("style") or "")))):
        tag.decompose()
    navigation = soup.find_all(lambda t: t.name == "nav" or t.get("role") == "navigation")
    for tag in navigation:
        tag.decompose()  # a nested one is already gone with its parent: decompose is idempotent
    return soup, len(navigation)


def html_sections(markup: str) -> HtmlText:
    """The page's text: every visible text node, in document order, under the heading it follows. Block-level
    elements and line breaks separate paragraphs, ``<pre>`` keeps its lines, a table becomes a Markdown table.

    Written as a walk of our own (BeautifulSoup parses; no library we use turns a page into headed text
    without dropping text that stands outside block tags): an explicit stack, so a page nested thousands of
    levels deep costs time in proportion to its size and no recursion."""
    from bs4.element import NavigableString, PreformattedString, Tag

    soup, navigation = visible_soup(markup)
    tables = 0
    for table in reversed(soup.find_all("table")):  # innermost last in document order: nested ones go first
        rows = [[c.get_text(" ", strip=True) for c in tr.find_all(["td", "th"])] for tr in table.find_all("tr")]
        if any(len(cell) > MAX_CELL_CHARS for row in rows for cell in row):
            continue  # a table laying out prose (a FAQ's answers): read as paragraphs, no cell cut short
        markdown = markdown_table(rows)
        if not markdown:
            continue  # one framed cell, or nothing: its text is read where it stands
        holder = soup.new_tag(_TABLE_TAG)
        holder.string = markdown
        table.replace_with(holder)
        tables += 1
    sections: list[Section] = []
    heading: str | None = None
    paragraphs: list[str] = []  # of the current section
    line: list[str] = []  # inline text of the current paragraph
    has_table = False

    def end_paragraph() -> None:
        text = " ".join("".join(line).split())
        if text:
            paragraphs.append(text)
        line.clear()

    def end_section() -> bool:
        nonlocal has_table
        end_paragraph()
        kept = bool(paragraphs)
        if kept:
            sections.append(Section(text="\n".join(paragraphs), heading=heading, has_table=has_table))
        paragraphs.clear()
        has_table = False
        return kept

    stack: list[tuple[Tag, Any]] = [(soup, iter(soup.children))]
    while stack:
        node, children = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            if node.name in _BLOCKS:
                end_paragraph()
        elif isinstance(child, PreformattedString):  # comments, CDATA, doctypes, processing instructions
            continue
        elif isinstance(child, NavigableString):
            line.append(str(child))
        elif not isinstance(child, Tag):
            continue
        elif child.name in _HEADINGS:
            # A heading left open by a stray end tag (<h2>Index</h1>) holds the rest of the page: its own text
            # is what comes before its first block; the blocks after are walked as the page's text.
            lead, rest = _leading_inline(child)
            text = " ".join("".join(_inline_text(n) if isinstance(n, Tag) else str(n) for n in lead).split())
            if text:
                # A heading with no text of its own ("Examples" right above "Example 1") leads the next one's.
                if not end_section() and heading:
                    text = " > ".join([*heading.split(" > ")[-(EMPTY_HEADINGS_KEPT - 1) :], text])
                heading = text
            if rest is not None:
                stack.append((child, rest))
        elif child.name == _TABLE_TAG:
            end_paragraph()
            markdown = child.get_text().strip()
            if markdown:
                paragraphs.append(markdown)
                has_table = True
        elif child.name == "pre":
            end_paragraph()
            code = "\n".join(row.rstrip() for row in child.get_text().splitlines()).strip("\n")
            if code.strip():
                paragraphs.append(code)
        elif child.name == "br":
            end_paragraph()
        else:
            if child.name in _BLOCKS:
                end_paragraph()
            stack.append((child, iter(child.children)))
    end_section()
    return HtmlText(sections, tables, navigation)


def _leading_inline(tag: Any) -> tuple[list[Any], Any]:
    """The children of ``tag`` before its first block-level one (comments aside), and an iterator over the rest
    starting at that block (None when there is none)."""
    from bs4.element import PreformattedString, Tag

    lead: list[Any] = []
    children = iter(tag.children)
    for node in children:
        if isinstance(node, Tag) and (node.find(_STRUCTURE) is not None or node.name in _STRUCTURE):
            return lead, itertools.chain([node], children)
        if not isinstance(node, PreformattedString):
            lead.append(node)
    return lead, None


def _inline_text(tag: Any) -> str:
    """A heading's piece of text: its strings joined as written (no space added inside a word split by markup,
    none taken away: "<span>1.2. </span>Pages" keeps its space), a line break read as a space; the caller
    makes the heading one line."""
    from bs4.element import NavigableString, PreformattedString

    if getattr(tag, "name", None) == "br":
        return " "
    pieces = []
    for node in tag.descendants:
        if getattr(node, "name", None) == "br":
            pieces.append(" ")
        elif isinstance(node, NavigableString) and not isinstance(node, PreformattedString):
            pieces.append(str(node))
    return "".join(pieces)


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
    soup, _navigation = visible_soup(decode_text(path.read_bytes()))
    return str(soup.get_text("\n"))
