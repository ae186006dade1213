"""Inside the knowledge base: a document's view (how it read, its chunks, searchable), re-indexing, stopping an
upload, and a citation shown on its page.

``DocumentHandlers`` turns engine calls into component values (tested without a browser). Every call acts as
the signed-in user: the engine refuses a document or page of a knowledge base they may not read.
"""

import html
import io
from typing import Any

import gradio as gr
import pandas as pd

from ragapp.core.errors import RagAppError
from ragapp.core.types import Chunk, ParseReport
from ragapp.engine.engine import Engine
from ragapp.engine.library import DocumentView
from ragapp.ui.handlers import ingest_line, user_errors
from ragapp.ui.i18n import both
from ragapp.ui.markup import escape_text, highlighted
from ragapp.ui.page_language import shown
from ragapp.ui.said_words import said_or_english
from ragapp.ui.state import Session, UploadControl, actor_of, owner_of

CHUNK_HEADERS = ["#", "Page", "Heading", "Read as", "Text"]
CHUNK_TYPES = ["number", "str", "str", "html", "str"]  # how it was read, in both languages
PREVIEW_CHARS = 300


def quality_line(view: DocumentView) -> str:
    """'40 pages · 38 with text · 3 read by OCR (confidence 0.97) · 2 tables · 1 page without text (p. 12) ·
    2 pages left out as boilerplate'."""
    record, report = view.record, view.report or ParseReport()
    parts = [f"**{escape_text(record.name)}** ({escape_text(record.kb)}, {record.file_type})"]
    if record.pages is not None:
        n = record.pages
        parts.append(both(f"{n} page{'s' if n != 1 else ''}", f"{n} 页"))
    if report.pages_with_text is not None:
        n = report.pages_with_text
        parts.append(both(f"{n} with text", f"{n} 页有文字"))
    if report.ocr_pages:
        n, sure = len(report.ocr_pages), report.ocr_confidence
        parts.append(
            both(
                f"{n} read by OCR" + (f" (confidence {sure:.2f})" if sure is not None else ""),
                f"{n} 页经 OCR 识别" + (f"（置信度 {sure:.2f}）" if sure is not None else ""),
            )
        )
    if report.tables:
        n = report.tables
        parts.append(both(f"{n} table{'s' if n != 1 else ''}", f"{n} 个表格"))
    if report.figures:
        n = report.figures
        parts.append(both(f"{n} figure{'s' if n != 1 else ''}", f"{n} 幅图"))
    if report.empty_pages:
        n = len(report.empty_pages)
        shown = ", ".join(str(p) for p in report.empty_pages[:20]) + ("…" if n > 20 else "")
        parts.append("⚠️ " + both(f"{n} without any text (p. {shown})", f"{n} 页没有任何文字（第 {shown} 页）"))
    if view.skipped:
        n = len(view.skipped)
        parts.append(both(f"{n} left out as boilerplate", f"{n} 处作为目录、索引等样板内容未编入"))
    # Each item from its record; a report stored before the records were kept: its English as it is
    said = report.left_out_said if len(report.left_out_said) == len(report.left_out) else (None,) * len(report.left_out)
    parts += [
        f"{both('left out', '未编入')}: {said_or_english(record, what, escape_text)}"
        for record, what in zip(said, report.left_out, strict=True)
    ]
    if report.coverage is not None:
        warning = report.coverage_said()
        share = f"{report.coverage:.1%}"
        indexed = both(f"{share} of its text indexed", f"{share} 的文字已编入索引")
        parts.append(said_or_english(warning, warning.english, escape_text) if warning else indexed)
    parts.append(both(f"{len(view.chunks)} chunks", f"{len(view.chunks)} 个片段"))
    if view.report is None:
        parts.append(
            both(
                "read before parse reports were kept: index it again for one",
                "读取时尚未保存解析报告：重新索引即可生成",
            )
        )
    return " · ".join(parts)


