"""Real documents through the whole ingest path (real OCR model, Chroma, BM25, embedder; scripted LLM): an
image-only PDF and a photographed page are read by OCR, in English and Chinese, each chunk keeping its page and
OCR confidence; blank pages are listed as such; OCR off says how to turn it on; a table's cell reaches the
model with its column header; progress names the OCR'd page."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.core.events import AnswerEvent
from ragapp.core.types import IngestProgress

pytestmark = pytest.mark.integration

ENGLISH = ["The Alpha robot battery lasts 90 minutes.", "Charge it for two hours before first use."]
CHINESE = ["阿尔法机器人的电池续航九十分钟。", "首次使用前请充电两小时。"]


def _chunks(rig: Any, name: str) -> list[Any]:
    return [c for c in rig.engine._store.catalog.all_chunks() if c.source == name]


def test_an_image_only_pdf_is_read_by_ocr_page_by_page(
    make_engine: Callable[..., Any], make_documents: Any, tmp_path: Path
) -> None:
    rig = make_engine()
    path = make_documents.scanned_pdf(tmp_path / "scan.pdf", [ENGLISH, CHINESE, []])
    updates: list[IngestProgress] = []
    (result,) = rig.engine.library.ingest([(path, path.name)], updates.append)
    assert result.status == "added", result.message
    chunks = _chunks(rig, "scan.pdf")
    assert [c.page for c in chunks] == [1, 2]
    assert chunks[0].text == "\n".join(ENGLISH) and chunks[1].text == "\n".join(CHINESE)
    assert all(c.ocr_confidence is not None and c.ocr_confidence > 0.9 for c in chunks)
    report = rig.engine._store.catalog.parse_report(result.doc_id)
    assert report.ocr_pages == (1, 2) and report.empty_pages == (3,) and report.pages_with_text == 2
    assert any(u.phase == "ocr" and "OCR page 2/3" in u.message for u in updates)
    fractions = [u.fraction for u in updates if u.file == "scan.pdf"]
    assert fractions == sorted(fractions)  # the bar never goes back
    found = rig.engine.chat.retrieve("How long does the Alpha battery last?").chunks
    assert found and found[0].chunk.page == 1 and found[0].chunk.source == "scan.pdf"


def test_a_photographed_page_is_read_by_ocr(
    make_engine: Callable[..., Any], make_documents: Any, tmp_path: Path
) -> None:
    rig = make_engine()
    path = make_documents.scan_image(tmp_path / "notice.png", CHINESE)
    (result,) = rig.engine.library.ingest([(path, path.name)])
    assert result.status == "added", result.message
    (chunk,) = _chunks(rig, "notice.png")
    assert chunk.text == "\n".join(CHINESE) and chunk.page == 1 and chunk.ocr_confidence > 0.9


def test_with_ocr_off_a_scan_is_refused_with_the_setting_to_change(
    make_engine: Callable[..., Any], make_documents: Any, tmp_path: Path
) -> None:
    rig = make_engine(ingest={"ocr": False})
    path = make_documents.scanned_pdf(tmp_path / "scan.pdf", [ENGLISH])
    (result,) = rig.engine.library.ingest([(path, path.name)])
    assert result.status == "failed" and "RAGAPP_INGEST__OCR=true" in result.message


def test_a_question_about_a_cell_reaches_the_model_with_its_header(
    make_engine: Callable[..., Any], make_documents: Any, tmp_path: Path
) -> None:
    rig = make_engine()
    rows = [["Model", "Battery (min)", "Price (EUR)"]] + [
        [f"Model {i}", str(60 + i), str(300 + 10 * i)] for i in range(25)
    ]
    rows.insert(8, ["Beta", "150", "699"])
    path = make_documents.table_pdf(tmp_path / "prices.pdf", "Price list 2027", rows)
    (result,) = rig.engine.library.ingest([(path, path.name)])
    assert result.status == "added", result.message
    table_chunks = [c for c in _chunks(rig, "prices.pdf") if c.has_table]
    assert len(table_chunks) > 1
    assert all("| Model | Battery (min) | Price (EUR) |" in c.text for c in table_chunks)

    rig.llm.enqueue("The Beta costs 699 euros [1].")
    events = list(rig.engine.chat.ask("What does the Beta cost?", mode="workflow"))
    answer = events[-1]
    assert isinstance(answer, AnswerEvent) and "699" in answer.text and answer.citations
    prompt = "\n".join(t.content for t in rig.llm.calls[-1])
    assert "| Beta | 150 | 699 |" in prompt and "| Model | Battery (min) | Price (EUR) |" in prompt
