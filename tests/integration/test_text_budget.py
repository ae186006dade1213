"""A page with more text than a document may hold is refused on what the parser read up to its budget
(``ParseOptions.text_budget``, twice the text ``max_chunks`` chunks hold), not after reading all of it; a page
whose boilerplate leaves too little of that text is read again whole and kept. The real parser and boilerplate
rules; the budget's feed block is made small (``FEED_CHARS``) so that small pages show it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragapp.config import IngestSettings
from ragapp.core.errors import IngestError
from ragapp.ingest.parse_context import ParseOptions, TextBudgetReached
from ragapp.ingest.parsers import html_text
from ragapp.ingest.parsing import parse_file
from ragapp.ingest.pipeline import parse_to_the_floor, text_budget

pytestmark = pytest.mark.integration

SETTINGS = IngestSettings(chunk_size=64, max_chunks=10)  # 640 characters make too many chunks; the budget 1,408
PARAGRAPH = "<p>The pump keeps the tank at two bar while the valve is open.</p>\n"  # 61 characters of text
LICENCE = (
    "<h2>Licence</h2>\n"
    + "<p>Permission is hereby granted, free of charge, to any person obtaining a copy of this software.</p>\n" * 40
)


@pytest.fixture(autouse=True)
def small_feeds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(html_text, "FEED_CHARS", 200)


def _page(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "page.html"
    path.write_text(f"<html><body>{body}</body></html>", "utf-8")
    return path


def _budgeted() -> ParseOptions:
    return ParseOptions(text_budget=text_budget(SETTINGS))


def test_the_parse_stops_past_the_budget_with_what_it_read(tmp_path: Path) -> None:
    path = _page(tmp_path, "<h1>Pump</h1>\n" + PARAGRAPH * 200)  # 12,200 characters of text
    with pytest.raises(TextBudgetReached) as cut:
        parse_file(path, "page.html", _budgeted())
    read = sum(len(section.text) for section in cut.value.partial.sections)
    assert text_budget(SETTINGS) < read < text_budget(SETTINGS) + 400  # one feed past it, at most
    whole = parse_file(path, "page.html")  # no budget: the whole page, as before
    assert sum(len(section.text) for section in whole.sections) > 11_900
    assert whole.sections[0].text.startswith(cut.value.partial.sections[0].text)


def test_a_page_of_too_much_text_is_refused_on_what_was_read(tmp_path: Path) -> None:
    path = _page(tmp_path, PARAGRAPH * 200)
    with pytest.raises(IngestError, match=r"^page\.html: it makes at least 2\d chunks, over the 10 "):
        parse_to_the_floor(path, "page.html", "d", SETTINGS, _budgeted())
    # Read whole, the same page is refused as well, with its whole count.
    with pytest.raises(IngestError, match=r"^page\.html: it makes at least 18\d chunks, over the 10 "):
        parse_to_the_floor(path, "page.html", "d", SETTINGS, ParseOptions())


def test_a_page_whose_boilerplate_leaves_little_is_read_again_whole_and_kept(tmp_path: Path) -> None:
    # A licence of 3,800 characters passes the budget; without it, the page's own text makes four chunks.
    valve = "<h2>Valve</h2>\n<p>The valve opens at two bar.</p>\n"
    path = _page(tmp_path, "<h2>Pump</h2>\n" + PARAGRAPH * 3 + LICENCE + valve)
    with pytest.raises(TextBudgetReached):  # the parse alone stops in the licence
        parse_file(path, "page.html", _budgeted())
    parsed, split = parse_to_the_floor(path, "page.html", "d", SETTINGS, _budgeted())
    assert [section.heading for section in split.doc.sections] == ["Pump", "Valve"]  # the end of the page read
    assert [skipped.heading for skipped in split.skipped] == ["Licence"]
    assert [section.heading for section in parsed.sections] == ["Pump", "Licence", "Valve"]