def chunk_rows(chunks: tuple[Chunk, ...], needle: str = "") -> pd.DataFrame:
    """The chunks as a table (the ones holding ``needle``, ignoring case), each with how it was read."""
    wanted = needle.strip().casefold()
    rows = []
    for chunk in chunks:
        if wanted and wanted not in chunk.text.casefold() and wanted not in (chunk.heading or "").casefold():
            continue
        read = []
        if chunk.ocr_confidence is not None:
            read.append(f"OCR {chunk.ocr_confidence:.2f}")
        if chunk.has_table:
            read.append(both("table", "表格"))
        text = chunk.text if len(chunk.text) <= PREVIEW_CHARS else chunk.text[: PREVIEW_CHARS - 1] + "…"
        how = ", ".join(read) or both("text", "文字")
        rows.append([chunk.ordinal, chunk.page or "", chunk.heading or "", how, text])
    return pd.DataFrame(rows, columns=CHUNK_HEADERS)


class DocumentHandlers:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @user_errors
    def open(self, evt: gr.SelectData, request: gr.Request | None = None) -> tuple[str, pd.DataFrame, str, Any]:
        """A row of the documents table clicked: that document's view (a name is unique in its knowledge base,
        and the table's first two columns are the name and the base)."""
        row = evt.row_value if isinstance(evt.row_value, list) else []
        actor = actor_of(self.engine, request)
        found = [d for d in self.engine.library.documents(actor=actor) if row[:2] == [d.name, d.kb]]
        if not found:
            raise gr.Error(
                both(
                    "That document is no longer in the knowledge base; the table is refreshed on reload.",
                    "这份文档已不在知识库中；重新加载页面即可刷新表格。",
                )
            )
        return self.show(found[0].doc_id, request)

    def show(self, doc_id: str, request: gr.Request | None = None) -> tuple[str, pd.DataFrame, str, Any]:
        view = self.engine.library.document_view(doc_id, actor=actor_of(self.engine, request))
        return quality_line(view), chunk_rows(view.chunks), doc_id, gr.update(visible=True)

    @user_errors
    def search(self, doc_id: str | None, needle: str, request: gr.Request | None = None) -> pd.DataFrame:
        if not doc_id:
            raise gr.Error(both("Pick a document in the table first.", "请先在表格中选择一份文档。"))
        view = self.engine.library.document_view(doc_id, actor=actor_of(self.engine, request))
        return chunk_rows(view.chunks, needle or "")

    @user_errors
    def reindex(
        self,
        doc_id: str | None,
        stored: str | None = None,
        request: gr.Request | None = None,
        progress: gr.Progress = gr.Progress(),  # noqa: B008 (Gradio's idiom)
    ) -> str:
        """Index the picked document again from its kept file."""
        if not doc_id:
            raise gr.Error(both("Pick a document first.", "请先选择一份文档。"))
        result = self.engine.library.reindex(
            doc_id,
            lambda update: progress(update.fraction, desc=update.text),
            owner=owner_of(self.engine, stored, request),
            actor=actor_of(self.engine, request),
        )
        line = ingest_line(result)
        gr.Info(line)  # toasts render HTML
        return f"🔄 {line}"

    @staticmethod
    def stop(control: UploadControl | None) -> None:
        """The Stop button: the upload in flight stops at its next page or batch."""
        if control is not None:
            control.cancel.set()
            gr.Info(both("Stopping the upload…", "正在停止上传…"))

    @user_errors
    def cite(
        self, evt: gr.SelectData, session: Session | None, request: gr.Request | None = None
    ) -> tuple[Any, Any, Any, Any, Any]:
        """A citation clicked in the chat: shown in the sources panel (see ``show``), picked in its answer's list.
        Other messages leave the panel as it is."""
        index = evt.index[0] if isinstance(evt.index, list | tuple) else evt.index
        records = session.records if session is not None else []
        record = records[index] if isinstance(index, int) and 0 <= index < len(records) else {}
        if not record.get("chunk_id"):  # not a citation: the panel stays as it is
            return gr.update(), gr.update(), gr.update(), gr.update(), gr.update()
        picked = _sources(records, index) if record.get("cited") else gr.update()
        return (*self.show_record(record, request), picked)

    def cite_latest(self, session: Session | None, request: gr.Request | None = None) -> tuple[Any, ...]:
        """After an answer, or a chat opened or started: the sources of the chat's last answer, in citation order,
        the first shown; none, the panel closed (it never keeps another chat's page)."""
        records = session.records if session is not None else []
        cited = [i for i, r in enumerate(records) if i >= _turn(records, len(records))[0] and r.get("cited")]
        if not cited:
            closed = gr.update(visible=shown(False))
            return gr.update(), gr.update(), closed, gr.update(), gr.update(choices=[], value=None)
        return (*self.show_record(records[cited[0]], request), _sources(records, cited[0]))

    def cite_marker(self, wanted: str, session: Session | None, request: gr.Request | None = None) -> tuple[Any, ...]:
        """A [n] clicked in an answer (the page's script sends "message index:n:nonce"): that answer's source n
        in the panel, opened again if it was closed."""
        records = session.records if session is not None else []
        parts = (wanted or "").split(":")
        index, number = (int(p) if p.isdigit() else -1 for p in [*parts, "", ""][:2])
        start, end = _turn(records, index if 0 <= index < len(records) else len(records))
        found = next((i for i in range(start, end) if records[i].get("cited") == number), None)
        if found is None or not records[found].get("chunk_id"):
            return gr.update(), gr.update(), gr.update(), gr.update(), gr.update()
        return (*self.show_record(records[found], request), _sources(records, found))

    def cite_picked(self, picked: str | None, session: Session | None, request: gr.Request | None = None) -> Any:
        """A source picked in the panel's list."""
        records = session.records if session is not None else []
        index = int(picked) if picked and picked.isdigit() else -1
        if not 0 <= index < len(records) or not records[index].get("chunk_id"):
            return gr.update(), gr.update(), gr.update(), gr.update()
        return self.show_record(records[index], request)

    def show_record(self, record: dict[str, Any], request: gr.Request | None = None) -> tuple[Any, Any, Any, Any]:
        """A cited passage: its page drawn with the passage marked (PDFs and scans), else the section around it,
        the passage highlighted."""
        try:
            view = self.engine.library.page_view(
                str(record["chunk_id"]), [str(h) for h in record.get("highlights") or []],
                actor=actor_of(self.engine, request),
            )  # fmt: skip
        except RagAppError:  # not in the knowledge base: another MCP server's result, or a document since deleted
            title = f"📄 {escape_text(str(record.get('label') or ''))}"
            content = str(record.get("content", ""))
            return gr.update(value=None, visible=shown(False)), title, gr.update(visible=True), content
        title = f"📄 {escape_text(view.title)}" + live_link(view.url)
        if view.png is not None:
            from PIL import Image

            image = Image.open(io.BytesIO(view.png))
            missed = both("the passage could not be found on the page image", "在页面图像上没有找到这段原文")
            note = "" if view.highlighted else f" · {missed}"
            return gr.update(value=image, visible=True), title + note, gr.update(visible=True), ""
        marks = [str(h) for h in record.get("highlights") or []] or [view.chunk.text]
        section = "\n\n".join(
            highlighted(c.text, tuple(marks)) if c.chunk_id == view.chunk.chunk_id else escape_text(c.text)
            for c in view.section
        )
        return gr.update(value=None, visible=shown(False)), title, gr.update(visible=True), section


