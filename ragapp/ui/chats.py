"""Past chats in the sidebar, and feedback on answers.

``ChatHistory``: after each answer the conversation is kept (as shown, with what the next question needs to
remember); the sidebar lists the user's chats to open, rename or delete; a reload opens the chat that was open
(its id is kept in the browser, and only ever opens the owner's own). ``Feedback``: a thumbs up or down on any
message of an answer is kept with that answer's trace; a thumbs-down opens a box for a comment and a button to
keep the question as a test case. Every call acts as the signed-in user (the engine checks).
"""

from typing import Any

import gradio as gr

from ragapp.engine.engine import Engine
from ragapp.ui.conversation_view import memory_of, message_of, records_of, turns_of
from ragapp.ui.figure_view import figure_pictures
from ragapp.ui.handlers import user_errors
from ragapp.ui.i18n import both
from ragapp.ui.page_language import shown
from ragapp.ui.state import Session, actor_of, owner_of

PICK_A_CHAT = both("Pick a chat in the list first.", "请先在列表中选择一个对话。")
THUMBS_DOWN_FIRST = both("Give a thumbs-down on an answer first.", "请先对一个回答点踩。")
THANKS = both("Thanks, your feedback is kept with this answer's trace.", "感谢反馈，已随本次回答的追踪记录保存。")


class ChatHistory:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def listing(self, stored: str | None, current: str | None = None, request: gr.Request | None = None) -> Any:
        """The sidebar's list: the user's chats, the latest first ("title · date"), ``current`` picked."""
        chats = self.engine.conversations.list(
            owner_of(self.engine, stored, request), actor=actor_of(self.engine, request)
        )
        choices = [(f"{c.title} · {c.updated_at[:10]}", c.id) for c in chats]
        return gr.update(choices=choices, value=current if any(c.id == current for c in chats) else None)

    def persist(
        self, session: Session | None, stored: str | None, request: gr.Request | None = None
    ) -> tuple[Session, str, Any]:
        """After an answer: keep the conversation; returns the session, the id the browser keeps, the list."""
        session = session or Session()
        if not session.records:
            return session, session.conversation_id or "", self.listing(stored, session.conversation_id, request)
        title = next((str(r.get("content", "")) for r in session.records if r.get("role") == "user"), "")
        kept = self.engine.conversations.save(
            owner_of(self.engine, stored, request),
            session.conversation_id,
            title,
            session.exchanges,
            memory_of(session.history, session.summary),
            shown=session.records if session.as_shown else None,
            actor=actor_of(self.engine, request),
        )
        session.conversation_id = kept
        return session, kept or "", self.listing(stored, kept, request)

    @user_errors
    def open(
        self, conversation_id: str | None, stored: str | None, request: gr.Request | None = None
    ) -> tuple[list[gr.ChatMessage], Session, str]:
        """Show a past chat as it was, ready to go on (its memory restored)."""
        found = (
            self.engine.conversations.open(
                owner_of(self.engine, stored, request), conversation_id, actor=actor_of(self.engine, request)
            )
            if conversation_id
            else None
        )
        if found is None:
            return [], Session(), ""
        history, summary = turns_of(found.memory)
        session = Session(history=history, summary=summary, conversation_id=found.id)
        if found.as_shown:
            session.records, session.as_shown = list(found.messages), True
        else:
            cited = [c for exchange in found.exchanges for c in exchange.turn.citations]
            figures = figure_pictures(self.engine, cited, actor_of(self.engine, request))  # drawn anew: not kept
            session.records = records_of(found.exchanges, found.deleted, figures)
            session.exchanges = list(found.exchanges)
        return [message_of(r) for r in session.records], session, found.id

    def restore(
        self,
        stored: str | None,
        open_id: str | None,
        session: Session | None = None,
        request: gr.Request | None = None,
    ) -> tuple[Any, Any, Any, Any]:
        """On page load: the chat that was open in this browser (if it is still the user's), and the list. With
        none to reopen, the chat and the session are left alone: a question asked before this load event ran
        (the page answers at once) must not be wiped by it. Once this page has asked (``session`` holds it),
        nothing is touched: the list read here could land after the one the kept answer sent, and hide it."""
        if session is not None and (session.records or session.conversation_id):
            return gr.update(), gr.update(), gr.update(), gr.update()
        try:
            chat, session, kept = self.open(open_id, stored, request)
        except gr.Error:
            kept = ""
        if not kept:
            return gr.update(), gr.update(), "", self.listing(stored, None, request)
        return chat, session, kept, self.listing(stored, kept, request)

    @user_errors
    def rename(
        self, conversation_id: str | None, title: str, stored: str | None, request: gr.Request | None = None
    ) -> tuple[Any, str]:
        if not conversation_id:
            raise gr.Error(PICK_A_CHAT)
        if not (title or "").strip():
            raise gr.Error(both("Type the new title first.", "请先输入新标题。"))
        owner = owner_of(self.engine, stored, request)
        self.engine.conversations.rename(owner, conversation_id, title, actor=actor_of(self.engine, request))
        return self.listing(stored, conversation_id, request), ""

    @user_errors
    def delete(
        self,
        conversation_id: str | None,
        session: Session | None,
        chat: list[Any],
        stored: str | None,
        request: gr.Request | None = None,
    ) -> tuple[Any, list[Any], Session, str]:
        """Delete the picked chat; when it is the open one, the chat starts afresh."""
        if not conversation_id:
            raise gr.Error(PICK_A_CHAT)
        session = session or Session()
        owner = owner_of(self.engine, stored, request)
        self.engine.conversations.delete(owner, conversation_id, actor=actor_of(self.engine, request))
        if session.conversation_id == conversation_id:
            chat, session = [], Session()
        return self.listing(stored, session.conversation_id, request), chat, session, session.conversation_id or ""

    def new_chat(self, stored: str | None, request: gr.Request | None = None) -> tuple[list[Any], Session, str, Any]:
        return [], Session(), "", self.listing(stored, None, request)


