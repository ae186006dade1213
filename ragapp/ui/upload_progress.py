"""An upload's progress in the Knowledge tab, file by file: the stage each file is at (reading, looking for tables,
OCR, chunking, embedding, saving) with its pages or chunks done of total, from the engine's typed progress
reports (``IngestProgress``), drawn in both languages.

The upload runs in a worker thread; the event's generator draws the board at once (before the first file is
opened), then again as reports come, at most a few times a second, and finally gives way to the upload's report.
The Stop button reaches the upload through its ``UploadControl`` as before.
"""

import contextvars
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gradio as gr

from ragapp.core.types import DEFAULT_KB, IngestProgress
from ragapp.ui.handlers import Handlers
from ragapp.ui.i18n import both
from ragapp.ui.markup import escape_text
from ragapp.ui.state import UploadControl

# A phase: its icon and what it is called, in English and Chinese.
STAGES: dict[str, tuple[str, str, str]] = {
    "parse": ("📖", "Reading", "正在读取"),
    "figures": ("🖼", "Looking for figures", "正在查找插图"),
    "tables": ("📊", "Looking for tables", "正在查找表格"),
    "ocr": ("🖨️", "Reading scanned pages (OCR)", "正在识别扫描页（OCR）"),
    "chunk": ("✂️", "Cutting into chunks", "正在切分片段"),
    "embed": ("🧮", "Embedding", "正在生成向量"),
    "store": ("💾", "Saving", "正在保存"),
    "index": ("🔎", "Updating the keyword index", "正在更新关键词索引"),
}
WAITING = both("waiting", "等待中")
STARTING = "⏳ " + both("starting", "正在开始")
FINISHED = "✔ " + both("done", "已处理")  # the report under it says how each file ended (added, failed…)
STOPPING = "⏹ " + both("Stopping after the current step…", "正在停止（当前步骤完成后）…")
_REDRAW_S = 0.3  # at most about three redraws a second: each is a message to the browser


def stage_line(update: IngestProgress) -> str:
    """'📖 Reading · page 12 of 36', '🧮 Embedding · 32 of 90 chunks', in both languages."""
    icon, english, chinese = STAGES.get(update.phase, ("⏳", update.phase, update.phase))
    counted = _counted(update)
    if counted is None:
        return f"{icon} {both(english, chinese)}"
    if update.phase == "store":
        return f"{icon} {both(f'{english} {counted[0]}', f'{chinese} {counted[1]}')}"
    return f"{icon} {both(f'{english} · {counted[0]}', f'{chinese} · {counted[1]}')}"


def _counted(update: IngestProgress) -> tuple[str, str] | None:
    """What the phase counts, done of total, in English and Chinese; None where it counts nothing."""
    done, total = update.done, update.total
    if done is None or not total:
        return None
    if update.phase in ("parse", "figures", "tables"):
        return f"page {done} of {total}", f"第 {done}/{total} 页"
    if update.phase == "ocr":
        return f"{done} of {total}", f"{done}/{total}"
    if update.phase == "embed":
        return f"{done} of {total} chunk{'s' if total != 1 else ''}", f"{total} 个片段中已完成 {done} 个"
    if update.phase == "store":
        return f"{total} chunk{'s' if total != 1 else ''}", f"{total} 个片段"
    return None


@dataclass
class UploadBoard:
    """What the page shows while ``names`` are uploaded into ``kb``: the latest report, drawn per file (those
    before it done, those after it waiting)."""

    names: list[str]
    kb: str
    latest: IngestProgress | None = None
    stopping: bool = False

    def apply(self, update: IngestProgress) -> None:
        self.latest = update

    def markup(self) -> str:
        n, latest = len(self.names), self.latest
        done = round(100 * latest.fraction) if latest is not None else 0
        kb = escape_text(self.kb)
        files = "file" if n == 1 else "files"
        lines = [f"**{both(f'Adding {n} {files} to “{kb}”', f'正在将 {n} 个文件加入“{kb}”')}** · {done}%"]
        if self.stopping:
            lines[0] += f" · {STOPPING}"
        for index, name in enumerate(self.names):
            lines.append(f"- 📄 {escape_text(name)} — {self._state(index)}")
        if latest is not None and latest.file is None:  # the batch's own last step
            lines.append(f"- {stage_line(latest)}")
        return "\n".join(lines)

    def _state(self, index: int) -> str:
        latest = self.latest
        if latest is None:
            return STARTING if index == 0 else WAITING
        if index < latest.index or latest.file is None:
            return FINISHED
        if index == latest.index:
            return stage_line(latest)
        return WAITING


