"""Hostile text files through the parser: each is built here, parsed under a hang guard (a hang fails the test;
no speed is asserted), and must give a clear message or the text it holds."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from ragapp.core.errors import IngestError
from ragapp.ingest.parsing import markdown_heading, parse_file

T = TypeVar("T")
HANG_S = 20.0  # far beyond any legitimate parse of these small files: past it the parser is stuck


def finishes(work: Callable[[], T]) -> T:
    """``work()``, failing the test if it has not finished after ``HANG_S`` seconds."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(HANG_S)
    assert not thread.is_alive(), f"still running after {HANG_S:.0f} s"
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_a_heading_with_a_long_run_of_spaces_parses_at_once(tmp_path: Path) -> None:
    # The old heading pattern backtracked cubically here: 3.2 KB took 58 s.
    path = _write(tmp_path, "spaces.md", ("# x" + " " * 50_000 + "y\n\nbody text\n").encode())
    doc = finishes(lambda: parse_file(path))
    assert doc.sections[0].heading is not None and doc.sections[0].heading.startswith("x")
    assert doc.sections[0].text == "body text"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("# Title", (1, "Title")),
        ("### Title ###", (3, "Title")),
        ("## C# tips", (2, "C# tips")),
        ("#hashtag", None),
        ("####### seven", None),
        ("#   ", None),
        ("## #", None),
    ],
)
def test_markdown_headings_are_read_as_commonmark_writes_them(line: str, expected: object) -> None:
    assert markdown_heading(line) == expected


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_text_is_decoded_with_or_without_a_byte_order_mark(tmp_path: Path, encoding: str) -> None:
    text = "The filter is rinsed every 14 days. 滤网每 14 天冲洗一次。"
    doc = finishes(lambda: parse_file(_write(tmp_path, "notes.txt", text.encode(encoding))))
    assert doc.sections[0].text == text


@pytest.mark.parametrize("suffix", [".txt", ".md"])
def test_binary_garbage_named_as_text_is_refused_with_a_message(tmp_path: Path, suffix: str) -> None:
    path = _write(tmp_path, "garbage" + suffix, os.urandom(48_000))
    with pytest.raises(IngestError, match="binary file"):
        finishes(lambda: parse_file(path))


def test_text_with_a_few_control_characters_is_still_text(tmp_path: Path) -> None:
    text = "Page 1\fPage 2 has a form feed and a bell\x07 but is text.\n" * 20
    doc = finishes(lambda: parse_file(_write(tmp_path, "log.txt", text.encode())))
    assert "Page 2" in doc.sections[0].text


def test_boilerplate_detection_reads_a_huge_single_line_at_once() -> None:
    # The table-of-contents pattern backtracked quadratically on long lines: a 49 MB one-line file never finished.
    from ragapp.core.types import ParsedDocument, Section
    from ragapp.ingest.boilerplate import split_boilerplate

    line = "The kettle filter is rinsed every fourteen days. " * 200_000 + " 12"
    doc = ParsedDocument("one-line.txt", "txt", (Section(line),))
    split = finishes(lambda: split_boilerplate(doc, "d1"))
    assert split.doc.sections[0].text == line