def live_link(url: str) -> str:
    """A link to the live page a cited document was fetched from (a website source's; "" for none), opened in a
    new tab and telling the site nothing of the app (no referrer)."""
    if not url.startswith(("http://", "https://")):
        return ""
    words = both("🔗 Open the live page", "🔗 打开原网页")
    attributes = 'class="live-page" target="_blank" rel="noopener noreferrer nofollow"'
    return f' · <a href="{html.escape(url, quote=True)}" {attributes}>{words}</a>'


def _turn(records: list[dict[str, Any]], index: int) -> tuple[int, int]:
    """The records of the answer holding record ``index`` (the last answer for ``len(records)``): from after
    the question before it to the next question."""
    start = max((i for i, r in enumerate(records[:index]) if r.get("role") == "user"), default=-1) + 1
    end = next((i for i in range(max(index, start), len(records)) if records[i].get("role") == "user"), len(records))
    return start, end


def _sources(records: list[dict[str, Any]], index: int) -> Any:
    """The panel's list: the sources of the answer holding record ``index``, in citation order, that one picked."""
    start, end = _turn(records, index)
    cited = [(str(records[i].get("label") or f"[{records[i]['cited']}]"), str(i))
             for i in range(start, end) if records[i].get("cited")]  # fmt: skip
    return gr.update(choices=cited, value=str(index))
