"""A Word file's and an EPUB's figures over real stores: ingested, stored with their picture's name, drawn for the
sources panel and the chat, and served by the HTTP API's figure route; a corrupt picture costs its figure only."""

from __future__ import annotations

import base64
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.core.types import Citation
from tests.integration.api_helpers import Served
from tests.unit.test_book_figures import BROKEN_SAID, CAPTION, plot_book, plot_report

pytestmark = pytest.mark.integration


def _size(png: bytes) -> tuple[int, int]:
    from PIL import Image

    width, height = Image.open(io.BytesIO(png)).size
    return width, height


def test_a_word_figure_is_drawn_in_the_sources_panel_and_the_chat(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    from ragapp.engine.library import figure_url
    from ragapp.ui.figure_view import THUMBNAIL_PX, figure_pictures

    rig = make_engine(ingest={"ocr": False})
    report = plot_report(tmp_path)
    (result,) = rig.engine.library.ingest([(report, report.name)])
    assert result.status == "added", result.message
    view = rig.engine.library.document_view(result.doc_id)
    (plot,) = [c for c in view.chunks if c.figure is not None]
    assert plot.page is None and plot.location == f"Plotting · 🖼 {CAPTION}"
    assert figure_url(plot) == f"/v1/passages/{plot.chunk_id}/figure"
    _chunk, png = rig.engine.library.figure_image(plot.chunk_id, 400)
    assert _size(png)[0] == 400
    page = rig.engine.library.page_view(plot.chunk_id)  # the sources panel: the picture, not the words around
    assert page.png is not None and page.highlighted == 1 and page.section == ()
    pictures = figure_pictures(rig.engine, [Citation(1, plot)])  # the chat, under the answer
    drawn = base64.b64decode(pictures[plot.chunk_id].removeprefix("data:image/png;base64,"))
    assert _size(drawn)[0] == THUMBNAIL_PX


def test_a_word_file_with_a_corrupt_picture_is_added_with_its_text(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    rig = make_engine(ingest={"ocr": False})
    report = plot_report(tmp_path, broken=True)
    (result,) = rig.engine.library.ingest([(report, report.name)])
    assert result.status == "added", result.message
    view = rig.engine.library.document_view(result.doc_id)
    assert [c for c in view.chunks if c.figure is not None] == []
    assert view.report is not None and BROKEN_SAID in view.report.left_out
    assert "four periods" in "\n".join(c.text for c in view.chunks)
    found = rig.engine.chat.retrieve("What does the plot below show over four periods?")
    assert "four periods" in found.chunks[0].chunk.text


def test_the_api_serves_an_epub_figure(serve_api: Callable[..., Served], tmp_path: Path) -> None:
    served = serve_api(ingest={"ocr": False})
    book = plot_book(tmp_path)
    (result,) = served.rig.engine.library.ingest([(book, book.name)])
    assert result.status == "added", result.message
    with served.client() as http:
        detail = http.get(f"/v1/documents/{result.doc_id}").json()
        figures = [c for c in detail["chunk_list"] if c["figure_url"]]
        assert [f["caption"] for f in figures] == [CAPTION, "Figure 2: The sine again."]
        picture = http.get(figures[0]["figure_url"], params={"width": 400})
        assert picture.status_code == 200 and picture.headers["content-type"] == "image/png"
        width, height = _size(picture.content)
        assert width == 400 and width / height > 1.3
        text = next(c for c in detail["chunk_list"] if not c["figure_url"])
        assert http.get(f"/v1/passages/{text['chunk_id']}/figure").status_code == 404
