"""Tables of an HTML page held until they close, then made Markdown tables (``html_text`` streams the rest)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from ragapp.ingest.tables import MAX_CELL_CHARS, markdown_table

TABLE = "ragapp-table"  # a table made Markdown, where it stood


class Sink(Protocol):
    """Where a stage of ``html_text`` sends the page's events."""

    def start(self, name: str) -> None: ...
    def end(self, name: str) -> None: ...
    def text(self, data: str) -> None: ...
    def table(self, markdown: str) -> None: ...


class _Node:
    """An element of a table held until the table closes."""

    __slots__ = ("children", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self.children: list[_Node | str] = []

    def find_all(self, names: frozenset[str]) -> list[_Node]:
        """The descendants named one of ``names``, in document order (an explicit stack: no recursion)."""
        found: list[_Node] = []
        stack = [iter(self.children)]
        while stack:
            child = next(stack[-1], None)
            if child is None:
                stack.pop()
            elif isinstance(child, _Node):
                if child.name in names:
                    found.append(child)
                stack.append(iter(child.children))
        return found

    def strings(self) -> Iterator[str]:
        """The strings inside, in document order, one at a time (a long cell is given up early)."""
        stack = [iter(self.children)]
        while stack:
            child = next(stack[-1], None)
            if child is None:
                stack.pop()
            elif isinstance(child, str):
                yield child
            else:
                stack.append(iter(child.children))


class Tables:
    """Passes events on to ``sink``, except a table's: held until it closes, then sent as one Markdown table, or
    (a table laying out prose, or a single framed cell) passed on as it came."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self.count = 0
        self._open: list[_Node] = []  # the held table's open elements, the table first

    def start(self, name: str) -> None:
        if self._open or name == "table":
            node = _Node(name)
            if self._open:
                self._open[-1].children.append(node)
            self._open.append(node)
        else:
            self.sink.start(name)

    def end(self, name: str) -> None:
        if not self._open:
            self.sink.end(name)
            return
        table = self._open.pop()
        if not self._open:
            self._replay(self._convert(table))

    def text(self, data: str) -> None:
        if self._open:
            self._open[-1].children.append(data)
        else:
            self.sink.text(data)

    def table(self, markdown: str) -> None:  # pragma: no cover - nothing before this stage makes tables
        self.sink.table(markdown)

    def _convert(self, outer: _Node) -> _Node:
        """``outer`` with every table in it (itself included) that makes a Markdown table replaced by it, the
        innermost first: a table inside a cell is part of the cell's text."""
        holder = _Node("")
        holder.children.append(outer)
        places: list[tuple[_Node, int]] = [(holder, 0)]  # (parent, index) of each table, in document order
        stack = [(outer, iter(enumerate(outer.children)))]
        while stack:
            parent, children = stack[-1]
            item = next(children, None)
            if item is None:
                stack.pop()
            elif isinstance(item[1], _Node):
                if item[1].name == "table":
                    places.append((parent, item[0]))
                stack.append((item[1], iter(enumerate(item[1].children))))
        for parent, index in reversed(places):
            table = parent.children[index]
            assert isinstance(table, _Node)
            rows = _rows(table)
            if rows is None:
                continue  # a table laying out prose (a FAQ's answers): read as paragraphs, no cell cut short
            markdown = markdown_table(rows)
            if markdown:  # else one framed cell, or nothing: its text is read where it stands
                made = _Node(TABLE)
                made.children.append(markdown)
                parent.children[index] = made
                self.count += 1
        top = holder.children[0]
        assert isinstance(top, _Node)
        return top

    def _replay(self, top: _Node) -> None:
        """``top`` and all in it, as events to the sink."""
        if top.name == TABLE:
            self.sink.table(str(top.children[0]))
            return
        self.sink.start(top.name)
        stack = [iter(top.children)]
        names = [top.name]
        while stack:
            child = next(stack[-1], None)
            if child is None:
                stack.pop()
                self.sink.end(names.pop())
            elif isinstance(child, str):
                self.sink.text(child)
            elif child.name == TABLE:
                self.sink.table(str(child.children[0]))
            else:
                self.sink.start(child.name)
                stack.append(iter(child.children))
                names.append(child.name)


_ROWS, _CELLS = frozenset({"tr"}), frozenset({"td", "th"})


def _rows(table: _Node) -> list[list[str]] | None:
    """The table's rows of cell texts; None as soon as a cell is longer than ``MAX_CELL_CHARS``."""
    rows = []
    for tr in table.find_all(_ROWS):
        row = []
        for cell in tr.find_all(_CELLS):
            pieces, length = [], -1
            for string in cell.strings():
                if string.strip():
                    pieces.append(string.strip())
                    length += len(pieces[-1]) + 1
                    if length > MAX_CELL_CHARS:
                        return None
            row.append(" ".join(pieces))
        rows.append(row)
    return rows
