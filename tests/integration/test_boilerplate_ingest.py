"""A real PDF with a table of contents, a content page and a licence page, through the real stores."""

from __future__ import annotations

import importlib.util
import sqlite3
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import pytest

from ragapp.store.catalog import Catalog
from tests.text import shown

if TYPE_CHECKING:
    from conftest import Rig, StoreSnapshot

pytestmark = pytest.mark.integration

REPO_ROOT = Path(__file__).resolve().parents[2]
LICENCE_QUESTION = "Is permission granted to copy, distribute and modify this document under the licence?"
GFDL = (
    "GNU Free Documentation License. Version 1.3, 3 November 2008. Copyright (C) 2000, 2001, 2002, 2007, 2008 "
    "Free Software Foundation, Inc. Everyone is permitted to copy and distribute verbatim copies of this license "
    "document, but changing it is not allowed. The purpose of this License is to make a manual, textbook, or "
    "other functional and useful document free in the sense of freedom: to assure everyone the effective freedom "
    "to copy and redistribute it, with or without modifying it, either commercially or noncommercially."
)


def _pdf_writer() -> ModuleType:
    """The repository's own minimal PDF writer (``scripts/make_demo_files.py``): real text operators per page."""
    spec = importlib.util.spec_from_file_location("make_demo_files", REPO_ROOT / "scripts" / "make_demo_files.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def manual(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pdf = _pdf_writer()
    pages = [
        pdf.page(
            ("title", "Contents"),
            ("body", "1 Getting started ........................ 2\n1.1 Charging the dock ........................ 2"),
            ("body", "2 Cleaning the brushes ........................ 2\nLicence ........................ 3"),
        ),
        pdf.page(
            ("h", "1 Getting started"),
            ("body", "Hold the power button of the Orion robot for three seconds to wake it. The dock charges the "),
            ("body", "battery in four hours; rinse the brushes under warm water once a month."),
        ),
        pdf.page(("h", "GNU Free Documentation License"), ("body", GFDL)),
    ]
    path = tmp_path_factory.mktemp("pdf") / "orion_manual.pdf"
    pdf.write_pdf(path, pages, title="Orion Manual")
    return path


def _chunk_pages(rig: Rig) -> set[int | None]:
    """The pages of the chunks in the catalog (which the other stores must agree with)."""
    catalog = Catalog(rig.state_dir / "catalog.sqlite3").start()
    try:
        return {c.page for c in catalog.all_chunks()}
    finally:
        catalog.close()


def test_boilerplate_pages_are_left_out_of_every_store_and_listed(
    make_engine: Callable[..., Rig], manual: Path, store_snapshot: Callable[[Rig], StoreSnapshot]
) -> None:
    rig = make_engine()
    (result,) = rig.engine.library.ingest([(manual, "orion_manual.pdf")])

    assert result.status == "added"
    assert result.message == (
        f"orion_manual.pdf: added to 'default' ({result.chunks} chunks; "
        "2 pages left out: table of contents and licence text (GNU FDL))."
    )
    snap = store_snapshot(rig)
    assert snap.agree(), snap
    assert _chunk_pages(rig) == {2}
    assert len(snap.catalog_ids) == result.chunks
    assert result.doc_id is not None
    skipped = rig.engine.library.skipped(result.doc_id)
    assert [(s.page, s.location, s.reason) for s in skipped] == [
        (1, "p. 1", "table of contents"),
        (3, "p. 3", "licence text (GNU FDL)"),
    ]
    assert skipped[0].preview.startswith("Contents 1 Getting started")
    assert rig.engine.library.skipped_counts() == {result.doc_id: 2}

    retrieved = rig.engine.chat.retrieve(LICENCE_QUESTION)
    assert all(c.chunk.page == 2 for c in retrieved.candidates)
    assert all(h.chunk_id in snap.catalog_ids for r in retrieved.channel_results for h in r.hits)


def test_delete_removes_the_skipped_rows(make_engine: Callable[..., Rig], manual: Path) -> None:
    rig = make_engine()
    (result,) = rig.engine.library.ingest([(manual, "orion_manual.pdf")])
    assert result.doc_id is not None and rig.engine.library.skipped(result.doc_id)

    rig.engine.library.delete(result.doc_id)

    assert rig.engine.library.skipped(result.doc_id) == []
    assert rig.engine.library.skipped_counts() == {}
    with sqlite3.connect(rig.state_dir / "catalog.sqlite3") as conn:
        assert conn.execute("SELECT COUNT(*) FROM skipped_sections").fetchone() == (0,)


def test_the_setting_keeps_boilerplate_indexed(
    make_engine: Callable[..., Rig], manual: Path, store_snapshot: Callable[[Rig], StoreSnapshot]
) -> None:
    rig = make_engine(ingest={"keep_boilerplate": True})
    (result,) = rig.engine.library.ingest([(manual, "orion_manual.pdf")])

    assert result.message == f"orion_manual.pdf: added to 'default' ({result.chunks} chunks)."
    assert _chunk_pages(rig) == {1, 2, 3}
    assert store_snapshot(rig).agree()
    assert result.doc_id is not None and rig.engine.library.skipped(result.doc_id) == []
    retrieved = rig.engine.chat.retrieve(LICENCE_QUESTION)
    assert 3 in {c.chunk.page for c in retrieved.candidates}  # what the default keeps out would be found


def test_a_file_of_nothing_but_licence_is_indexed_anyway_with_a_notice(
    make_engine: Callable[..., Rig], tmp_path: Path
) -> None:
    rig = make_engine()
    licence = tmp_path / "LICENSE.md"
    licence.write_text(f"# GNU Free Documentation License\n\n{GFDL}\n", "utf-8")

    (result,) = rig.engine.library.ingest([(licence, "LICENSE.md")])

    assert result.status == "added" and result.chunks >= 1
    assert result.message == (
        f"LICENSE.md: added to 'default' ({result.chunks} chunks; every part looked like licence text (GNU FDL), "
        "so it was indexed anyway)."
    )
    assert result.doc_id is not None and rig.engine.library.skipped(result.doc_id) == []


def test_the_knowledge_tab_counts_and_lists_what_was_left_out(make_engine: Callable[..., Rig], manual: Path) -> None:
    from ragapp.ui.handlers import DOC_HEADERS, NOTHING_LEFT_OUT, Handlers

    handlers = Handlers(make_engine().engine)
    assert handlers.left_out_report() == NOTHING_LEFT_OUT
    handlers.engine.library.ingest([(manual, "orion_manual.pdf")])

    (row,) = handlers.documents_table()
    assert dict(zip(DOC_HEADERS, row, strict=True))["Left out"] == 2
    report = handlers.left_out_report()
    english, chinese = shown(report, "en"), shown(report, "zh")
    assert english.startswith("**orion_manual.pdf** (default)\n- p. 1 · table of contents · <small>Contents 1 Getting")
    assert "\n- p. 3 · licence text (GNU FDL) · <small>GNU Free Documentation License" in english
    assert chinese.startswith("**orion_manual.pdf** (default)\n- 第 1 页 · 目录 · <small>Contents 1 Getting")
    assert "\n- 第 3 页 · 许可证文本（GNU FDL） · <small>GNU Free Documentation License" in chinese
