"""Tables as Markdown: built from the cell rows a parser found (PDF, DOCX, HTML, PPTX, XLSX, CSV), and cut for
chunking only between rows, the header row repeated in every piece, so a chunk of a table still says what each
column means.

Written here because neither LlamaIndex's splitters nor the readers keep a table whole across a chunk boundary:
``SentenceSplitter`` cuts inside a row like anywhere else.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

_ROW_START = "|"
MAX_CELL_CHARS = 500  # a longer cell (a paragraph pasted into a spreadsheet) is cut: a row must fit a chunk


def clean_cell(value: object) -> str:
    """One cell's text on one line, the Markdown column separator escaped."""
    text = "" if value is None else str(value)
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= MAX_CELL_CHARS else text[: MAX_CELL_CHARS - 1] + "…"


def markdown_table(rows: Iterable[Sequence[object]]) -> str:
    """``rows`` (the first is the header) as a Markdown table; empty rows and columns dropped. "" when no cell
    holds anything, or there is only one column of one row (a framed paragraph, not a table)."""
    cells = [[clean_cell(v) for v in row] for row in rows]
    cells = [row for row in cells if any(row)]
    if not cells:
        return ""
    width = max(len(row) for row in cells)
    cells = [row + [""] * (width - len(row)) for row in cells]
    kept = [i for i in range(width) if any(row[i] for row in cells)]
    cells = [[row[i] for i in kept] for row in cells]
    if len(cells) < 2 and len(kept) < 2:
        return ""
    header, *body = cells
    lines = [_line(header), _line(["---"] * len(header)), *(_line(row) for row in body)]
    return "\n".join(lines)


def _line(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def is_table_line(line: str) -> bool:
    return line.lstrip().startswith(_ROW_START) and line.rstrip().endswith(_ROW_START)


def blocks(text: str) -> list[tuple[bool, str]]:
    """``text`` cut into runs of table lines (True) and of other lines (False), in order."""
    out: list[tuple[bool, list[str]]] = []
    for line in text.splitlines():
        table = is_table_line(line)
        if out and out[-1][0] == table:
            out[-1][1].append(line)
        else:
            out.append((table, [line]))
    return [(table, "\n".join(lines).strip("\n")) for table, lines in out if "".join(lines).strip()]


def split_table(table: str, size: int) -> list[str]:
    """A Markdown table in pieces of at most about ``size`` characters, cut only between rows, each piece starting
    with the header row and its separator. A single row longer than ``size`` is a piece of its own."""
    lines = table.splitlines()
    if len(table) <= size or len(lines) <= 3:
        return [table]
    has_separator = len(lines) > 1 and set(lines[1].replace("|", "").replace(" ", "")) <= {"-", ":"}
    head = lines[:2] if has_separator else lines[:1]
    rows = lines[len(head) :]
    pieces: list[str] = []
    current: list[str] = []
    used = sum(len(line) + 1 for line in head)
    for row in rows:
        if current and used + len(row) + 1 > size:
            pieces.append("\n".join([*head, *current]))
            current, used = [], sum(len(line) + 1 for line in head)
        current.append(row)
        used += len(row) + 1
    if current:
        pieces.append("\n".join([*head, *current]))
    return pieces
