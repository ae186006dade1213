"""Event handlers: translate UI actions into Engine calls and engine results into component values.

Errors are turned into ``gr.Error`` here, at the boundary: users see what went wrong and what to do,
never a stack trace.
"""

import functools
import html
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar, cast

import gradio as gr
from gradio.utils import get_upload_folder
from pydantic import ValidationError

from ragapp.core.access import LOCAL_ACTOR, Action, Actor, may
from ragapp.core.errors import AccessDenied, RagAppError
from ragapp.core.filters import DocumentFilter
from ragapp.core.said import TERMS
from ragapp.core.turn import Exchange
from ragapp.core.types import DEFAULT_KB, IngestProgress, IngestResult, Mode, Scope, SkippedSection
from ragapp.engine import Clarified, kb_name
from ragapp.engine.engine import Engine
from ragapp.ui.conversation_view import record_of, turn_records
from ragapp.ui.figure_view import figure_pictures
from ragapp.ui.i18n import ROLE_WORDS, both, t
from ragapp.ui.markup import code_span, escape_text, no_remote_content
from ragapp.ui.next_questions import suggested_question
from ragapp.ui.pacing import paced
from ragapp.ui.render import ANSWER_AGAIN_CHOICE, TurnView
from ragapp.ui.said_words import said_or_english
from ragapp.ui.state import Session, UploadControl, actor_of, owner_of

log = logging.getLogger(__name__)
T = TypeVar("T")

DOC_HEADERS = ["Name", "Knowledge base", "Type", "Pages", "Chunks", "Left out", "Added (UTC)"]
MODE_CHOICES = [(t("mode.workflow"), "workflow"), (t("mode.agent"), "agent"), (t("mode.auto"), "auto")]
NOTHING_LEFT_OUT = both(
    "Nothing left out. Tables of contents, indexes and licence pages are listed here when an upload has them "
    "(`RAGAPP_INGEST__KEEP_BOILERPLATE=true` indexes them instead)",
    "没有被排除的内容。上传的文档若有目录、索引和许可证页面，它们不编入索引，而在此列出"
    "（`RAGAPP_INGEST__KEEP_BOILERPLATE=true` 可改为编入索引）",
)
_STATUS_ICON = {"added": "✅", "replaced": "🔄", "duplicate": "⏭️", "failed": "❌", "cancelled": "⏹️"}


def _to_gr_error(exc: Exception) -> gr.Error:
    if isinstance(exc, RagAppError):
        return gr.Error(said_or_english(exc.said, str(exc)))  # the modal renders HTML (escaped: names are in them)
    log.exception("unexpected error in a UI handler")
    kind = type(exc).__name__
    return gr.Error(
        both(
            f"Something went wrong ({kind}). The details are in the server log.",
            f"出错了（{kind}），详情见服务器日志。",
        )
    )


def user_errors(fn: Callable[..., T]) -> Callable[..., T]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except Exception as exc:
            raise _to_gr_error(exc) from None

    return wrapper