class Feedback:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @user_errors
    def rate(
        self, like: gr.LikeData, session: Session | None, stored: str | None, request: gr.Request | None = None
    ) -> tuple[Any, Session]:
        """A thumbs up or down on a message: kept with its answer's trace; a thumbs-down opens the comment box."""
        session = session or Session()
        index = like.index[0] if isinstance(like.index, list | tuple) else like.index
        record = session.records[index] if isinstance(index, int) and 0 <= index < len(session.records) else {}
        trace_id = str(record.get("trace_id") or "")
        if not trace_id:
            raise gr.Error(
                both(
                    "Feedback goes on an answer: this message has none (or tracing is off).",
                    "反馈针对回答：这条消息不是回答（或未开启追踪）。",
                )
            )
        rating = "up" if like.liked in (True, "Like") else "down" if like.liked in (False, "Dislike") else ""
        if not rating:  # the thumb was taken back: nothing to keep
            return gr.update(visible=shown(False)), session
        owner = owner_of(self.engine, stored, request)
        self.engine.observability.give_feedback(trace_id, owner, rating, actor=actor_of(self.engine, request))
        session.feedback_trace = trace_id if rating == "down" else ""
        gr.Info(THANKS)
        return gr.update(visible=shown(rating == "down")), session

    @user_errors
    def comment(
        self, text: str, session: Session | None, stored: str | None, request: gr.Request | None = None
    ) -> tuple[Any, str]:
        """The comment on a thumbs-down, kept with the rating."""
        trace_id = session.feedback_trace if session is not None else ""
        if not trace_id:
            raise gr.Error(THUMBS_DOWN_FIRST)
        owner = owner_of(self.engine, stored, request)
        actor = actor_of(self.engine, request)
        self.engine.observability.give_feedback(trace_id, owner, "down", text or "", actor=actor)
        gr.Info(THANKS)
        return gr.update(visible=shown(False)), ""

    @user_errors
    def save_case(self, session: Session | None, stored: str | None, request: gr.Request | None = None) -> Any:
        """Keep the question of the thumbed-down answer as a test case expecting the documents it cited (change
        them in the Traces tab, where the case is listed)."""
        trace_id = session.feedback_trace if session is not None else ""
        if session is None or not trace_id:
            raise gr.Error(THUMBS_DOWN_FIRST)
        owner, actor = owner_of(self.engine, stored, request), actor_of(self.engine, request)
        trace = self.engine.observability.trace(trace_id, owner, actor=actor)
        if trace is None:
            raise gr.Error(
                both(
                    "That answer's trace is gone (traces are kept for a limited time).",
                    "这个回答的追踪记录已不在（追踪记录只保留一段时间）。",
                )
            )
        names = {d.doc_id: d.name for d in self.engine.library.documents(actor=actor)}
        cited = sorted({names[r["doc_id"]] for r in session.records if r.get("trace_id") == trace_id
                        and r.get("doc_id") in names})  # fmt: skip
        if not cited:
            raise gr.Error(
                both(
                    "This answer cites no document that still exists: open it in the Traces tab and pick the "
                    "documents that should answer it.",
                    "该回答没有引用现存文档，请在追踪页选择应命中的文档。",
                )
            )
        case = self.engine.observability.save_test_case(owner, trace.question, cited, None, trace.id)
        gr.Info(both(f"Saved test case #{case.id} (Traces tab)", f"已存为测试用例 #{case.id}（见追踪页）"))
        return gr.update(visible=shown(False))