_DONE = object()  # the worker's last word on the queue


@dataclass
class _Work:
    """The upload in its worker thread: the reports it sends, and its result or error once over."""

    reports: queue.Queue[Any] = field(default_factory=queue.Queue)
    result: Any = None
    error: BaseException | None = None


def with_progress(
    run: Callable[[Callable[[IngestProgress], None]], tuple[Any, ...]],
    names: list[str],
    kb: str,
    control: UploadControl | None,
    others: int,
) -> Iterator[tuple[Any, ...]]:
    """Run ``run(progress)`` (the upload, returning its ``others`` outputs) in a worker thread and yield the
    board's markup with the others left as they are, then "" (the board gone) with the upload's outputs. An
    error of the upload is raised here, once the board is put away."""
    work, board = _Work(), UploadBoard(names, kb)
    skipped = (gr.skip(),) * others
    yield (board.markup(), *skipped)  # at once: before a file is opened

    def worker() -> None:
        try:
            work.result = run(work.reports.put)
        except BaseException as exc:  # handed to the page's thread, which raises it
            work.error = exc
        finally:
            work.reports.put(_DONE)

    # The context goes along: Gradio's toasts (gr.Info) find the event they belong to through it.
    context = contextvars.copy_context()
    threading.Thread(target=context.run, args=(worker,), name="ui-upload", daemon=True).start()
    over = False
    while not over:
        try:
            items = [work.reports.get(timeout=_REDRAW_S)]
        except queue.Empty:
            items = []
        while not work.reports.empty():  # what came meanwhile: only the latest is drawn
            items.append(work.reports.get_nowait())
        over = any(item is _DONE for item in items)
        updates = [item for item in items if isinstance(item, IngestProgress)]
        stopping = control is not None and control.cancel.is_set()
        if updates or stopping != board.stopping:
            if updates:
                board.apply(updates[-1])
            board.stopping = stopping
            if not over:
                yield (board.markup(), *skipped)
                time.sleep(_REDRAW_S)  # what comes meanwhile is drawn together, the latest of it
    if work.error is not None:
        yield ("", *skipped)
        raise work.error
    yield ("", *work.result)


class UploadHandlers:
    """The Add button's event: ``Handlers.upload`` with its progress drawn as it goes (``with_progress``)."""

    OUTPUTS = 7  # Handlers.upload's outputs: the report, the tables and lists it refreshes, the status line

    def __init__(self, handlers: Handlers) -> None:
        self._handlers = handlers

    def upload(
        self,
        files: list[str] | None,
        kb: str | None,
        scope: list[str] | None,
        owner: str | None,
        control: UploadControl | None,
        request: gr.Request,
    ) -> Iterator[tuple[Any, ...]]:
        """The progress board, then the upload's outputs (Handlers.upload's, after the board)."""
        if not files:  # nothing to show progress of: the handler says what to do
            yield ("", *self._handlers.upload(files, kb, scope, owner, control, request))
            return

        def run(progress: Callable[[IngestProgress], None]) -> tuple[Any, ...]:
            return self._handlers.upload(files, kb, scope, owner, control, request, progress)

        if control is not None:  # a Stop pressed before this upload neither stops it nor shows on its board
            control.cancel.clear()
        names = [Path(f).name for f in files]
        yield from with_progress(run, names, kb or DEFAULT_KB, control, self.OUTPUTS)