class Handlers:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    # -- chat ----------------------------------------------------------------------------------

    def respond(
        self,
        message: str,
        chat: list[Any],
        session: Session | None,
        scope: list[str] | None = None,
        mode: str | None = None,
        owner: str | None = None,
        tags: list[str] | None = None,
        path: str | None = None,
        types: list[str] | None = None,
        request: gr.Request | None = None,
    ) -> Iterator[tuple[str, list[Any], Session]]:
        """Stream one turn: steps, answer tokens, then one collapsible message per citation.

        ``scope`` is the knowledge bases picked in "Search in"; none picked searches all of them. ``mode`` is
        the one picked in "Mode" (workflow, agent or auto); None: the configured default. ``tags``, ``path``
        and ``types`` are the filter under "Search in": documents with any of the tags, a path starting so,
        of those file types (nothing set: every document).
        """
        where = filter_of(tags, path, types)
        session = session or Session()
        question = (message or "").strip()
        if not question:
            yield "", chat, session
            return
        session.pending = None  # a new question abandons an unanswered "which one did you mean?"
        chat = [*chat, gr.ChatMessage(role="user", content=no_remote_content(question))]
        yield from self._turn(
            question, question, chat, session, scope, None, mode, owner_of(self.engine, owner, request),
            actor_of(self.engine, request), where,
        )  # fmt: skip

    def choose(
        self,
        choice: gr.SelectData,
        chat: list[Any],
        session: Session | None,
        scope: list[str] | None = None,
        mode: str | None = None,
        owner: str | None = None,
        tags: list[str] | None = None,
        path: str | None = None,
        types: list[str] | None = None,
        request: gr.Request | None = None,
    ) -> Iterator[tuple[str, list[Any], Session]]:
        """The user clicked one of the choices the app offered when it asked back: answer with that pick; or
        "Answer again" under an answer served from the answer cache: answer that question anew; or one of the
        next questions under an answer: ask it."""
        if (suggested := suggested_question(choice.value)) is not None:  # a next question under the answer
            yield from self.respond(suggested, chat, session, scope, mode, owner, tags, path, types, request)
            return
        where = filter_of(tags, path, types)
        session = session or Session()
        if str(choice.value) == ANSWER_AGAIN_CHOICE["value"]:
            last = session.exchanges[-1] if session.exchanges else None  # a reopened chat keeps its turns
            reopened = last.said if last is not None and last.turn.cached is not None else ""
            question, session.again = session.again or reopened, ""
            if not question:  # a stale button: nothing kept was answered last
                yield "", chat, session
                return
            chat = [*chat, gr.ChatMessage(role="user", content=no_remote_content(question))]
            owner_id, actor = owner_of(self.engine, owner, request), actor_of(self.engine, request)
            yield from self._turn(question, question, chat, session, scope, None, mode, owner_id, actor, where, True)
            return
        pending = session.pending
        if pending is None:  # a stale button (e.g. after "New chat"): nothing to resume
            yield "", chat, session
            return
        session.pending = None
        value = str(choice.value)
        label = next((c.label for c in pending.choices if c.code == value), both("Search everything", "全部检索"))
        chat = [*chat, gr.ChatMessage(role="user", content=label)]
        clarified = Clarified(pending.sub_questions, pending.ambiguous, value)
        yield from self._turn(
            pending.question,
            session.pending_question,
            chat,
            session,
            scope,
            clarified,
            mode,
            owner_of(self.engine, owner, request),
            actor_of(self.engine, request),
            where,
        )

    def _turn(
        self,
        question: str,
        asked: str,
        chat: list[Any],
        session: Session,
        scope: list[str] | None,
        clarified: Clarified | None,
        mode: str | None = None,
        owner: str = "anonymous",
        actor: Actor = LOCAL_ACTOR,
        where: DocumentFilter | None = None,
        fresh: bool = False,
    ) -> Iterator[tuple[str, list[Any], Session]]:
        """Stream one answer to ``question`` (``asked`` is what the user typed, for the history; the user's side
        of this turn is the last message of ``chat``). ``fresh``: "Answer again", past the answer cache, as the
        question was first asked (alone: only such a question is answered from the cache)."""
        said = str(getattr(chat[-1], "content", "")) if chat else asked
        view = TurnView()
        yield "", chat + view.messages(), session
        events = self.engine.chat.ask(
            question,
            () if fresh else session.recent(),
            scope_of(scope),
            summary="" if fresh else session.summary,
            clarified=clarified,
            mode=mode_of(mode),
            owner=owner,
            actor=actor,
            where=where,
            fresh=fresh,
        )
        try:
            for batch in paced(events):  # redrawn five times a second at most, however fast the model writes
                for event in batch:
                    view.apply(event)
                yield "", chat + view.messages(), session
        except Exception as exc:
            raise _to_gr_error(exc) from None
        view.figures = figure_pictures(self.engine, view.turn.citations, actor)  # drawn once, the answer done
        session.again = asked if view.turn.cached is not None else ""
        if view.turn.memory is not None:
            session.fold(view.turn.memory)
        if view.turn.clarify is not None:
            session.pending, session.pending_question = view.turn.clarify, asked
        if session.pending is None:  # asking back is not an answer: the pick will complete this turn
            session.remember(asked, view.answer)
        session.exchanges.append(Exchange(said, view.turn))
        # What the chat shows now, to keep: the records so far, this turn's question, then its answer.
        session.records = [*session.records, *(record_of(m) for m in chat[len(session.records) :]), *turn_records(view)]
        yield "", chat + view.messages(), session

    @staticmethod
    def clear() -> tuple[list[Any], Session]:
        return [], Session()

    # -- knowledge -----------------------------------------------------------------------------

    def documents_table(self, actor: Actor = LOCAL_ACTOR) -> list[list[Any]]:
        left_out = self.engine.library.skipped_counts()
        return [
            [
                d.name,
                d.kb,
                d.file_type,
                d.pages if d.pages is not None else "",
                d.chunk_count,
                left_out.get(d.doc_id, 0),
                d.added_at,
            ]
            for d in self.engine.library.documents(actor=actor)
        ]

    def left_out_report(self, request: gr.Request | None = None) -> str:
        """Per document, the pages kept out of retrieval as boilerplate: where, why, and how each begins."""
        library = self.engine.library
        counts = library.skipped_counts()
        parts = []
        for doc in library.documents(actor=self._viewer(request)):
            if doc.doc_id in counts:
                rows = [
                    f"- {_where(s)} · {_boilerplate_reason(s.reason)} · <small>{html.escape(s.preview)}</small>"
                    for s in library.skipped(doc.doc_id)
                ]
                parts.append(f"**{html.escape(doc.name)}** ({html.escape(doc.kb)})\n" + "\n".join(rows))
        return "\n\n".join(parts) or NOTHING_LEFT_OUT

    def document_choices(self, actor: Actor = LOCAL_ACTOR) -> list[tuple[str, str]]:
        documents = self.engine.library.documents(actor=actor)
        return [(f"{d.name} · {d.kb} ({d.chunk_count} chunks)", d.doc_id) for d in documents]

    def kb_names(self, actor: Actor = LOCAL_ACTOR) -> list[str]:
        """The knowledge bases that hold documents (that ``actor`` may read): the choices of "Search in"."""
        return [kb.name for kb in self.engine.library.knowledge_bases(actor=actor)]

    def tag_names(self, actor: Actor = LOCAL_ACTOR) -> list[str]:
        """The tags on documents ``actor`` may read: the choices of the Chat's tag filter."""
        return self.engine.library.tags(actor=actor)

    def tag_choices(self, request: gr.Request | None = None) -> Any:
        """The Chat's tag filter offers the tags on the documents the signed-in user may read: filled when the
        page loads and again whenever the box is focused (tags change in the Knowledge tab, by anyone). What
        was picked or typed stays."""
        return gr.update(choices=self.tag_names(self._viewer(request)))

    def upload_kb_choices(self, actor: Actor = LOCAL_ACTOR) -> list[str]:
        """Where an upload may go: the existing knowledge bases, and always the default one."""
        names = self.kb_names(actor)
        return names if DEFAULT_KB in names else [DEFAULT_KB, *names]

    def refresh(
        self, scope: list[str] | None = None, request: gr.Request | None = None
    ) -> tuple[list[list[Any]], Any, str, Any, Any]:
        """Documents table, delete choices, status line, upload-KB choices, and the chat scope (keeping the
        picked knowledge bases that still exist), as the signed-in user may see them."""
        actor = self._viewer(request)
        names = self.kb_names(actor)
        kept = [kb for kb in scope or [] if kb in names]
        return (
            self.documents_table(actor),
            gr.update(choices=self.document_choices(actor), value=None),
            self.status_line(),
            gr.update(choices=self.upload_kb_choices(actor)),
            gr.update(choices=names, value=kept),
        )

    def _viewer(self, request: gr.Request | None) -> Actor:
        """Who the page is shown to; one the engine does not know (removed since signing in) sees nothing."""
        try:
            return actor_of(self.engine, request)
        except AccessDenied:
            return Actor("?", "reader", frozenset({"(nobody)"}))

    @user_errors
    def upload(
        self,
        files: list[str] | None,
        kb: str | None = DEFAULT_KB,
        scope: list[str] | None = None,
        owner: str | None = None,
        control: UploadControl | None = None,
        request: gr.Request | None = None,
        progress: Callable[[IngestProgress], None] | None = None,
    ) -> tuple[str, list[list[Any]], Any, None, str, Any, Any]:
        """Ingest the dropped ``files`` into ``kb``; ``progress`` hears the engine's reports (the page draws them:
        ``ragapp.ui.upload_progress``). Returns the report and what it changes on the page."""
        if not files:
            raise gr.Error(both("Choose or drop one or more files first.", "请先选择或拖入文件。"))
        target = kb_name(kb or DEFAULT_KB)  # a bad name is refused before any file is read
        pairs = [(Path(f), Path(f).name) for f in files]
        cancel = control.cancel if control is not None else None
        if cancel is not None:
            cancel.clear()  # a Stop pressed before this upload does not stop it
        try:
            results = self.engine.library.ingest(
                pairs,
                progress,
                target,
                owner=owner_of(self.engine, owner, request),
                actor=actor_of(self.engine, request),
                cancel=cancel,
            )
        finally:
            # The text is in the stores now; Gradio's copy of the upload would stay on disk (and be served at
            # its upload URL) after the document is deleted.
            cache = Path(get_upload_folder()).resolve()
            for path, _name in pairs:
                if path.resolve().is_relative_to(cache):  # only Gradio's own copies, never a file of the user's
                    path.unlink(missing_ok=True)
        summary = ingest_summary(results)
        failed = [r for r in results if r.status == "failed"]
        if failed:
            gr.Warning(
                both(
                    f"{len(failed)} of {len(results)} file(s) could not be added; see the list.",
                    f"{len(results)} 个文件中有 {len(failed)} 个未能加入，详见列表。",
                )
            )
        else:
            gr.Info(both("Knowledge base updated.", "知识库已更新。"))
        table, choices, status, _kbs, scope_update = self.refresh(scope, request)
        kbs = gr.update(choices=self.upload_kb_choices(self._viewer(request)), value=target)
        return summary, table, choices, None, status, kbs, scope_update

    @user_errors
    def delete(
        self, doc_id: str | None, scope: list[str] | None = None, request: gr.Request | None = None
    ) -> tuple[str, list[list[Any]], Any, str, Any, Any]:
        if not doc_id:
            raise gr.Error(both("Pick a document to delete.", "请选择要删除的文档。"))
        name = self.engine.library.delete(doc_id, actor=actor_of(self.engine, request))
        shown = html.escape(name)  # toasts render HTML
        gr.Info(both(f"Deleted {shown}.", f"已删除 {shown}。"))
        table, choices, status, kbs, scope_update = self.refresh(scope, request)
        report = f"🗑️ {escape_text(name)}: " + both(
            "deleted from the catalog, the vector index and the keyword index.",
            "已从目录、向量索引和关键词索引中删除。",
        )
        return report, table, choices, status, kbs, scope_update

    def account(self, request: gr.Request | None = None) -> tuple[str, Any, Any, Any]:
        """On page load: who is signed in (or that accounts are off), and the controls their role may use
        shown (upload, delete, editing the intent tree); the engine refuses the rest whatever the page shows."""
        username = getattr(request, "username", None) if request is not None else None
        if self.engine.accounts is None:  # said under "About"
            line = ""
            actor = LOCAL_ACTOR
        else:
            try:
                actor = actor_of(self.engine, request)
            except AccessDenied:
                actor = Actor(username or "?", "reader", frozenset())  # removed since signing in: read only
            signed = both("Signed in as", "已登录：")
            en, zh = ROLE_WORDS.get(actor.role, (actor.role, actor.role))
            role = both(en.lower(), zh)
            line = f"👤 {signed} **{escape_text(actor.name)}** ({role}) · [{both('Log out', '退出')}](/logout)"
        return (
            line,
            gr.update(visible=may(actor, Action.UPLOAD)),
            gr.update(visible=may(actor, Action.DELETE)),
            gr.update(visible=may(actor, Action.EDIT_INTENTS)),
        )

    def status_line(self) -> str:
        s = self.engine.status()
        rerank = (
            f"🔁 {both('Reranker', '重排序模型')}: {code_span(s.reranker)}"
            if s.reranking_enabled
            else "🔁 "
            + both(
                "Reranking is **off** (`RAGAPP_RERANK__BACKEND=builtin` turns on the shipped one)",
                "重排序**未开启**（`RAGAPP_RERANK__BACKEND=builtin` 可启用内置模型）",
            )
        )
        counts = both(f"{s.documents} documents, {s.chunks} chunks", f"{s.documents} 份文档，{s.chunks} 个片段")
        return f"🤖 {code_span(s.llm)} · 🧮 {code_span(s.embedder)} · {rerank} · 📚 {counts}"  # names


