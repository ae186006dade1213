"""An HTML page's visible text, read as a stream: 49 MB of ``<p>hello world</p>`` built a BeautifulSoup tree of
5 to 6 GB; streamed, memory grows with the text kept, not with the number of elements.

The page's main content is kept apart from what frames it, by the landmarks HTML and ARIA define (not by guessing
at class names): navigation (``<nav>``, ``role="navigation"``), the page's own header and footer (a ``<header>``
or ``<footer>`` outside any article or section, ``role="banner"``, ``role="contentinfo"``), search forms, and,
when the page marks its main content (``<main>``, ``role="main"``), everything outside it. Measured against
trafilatura on Debian's HTML manuals (docs/documents.md): these rules keep all of a page's own text, where
trafilatura dropped 2 to 7 % of it.

Three stages, each fed by the one before: ``_Stream`` (the standard library's ``HTMLParser``, nesting elements
as BeautifulSoup's "html.parser" builder does, so pages read as they did) drops what a reader never sees;
``html_tables.Tables`` holds each table until it closes, to make it a Markdown table; ``_Walk`` puts the text
under the heading it follows. Only a table (and a heading's first child, until it shows whether it holds a
block) is held whole; everything else passes through.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser

from ragapp.core.types import Section
from ragapp.ingest.parsers.html_tables import TABLE as _TABLE
from ragapp.ingest.parsers.html_tables import Sink, Tables

_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# Elements that end the paragraph before them and start a new one: every block-level element of HTML. Text
# anywhere else (inline elements, or directly in <body>) joins the paragraph it stands in.
_BLOCKS = frozenset(
    "address article aside blockquote body caption center dd details dialog dir div dl dt fieldset figcaption "
    "figure footer form frameset header hgroup hr html legend li main menu ol optgroup option p section "
    "summary table ul tbody thead tfoot tr td th".split()
)
_STRUCTURE = _BLOCKS | _HEADINGS | {"pre", _TABLE}  # what a heading's own text stops at
EMPTY_HEADINGS_KEPT = 3  # at most this many headings in a row without text lead a section's heading
_INVISIBLE = frozenset({"script", "style", "noscript", "template", "head", "svg", "iframe", "object"})
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
# Elements without content, closed as they open (BeautifulSoup's list for HTML).
_VOID = frozenset(
    "area base br col embed hr img input keygen link menuitem meta param source track wbr basefont bgsound "
    "command frame image isindex nextid spacer".split()
)
_SEEN, _APART, _OUTSIDE, _GONE = 0, 1, 2, 3  # shown; framing the page; outside its <main>; never shown
_SECTIONING = frozenset({"article", "section", "main", "aside", "nav", "blockquote", "details", "dialog"})
# ARIA landmarks that frame a page, by the kind of block each is counted as
_FRAME_ROLES = {"navigation": "navigation", "banner": "header", "contentinfo": "footer", "search": "search"}
_MAIN = re.compile(r"<main[\s>/]|\srole\s*=\s*[\"']?main[\"'\s>/]", re.IGNORECASE)
OnPicture = Callable[[dict[str, str | None]], None]
APART_KINDS = ("navigation", "header", "footer", "search", "outside main")


class _Stream(HTMLParser):
    """Elements and text of the page as events to ``sink``, properly nested, without what a reader never sees
    (scripts, styles, hidden elements) and without the blocks that frame the page (counted in ``apart``, by
    kind: see the module's docstring). ``has_main``: the page marks its main content, so only that is read.

    Nesting as BeautifulSoup's "html.parser" builder does: an end tag closes the latest open element of its
    name and every element opened after it; an end tag with no open element of its name is ignored."""

    def __init__(self, sink: Sink, has_main: bool = False, on_picture: OnPicture | None = None) -> None:
        super().__init__(convert_charrefs=True)
        self.sink = sink
        self.on_picture = on_picture  # told of each shown <img>, its attributes, as it comes
        self.apart: dict[str, int] = {}
        self._top = _OUTSIDE if has_main else _SEEN
        self._open: list[tuple[str, int]] = []  # (name, _SEEN / _APART / _OUTSIDE / _GONE), outermost first
        self._counts: dict[str, int] = {}  # open elements by name: an end tag with none open is ignored
        self._sectioning = 0  # open sectioning elements: a header or footer inside one is its own, not the page's
        self._data: list[str] = []  # text since the last tag: one string, as BeautifulSoup keeps it

    def _state(self, tag: str, found: dict[str, str | None], outer: int) -> int:
        role = (found.get("role") or "").strip().lower()
        if outer == _GONE or tag in _INVISIBLE or "hidden" in found or _HIDDEN_STYLE.search(found.get("style") or ""):
            return _GONE
        if outer == _OUTSIDE and (tag == "main" or role == "main"):
            return _SEEN
        if outer != _SEEN:
            return outer
        kind = "navigation" if tag == "nav" else _FRAME_ROLES.get(role)
        if kind is None and tag in ("header", "footer") and not self._sectioning:
            kind = tag
        if kind is None:
            return _SEEN
        self.apart[kind] = self.apart.get(kind, 0) + 1
        return _APART

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._flush()
        outer = self._open[-1][1] if self._open else self._top
        found = dict(attrs) if attrs else {}
        state = self._state(tag, found, outer)
        if tag == "img" and state == _SEEN and self.on_picture is not None:
            self.on_picture(found)
        self._open.append((tag, state))
        self._counts[tag] = self._counts.get(tag, 0) + 1
        self._sectioning += tag in _SECTIONING
        if state == _SEEN:
            self.sink.start(tag)
        if tag in _VOID:
            self._pop()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self._flush()
            self._pop()

    def handle_endtag(self, tag: str) -> None:
        self._flush()
        if not self._counts.get(tag):
            return
        while self._pop() != tag:
            pass

    def handle_data(self, data: str) -> None:
        self._data.append(data)

    def updatepos(self, i: int, j: int) -> int:
        """Skips counting lines and columns (``getpos``), which nothing here reads: a tenth of the parse."""
        return j

    def close(self) -> None:
        super().close()
        self._flush()
        while self._open:
            self._pop()

    def _pop(self) -> str:
        name, state = self._open.pop()
        self._counts[name] -= 1
        self._sectioning -= name in _SECTIONING
        if state == _SEEN:
            self.sink.end(name)
        return name

    def _flush(self) -> None:
        if self._data:
            state = self._open[-1][1] if self._open else self._top
            if state == _SEEN:
                self.sink.text("".join(self._data))
            elif state == _OUTSIDE and not self.apart.get("outside main") and "".join(self._data).strip():
                self.apart["outside main"] = 1  # once: all that is outside the main content is one frame
            self._data.clear()


@dataclass
class _Walk:
    """The text under each heading: block-level elements and line breaks end paragraphs, ``<pre>`` keeps its
    lines, a Markdown table is a paragraph of its own.

    A heading's text is what comes before its first block (a heading left open by a stray end tag,
    ``<h2>Index</h1>``, holds the rest of the page: that rest is read as the page's text). Whether a child of
    the heading holds a block shows only once it closes or a block opens in it: until then its events wait in
    ``_child``."""

    sections: list[Section] = field(default_factory=list)
    _heading: str | None = None
    _paragraphs: list[str] = field(default_factory=list)
    _line: list[str] = field(default_factory=list)
    _has_table: bool = False
    _lead: list[str] | None = None  # the open heading's own text so far; None when no heading is being read
    _child: list[tuple[str, str]] = field(default_factory=list)  # events of the heading's open child
    _depth: int = 0  # open elements inside the heading (or <pre>) being read
    _pre: list[str] | None = None  # the open <pre>'s text
    size: int = 0  # characters of the paragraphs kept so far

    def start(self, name: str) -> None:
        if self._pre is not None:
            self._depth += 1
        elif self._lead is not None and name not in _STRUCTURE:
            self._child.append(("start", name))
            self._depth += 1
        else:
            if self._lead is not None:
                self._end_heading()
            self._start(name)

    def end(self, name: str) -> None:
        if self._pre is not None:
            if self._depth:
                self._depth -= 1
            else:
                self._end_pre()
        elif self._lead is not None:
            if not self._depth:  # the heading itself, all of it its own text
                self._end_heading(replay=False)
                return
            self._child.append(("end", name))
            self._depth -= 1
            if not self._depth:  # the child held no block: its text is the heading's, a line break a space
                for kind, value in self._child:
                    if kind == "text":
                        self._lead.append(value)
                    elif (kind, value) == ("start", "br"):
                        self._lead.append(" ")
                self._child.clear()
        elif name in _BLOCKS:
            self._end_paragraph()

    def text(self, data: str) -> None:
        if self._pre is not None:
            self._pre.append(data)
        elif self._lead is not None and self._depth:
            self._child.append(("text", data))
        elif self._lead is not None:
            self._lead.append(data)
        else:
            self._line.append(data)

    def table(self, markdown: str) -> None:
        if self._pre is not None:
            self._pre.append(markdown)
            return
        if self._lead is not None:
            self._end_heading()
        self._end_paragraph()
        if markdown.strip():
            self._paragraphs.append(markdown.strip())
            self.size += len(markdown)
            self._has_table = True

    def finish(self) -> list[Section]:
        if self._pre is not None:
            self._end_pre()
        if self._lead is not None:
            self._end_heading()
        self._end_section()
        return self.sections

    def _start(self, name: str) -> None:
        if name in _HEADINGS:
            self._lead, self._depth = [], 0
        elif name == "pre":
            self._end_paragraph()
            self._pre, self._depth = [], 0
        elif name == "br" or name in _BLOCKS:
            self._end_paragraph()

    def _end_heading(self, replay: bool = True) -> None:
        """The heading's own text read: it heads what follows; the events of a child that held a block are read
        as the page's text."""
        assert self._lead is not None
        text = " ".join("".join(self._lead).split())
        self._lead, self._depth = None, 0
        if text:
            # A heading with no text of its own ("Examples" right above "Example 1") leads the next one's.
            if not self._end_section() and self._heading:
                text = " > ".join([*self._heading.split(" > ")[-(EMPTY_HEADINGS_KEPT - 1) :], text])
            self._heading = text
        held, self._child = self._child, []
        for kind, value in held if replay else ():
            getattr(self, kind)(value)

    def _end_pre(self) -> None:
        assert self._pre is not None
        code = "\n".join(row.rstrip() for row in "".join(self._pre).splitlines()).strip("\n")
        self._pre, self._depth = None, 0
        if code.strip():
            self._paragraphs.append(code)
            self.size += len(code)

    def _end_paragraph(self) -> None:
        text = " ".join("".join(self._line).split())
        if text:
            self._paragraphs.append(text)
            self.size += len(text)
        self._line.clear()

    def _end_section(self) -> bool:
        self._end_paragraph()
        kept = bool(self._paragraphs)
        if kept:
            self.sections.append(Section("\n".join(self._paragraphs), heading=self._heading, has_table=self._has_table))
        self._paragraphs.clear()
        self._has_table = False
        return kept


@dataclass(frozen=True)
class HtmlText:
    """What an HTML page holds: its sections (the text under each heading), how many tables it had, and the
    blocks framing the page that were left out, by kind (``APART_KINDS``)."""

    sections: list[Section]
    tables: int = 0
    apart: dict[str, int] = field(default_factory=dict)
    cut: bool = False  # the text passed the budget it was read to: the rest of the page was not read


FEED_CHARS = 1 << 20  # the markup is fed a megabyte at a time, so that a budget can stop the reading between


def _stream(
    sink: Sink, markup: str, on_picture: OnPicture | None = None, enough: Callable[[], bool] | None = None
) -> tuple[_Stream, bool]:
    """The stream after reading ``markup``, and whether ``enough`` stopped it before the end."""
    stream = _Stream(sink, has_main=_MAIN.search(markup) is not None, on_picture=on_picture)
    cut = False
    for start in range(0, len(markup), FEED_CHARS):
        if enough is not None and enough():
            cut = True
            break
        stream.feed(markup[start : start + FEED_CHARS])
    stream.close()
    return stream, cut


def html_sections(markup: str, text_budget: int | None = None) -> HtmlText:
    """The page's main text: every visible text node, in document order, under the heading it follows.
    Block-level elements and line breaks separate paragraphs, ``<pre>`` keeps its lines, a table becomes a
    Markdown table; scripts, styles, hidden parts and the blocks framing the page are left out. With a
    ``text_budget`` (characters), the reading may stop once the text kept passes it (``cut``)."""
    walk = _Walk()
    tables = Tables(walk)
    enough = None if text_budget is None else (lambda: walk.size > text_budget)
    stream, cut = _stream(tables, markup, enough=enough)
    return HtmlText(walk.finish(), tables.count, dict(stream.apart), cut)


class _Strings:
    def __init__(self) -> None:
        self.found: list[str] = []

    def start(self, name: str) -> None:
        pass

    def end(self, name: str) -> None:
        pass

    def text(self, data: str) -> None:
        self.found.append(data)

    def table(self, markdown: str) -> None:  # pragma: no cover - no stage before it makes tables
        self.found.append(markdown)


def stream_html(sink: Sink, markup: str, on_picture: OnPicture) -> None:
    """The page's shown elements and text as events to ``sink`` (what ``html_sections`` reads), and each shown
    ``<img>``'s attributes to ``on_picture`` between them: for its figures (``ragapp.ingest.parsers.epub_figures``)."""
    _stream(sink, markup, on_picture)


def visible_text(markup: str) -> str:
    """Every visible text of the page's main content, one string a line, the blocks framing the page aside: the
    plainest reading, a reference for what ``html_sections`` kept."""
    strings = _Strings()
    _stream(strings, markup)
    return "\n".join(strings.found)
