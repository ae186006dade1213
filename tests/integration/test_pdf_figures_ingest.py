"""Figures as passages over real stores: pages of GNU Octave's manual (Debian's octave-doc) ingested, the plot's
passage stored with its box and caption, found by a question about it, drawn cropped from its page, and served
over HTTP to who may read its knowledge base (and to no one else)."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.core.errors import IngestError
from tests.integration.api_helpers import Served
from tests.unit.test_figures import PLOT_PAGES, octave_pages

pytestmark = pytest.mark.integration

CAPTION = "Figure 15.1: Simple Two-Dimensional Plot."


def _size(png: bytes) -> tuple[int, int]:
    from PIL import Image

    width, height = Image.open(io.BytesIO(png)).size
    return width, height


def test_a_figure_is_stored_found_by_its_caption_and_drawn_cropped(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    rig = make_engine(ingest={"pdf_tables": False})
    pdf = octave_pages(tmp_path / "octave-plotting.pdf", list(PLOT_PAGES))
    (result,) = rig.engine.library.ingest([(pdf, pdf.name)])
    assert result.status == "added", result.message
    view = rig.engine.library.document_view(result.doc_id)
    figures = [c for c in view.chunks if c.figure is not None]
    assert [c.figure.caption for c in figures if c.figure] == [CAPTION, "Figure 15.2: Histogram."]
    plot = figures[0]
    assert plot.page == 1 and plot.figure is not None and 0.2 < plot.figure.x0 < plot.figure.x1 < 0.8
    assert view.report is not None and view.report.figures == 2

    found = rig.engine.chat.retrieve("Which figure shows a simple two-dimensional plot of sin(x)?")
    assert found.chunks[0].chunk.chunk_id == plot.chunk_id  # the figure's passage, first

    page = rig.engine.library.page_view(plot.chunk_id)
    assert page.png is not None and page.highlighted == 1
    width, height = _size(page.png)
    box = plot.figure
    # the crop keeps the figure's shape (a margin of 1% of the page around it), not the page's
    expected = ((box.x1 - box.x0 + 0.02) * 612) / ((box.y1 - box.y0 + 0.02) * 792)
    assert abs(width / height - expected) < 0.05 and width / height > 1.2
    assert page.title == f"octave-plotting.pdf · p. 1 · 🖼 {CAPTION}"

    text = next(c for c in view.chunks if c.figure is None)
    with pytest.raises(IngestError):
        rig.engine.library.figure_image(text.chunk_id)


def test_the_api_serves_a_figure_to_its_readers_only(serve_api: Callable[..., Served], tmp_path: Path) -> None:
    from ragapp.accounts.model import KbRule
    from ragapp.accounts.store import UserStore

    served = serve_api(accounts=True, ingest={"pdf_tables": False})
    pdf = octave_pages(tmp_path / "octave-plotting.pdf", [331])
    (result,) = served.rig.engine.library.ingest([(pdf, pdf.name)], kb="manuals")
    assert result.status == "added", result.message
    users = Path(served.rig.engine.settings.auth.users_file)
    UserStore(users, 4).set_kb_rule("manuals", KbRule(readers=("ada", "eddie")))
    with served.client("eddie") as http:
        detail = http.get(f"/v1/documents/{result.doc_id}").json()
        (figure,) = [c for c in detail["chunk_list"] if c["figure_url"]]
        assert figure["caption"] == CAPTION and figure["figure_url"] == f"/v1/passages/{figure['chunk_id']}/figure"
        picture = http.get(figure["figure_url"], params={"width": 400})
        assert picture.status_code == 200 and picture.headers["content-type"] == "image/png"
        assert _size(picture.content)[0] == 400
        text = next(c for c in detail["chunk_list"] if not c["figure_url"])
        assert http.get(f"/v1/passages/{text['chunk_id']}/figure").status_code == 404
    with served.client("rita") as http:  # not a reader of "manuals": as if there were no such figure
        assert http.get(figure["figure_url"]).status_code == 404


def test_a_slide_picture_is_stored_and_drawn_as_embedded(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    from ragapp.engine.library import figure_url
    from tests.unit.test_figures import plot_deck

    rig = make_engine(ingest={"ocr": False})
    deck = plot_deck(tmp_path)
    (result,) = rig.engine.library.ingest([(deck, deck.name)])
    assert result.status == "added", result.message
    view = rig.engine.library.document_view(result.doc_id)
    plot = next(c for c in view.chunks if c.figure is not None)
    assert plot.location == "p. 1 · Plotting · 🖼 Figure 1: Simple Two-Dimensional Plot of sin(x)."
    assert figure_url(plot) == f"/v1/passages/{plot.chunk_id}/figure"
    _chunk, png = rig.engine.library.figure_image(plot.chunk_id, 400)
    assert _size(png)[0] == 400  # the picture, wider than tall as the plot is
    page = rig.engine.library.page_view(plot.chunk_id)
    assert page.png is not None and _size(page.png)[0] / _size(page.png)[1] > 1.3
