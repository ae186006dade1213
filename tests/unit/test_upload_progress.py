"""An upload's progress board (``ragapp.ui.upload_progress``), drawn from synthetic progress reports: no engine,
no browser (tests/e2e/test_upload_progress_browser.py shows it during a real upload)."""

from __future__ import annotations

import re
import threading
from typing import Any

import gradio as gr
import pytest

from ragapp.core.types import IngestProgress
from ragapp.ui.state import UploadControl
from ragapp.ui.upload_progress import STAGES, UploadBoard, stage_line, with_progress
from tests.text import shown

LATIN = re.compile(r"[A-Za-z]+")


def _report(phase: str, done: int | None = None, total: int | None = None, index: int = 0, **kw: Any) -> Any:
    file = kw.get("file", "manual.pdf")
    return IngestProgress(file, phase, kw.get("fraction", 0.25), "engine words", done, total, index, kw.get("count", 2))  # type: ignore[arg-type]


def test_each_stage_says_its_pages_or_chunks_done_of_total_in_both_languages() -> None:
    assert shown(stage_line(_report("parse", 12, 36))) == "📖 Reading · page 12 of 36"
    assert shown(stage_line(_report("parse", 12, 36)), "zh") == "📖 正在读取 · 第 12/36 页"
    assert shown(stage_line(_report("tables", 3, 36))) == "📊 Looking for tables · page 3 of 36"
    assert shown(stage_line(_report("ocr", 2, 5))) == "🖨️ Reading scanned pages (OCR) · 2 of 5"
    assert shown(stage_line(_report("embed", 32, 90))) == "🧮 Embedding · 32 of 90 chunks"
    assert shown(stage_line(_report("embed", 32, 90)), "zh") == "🧮 正在生成向量 · 90 个片段中已完成 32 个"
    assert shown(stage_line(_report("chunk"))) == "✂️ Cutting into chunks"  # nothing counted: the stage alone
    assert shown(stage_line(_report("store", 90, 90))) == "💾 Saving 90 chunks"
    assert shown(stage_line(_report("store", 90, 90)), "zh") == "💾 正在保存 90 个片段"
    for phase in STAGES:  # the Chinese page: no English but the name OCR
        line = shown(stage_line(_report(phase, 1, 2)), "zh")
        assert set(LATIN.findall(line)) <= {"OCR"}, line


def test_the_board_shows_every_file_done_at_work_or_waiting() -> None:
    board = UploadBoard(["a.md", "manual.pdf", "c.txt"], "default")
    first = shown(board.markup())
    assert first.splitlines() == [
        "**Adding 3 files to “default”** · 0%",
        "- 📄 a.md — ⏳ starting",
        "- 📄 manual.pdf — waiting",
        "- 📄 c.txt — waiting",
    ]
    board.apply(_report("embed", 32, 90, index=1, count=3, fraction=0.42))
    assert shown(board.markup()).splitlines() == [
        "**Adding 3 files to “default”** · 42%",
        "- 📄 a.md — ✔ done",
        "- 📄 manual.pdf — 🧮 Embedding · 32 of 90 chunks",
        "- 📄 c.txt — waiting",
    ]
    board.stopping = True
    assert shown(board.markup()).splitlines()[0].endswith("· ⏹ Stopping after the current step…")
    board.apply(_report("index", file=None, index=3, count=3, fraction=1.0))
    assert shown(board.markup(), "zh").splitlines()[1:] == [
        "- 📄 a.md — ✔ 已处理",
        "- 📄 manual.pdf — ✔ 已处理",
        "- 📄 c.txt — ✔ 已处理",
        "- 🔎 正在更新关键词索引",
    ]
    assert "\\*" in UploadBoard(["*bold*.md"], "default").markup()  # a file's name stays text


def test_the_board_is_drawn_before_the_upload_starts_then_follows_it_then_gives_way() -> None:
    started, go = threading.Event(), threading.Event()

    def run(progress: Any) -> tuple[str, ...]:
        started.set()
        progress(_report("parse", 5, 36, index=0, count=1))
        go.wait(10)
        return ("report", "table")

    steps = with_progress(run, ["manual.pdf"], "default", UploadControl(), 2)
    board, *rest = next(steps)
    assert not started.is_set()  # drawn before a file is opened
    assert "starting" in shown(board) and rest == [gr.skip(), gr.skip()]
    board, *_ = next(steps)
    assert "📖 Reading · page 5 of 36" in shown(board)
    go.set()
    assert list(steps)[-1] == ("", "report", "table")  # the board gone, the upload's outputs shown


def test_a_stop_shows_on_the_board_and_an_error_puts_the_board_away() -> None:
    control, stopped = UploadControl(), threading.Event()

    def run(progress: Any) -> tuple[str, ...]:
        progress(_report("embed", 1, 9, count=1))
        stopped.wait(10)
        raise gr.Error("it broke")

    steps = with_progress(run, ["manual.pdf"], "default", control, 1)
    next(steps), next(steps)
    control.cancel.set()
    board, _ = next(steps)
    assert "Stopping after the current step" in shown(board)
    stopped.set()
    with pytest.raises(gr.Error):
        assert next(steps) == ("", gr.skip())
        next(steps)
