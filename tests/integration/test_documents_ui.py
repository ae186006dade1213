"""The Knowledge tab's document view and the chat's citation viewer, through their handlers over a real engine
(real stores, OCR and PDF rendering; scripted model)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gradio as gr
import pytest

from ragapp.ui.documents import DocumentHandlers, chunk_rows
from ragapp.ui.handlers import Handlers
from ragapp.ui.state import UploadControl
from tests.text import shown

pytestmark = pytest.mark.integration

ROWS = [["Model", "Battery (min)", "Price (EUR)"], ["Alpha", "90", "499"], ["Beta", "150", "699"]]


def _ask(rig: Any, question: str) -> Any:
    out = None
    for out in Handlers(rig.engine).respond(question, [], None, None, "workflow"):  # noqa: B007
        pass
    return out[2]


def test_a_documents_view_says_how_it_read_and_its_chunks_can_be_searched(
    make_engine: Callable[..., Any], make_documents: Any, tmp_path: Path
) -> None:
    rig = make_engine()
    scan = make_documents.scanned_pdf(tmp_path / "scan.pdf", [["The Alpha battery lasts 90 minutes."], []])
    prices = make_documents.table_pdf(tmp_path / "prices.pdf", "Price list 2027", ROWS)
    rig.engine.library.ingest([(scan, scan.name), (prices, prices.name)])
    handlers = DocumentHandlers(rig.engine)
    clicked = {"index": [0, 0], "value": "scan.pdf", "row_value": ["scan.pdf", "default"]}
    line, table, doc_id, panel = handlers.open(gr.SelectData(None, clicked))
    assert "2 pages" in line and "1 read by OCR (confidence" in line and "1 without any text (p. 2)" in line
    assert table.iloc[0]["Read as"].startswith("OCR 0.9") and panel["visible"] is True
    assert handlers.search(doc_id, "alpha").shape[0] == 1 and handlers.search(doc_id, "nothing like it").empty
    prices_id = next(d.doc_id for d in rig.engine.library.documents() if d.name == "prices.pdf")
    line, table, _, _ = handlers.show(prices_id)
    assert "1 table" in shown(line) and shown(table.iloc[0]["Read as"]) == "table"
    with pytest.raises(gr.Error):
        handlers.open(gr.SelectData(None, {"index": [0, 0], "value": "x", "row_value": ["gone.pdf", "default"]}))


def test_clicking_a_citation_shows_its_page_with_the_passage_marked(
    make_engine: Callable[..., Any], make_documents: Any, tmp_path: Path
) -> None:
    rig = make_engine()
    prices = make_documents.table_pdf(tmp_path / "prices.pdf", "Price list 2027", ROWS)
    rig.engine.library.ingest([(prices, prices.name)])
    rig.llm.enqueue("The Beta costs 699 euros [1].")
    session = _ask(rig, "What does the Beta cost?")
    at = next(i for i, r in enumerate(session.records) if r.get("cited"))  # the citation under the answer
    image, title, viewer, section, picked = DocumentHandlers(rig.engine).cite(
        gr.SelectData(None, {"index": at, "value": ""}), session
    )
    assert image["visible"] is True and image["value"].size[0] == 1000
    assert "prices.pdf · p. 1" in title and viewer["visible"] is True and section == ""
    assert picked["value"] == str(at)  # picked in the sources beside the answer
    # A click on the answer itself (not a citation) leaves the viewer as it is.
    answer_at = next(i for i, r in enumerate(session.records) if r.get("content", "").startswith("The Beta"))
    assert DocumentHandlers(rig.engine).cite(gr.SelectData(None, {"index": answer_at, "value": ""}), session) == (
        gr.update(),
        gr.update(),
        gr.update(),
        gr.update(),
        gr.update(),
    )


def test_a_markdown_citation_shows_its_section_highlighted(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    rig = make_engine()
    path = tmp_path / "guide.md"
    path.write_text("# Setup\n\nTurn the dial clockwise. The Alpha battery lasts 90 minutes.\n", "utf-8")
    rig.engine.library.ingest([(path, path.name)])
    rig.llm.enqueue("It lasts 90 minutes [1].")
    session = _ask(rig, "How long does the Alpha battery last?")
    at = next(i for i, r in enumerate(session.records) if r.get("chunk_id"))
    image, title, viewer, section, _picked = DocumentHandlers(rig.engine).cite(
        gr.SelectData(None, {"index": at, "value": ""}), session
    )
    assert viewer["visible"] is True and image["visible"] == "hidden" and "guide.md" in title and "<mark>" in section


def test_each_session_gets_its_own_stop_signal() -> None:
    first = UploadControl()
    second = copy.deepcopy(first)  # what Gradio does for each new session
    first.cancel.set()
    assert first.cancel.is_set() and not second.cancel.is_set()
    assert chunk_rows(()).empty