def scope_of(picked: list[str] | None) -> Scope:
    """The knowledge bases picked in "Search in" as a scope: none picked means all of them."""
    return frozenset(picked) if picked else None


def filter_of(tags: list[str] | None, path: str | None, types: list[str] | None) -> DocumentFilter | None:
    """The Chat's filter as the engine takes it (None when nothing is set); ``gr.Error`` saying what is wrong."""
    fields = {"tags": tuple(tags or ()), "path_prefix": (path or "").strip() or None, "file_types": tuple(types or ())}
    try:
        where = DocumentFilter(**fields)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise gr.Error(both(f"The filter is not valid: {problems}", f"筛选条件无效：{problems}")) from None
    return None if where.is_empty() else where


def mode_of(picked: str | None) -> Mode | None:
    """The mode picked in "Mode" for the engine; anything else (nothing picked) means the configured default."""
    return cast(Mode, picked) if picked in {value for _label, value in MODE_CHOICES} else None


def ingest_summary(results: list[IngestResult]) -> str:
    return "\n".join(f"{_STATUS_ICON[r.status]} {ingest_line(r)}" for r in results)


def ingest_line(result: IngestResult) -> str:
    """What happened to one file, in both languages (a refusal from its record; a result stored before the
    engine kept one: its English)."""
    name, kb = escape_text(result.name), escape_text(result.kb)
    n = result.chunks
    if result.status in ("added", "replaced") and result.kb:
        notes_en = "".join(f"; {note.worded(False, escape_text) or escape_text(note.english)}" for note in result.notes)
        notes_zh = "".join(f"；{note.worded(True, escape_text) or escape_text(note.english)}" for note in result.notes)
        if result.status == "added":
            en, zh = f"added to '{kb}'", f"已加入“{kb}”"
        else:
            en, zh = f"replaced the earlier version in '{kb}'", f"已替换“{kb}”中的旧版本"
        return f"{name}: " + both(f"{en} ({n} chunks{notes_en}).", f"{zh}（{n} 个片段{notes_zh}）。")
    if result.status == "replaced":
        return f"{name}: " + both(f"indexed again ({n} chunks).", f"已重新索引（{n} 个片段）。")
    if result.status == "cancelled":
        return f"{name}: " + both("not added: the upload was stopped.", "未加入：上传已停止。")
    return said_or_english(result.said, result.message, escape_text)  # names are in them


def _boilerplate_reason(reason: str) -> str:
    """Why a page was left out ("table of contents"), in both languages from the catalogue's terms; a reason
    this version has no words for, as it is."""
    words = TERMS["reasons"].get(reason)
    return both(*(html.escape(w) for w in words)) if words else html.escape(reason)


def _where(section: SkippedSection) -> str:
    """'p. 3', the heading, or 'section 4', in both languages (``SkippedSection.location`` is the English)."""
    if section.page is not None:
        return both(f"p. {section.page}", f"第 {section.page} 页")
    if section.heading:
        return html.escape(section.heading)
    n = section.ordinal + 1
    return both(f"section {n}", f"第 {n} 节")
