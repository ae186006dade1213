"""The Memory panel (an accordion in the chats sidebar): the user's memories with their dates, to edit, delete
or add, and memory turned off for themselves; and "Remember this" under an answer that offered to keep something.

Every call names the page's owner (the signed-in user, or this browser with accounts off) and goes through the
engine's ``memories`` facet, which only ever touches that owner's memories.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import gradio as gr

from ragapp.engine.engine import Engine
from ragapp.ui.handlers import Handlers, user_errors
from ragapp.ui.i18n import both, t
from ragapp.ui.memory_words import REMEMBER_CHOICE, kept_note
from ragapp.ui.state import Session, actor_of, owner_of

APP_OFF = both(
    "Memory is turned off for this app (`RAGAPP_MEMORY__ENABLED`).",
    "本应用已关闭记忆功能（`RAGAPP_MEMORY__ENABLED`）。",
)


@dataclass(frozen=True)
class MemoryPanel:
    panel: gr.Accordion
    status: gr.Markdown
    enabled: gr.Checkbox
    listing: gr.Radio
    text: gr.Textbox
    save: gr.Button
    add: gr.Button
    delete: gr.Button
    refresh: gr.Button


def build_memory_panel() -> MemoryPanel:
    """The panel's components (inside the chats sidebar)."""
    with gr.Accordion(t("memory.title"), open=False, elem_id="memory-panel") as panel:
        status = gr.Markdown(elem_id="memory-status")
        enabled = gr.Checkbox(value=True, label=t("memory.use"), info=t("memory.use_info"), elem_id="memory-on")
        listing = gr.Radio(choices=[], label=t("memory.list"), elem_id="memory-list")
        text = gr.Textbox(
            label=t("memory.text"), placeholder=t("memory.text_placeholder"), lines=2, elem_id="memory-text"
        )
        with gr.Row():
            save = gr.Button(t("memory.save"), size="sm", elem_id="memory-save")
            add = gr.Button(t("memory.add"), size="sm", elem_id="memory-add")
            delete = gr.Button(t("common.delete"), size="sm", variant="stop", elem_id="memory-delete")
        refresh = gr.Button(t("memory.refresh"), size="sm", elem_id="memory-refresh")
    return MemoryPanel(panel, status, enabled, listing, text, save, add, delete, refresh)


class MemoryHandlers:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def shown(self, stored: str | None, request: gr.Request | None = None) -> tuple[str, Any, Any, str]:
        """The panel as the owner sees it now: a status line, the checkbox, the list (nothing picked), no text."""
        memories = self.engine.memories
        if not memories.on:
            return APP_OFF, gr.update(value=False, interactive=False), gr.update(choices=[], value=None), ""
        owner, actor = owner_of(self.engine, stored, request), actor_of(self.engine, request)
        kept = memories.list(owner, actor=actor)
        on = memories.enabled_for(owner)
        count = len(kept)
        line = both(f"{count} {'memory' if count == 1 else 'memories'} kept.", f"已保存 {count} 条记忆。")
        if not on:
            line += " " + both("Memory is off for you: none is used or offered.", "你已关闭记忆：不会使用或提议记忆。")
        choices = [(f"{m.created_at[:10]} · {m.text}", m.id) for m in kept]
        return line, gr.update(value=on, interactive=True), gr.update(choices=choices, value=None), ""

    def picked(self, memory_id: str | None, stored: str | None, request: gr.Request | None = None) -> str:
        """The picked memory's text, to edit."""
        owner, actor = owner_of(self.engine, stored, request), actor_of(self.engine, request)
        found = next((m for m in self.engine.memories.list(owner, actor=actor) if m.id == memory_id), None)
        return found.text if found is not None else ""

    @user_errors
    def save(
        self, memory_id: str | None, text: str, stored: str | None, request: gr.Request | None = None
    ) -> tuple[str, Any, Any, str]:
        if not memory_id:
            raise gr.Error(both("Pick a memory to change first.", "请先选择要修改的记忆。"))
        owner, actor = owner_of(self.engine, stored, request), actor_of(self.engine, request)
        _toast(self.engine.memories.edit(owner, memory_id, text or "", actor=actor))
        return self.shown(stored, request)

    @user_errors
    def add(self, text: str, stored: str | None, request: gr.Request | None = None) -> tuple[str, Any, Any, str]:
        owner, actor = owner_of(self.engine, stored, request), actor_of(self.engine, request)
        _toast(self.engine.memories.add(owner, text or "", "said", actor=actor))
        return self.shown(stored, request)

    @user_errors
    def delete(
        self, memory_id: str | None, stored: str | None, request: gr.Request | None = None
    ) -> tuple[str, Any, Any, str]:
        if not memory_id:
            raise gr.Error(both("Pick a memory to delete first.", "请先选择要删除的记忆。"))
        owner, actor = owner_of(self.engine, stored, request), actor_of(self.engine, request)
        if self.engine.memories.delete(owner, memory_id, actor=actor):
            gr.Info(both("Memory deleted: it is no longer used.", "记忆已删除，不会再被使用。"))
        return self.shown(stored, request)

    @user_errors
    def toggle(self, on: bool, stored: str | None, request: gr.Request | None = None) -> tuple[str, Any, Any, str]:
        owner, actor = owner_of(self.engine, stored, request), actor_of(self.engine, request)
        self.engine.memories.set_enabled(owner, bool(on), actor=actor)
        return self.shown(stored, request)


def accept_offer(engine: Engine, chat: list[Any], session: Session, stored: str | None, request: Any) -> list[Any]:
    """ "Remember this" under the last answer: keep what it offered; the chat says what was kept."""
    last = session.exchanges[-1].turn if session.exchanges else None
    if last is None or last.proposal is None:  # a stale button: nothing offered last
        return chat
    offered = last.proposal
    owner, actor = owner_of(engine, stored, request), actor_of(engine, request)
    kept = engine.memories.add(owner, offered.text, "accepted", actor=actor)
    last.proposal = None  # once
    return [*chat, gr.ChatMessage(role="assistant", content="🧠 " + kept_note(kept))]


def choosing(engine: Engine, handlers: Handlers) -> Callable[..., Iterator[tuple[str, list[Any], Session]]]:
    """The chat's choice handler: "Remember this" keeps the offer; any other choice goes to ``Handlers.choose``
    (a pick after the app asked back, "Answer again")."""

    def choose(
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
        if str(choice.value) == REMEMBER_CHOICE["value"]:
            session = session or Session()
            yield "", accept_offer(engine, chat, session, owner, request), session
            return
        yield from handlers.choose(choice, chat, session, scope, mode, owner, tags, path, types, request)

    return choose


def _toast(event: Any) -> None:
    if event.memory_id:
        gr.Info(kept_note(event))
    else:
        raise gr.Error(kept_note(event))


def wire_memory(panel: MemoryPanel, handlers: MemoryHandlers, owner: gr.BrowserState) -> None:
    """The panel's events (the chat refreshes it after each answer: ``chat_tab.wire_chat``)."""
    outputs = [panel.status, panel.enabled, panel.listing, panel.text]
    panel.panel.expand(handlers.shown, inputs=[owner], outputs=outputs)
    panel.refresh.click(handlers.shown, inputs=[owner], outputs=outputs)
    panel.listing.input(handlers.picked, inputs=[panel.listing, owner], outputs=[panel.text])
    panel.save.click(handlers.save, inputs=[panel.listing, panel.text, owner], outputs=outputs)
    panel.add.click(handlers.add, inputs=[panel.text, owner], outputs=outputs)
    panel.delete.click(handlers.delete, inputs=[panel.listing, owner], outputs=outputs)
    panel.enabled.input(handlers.toggle, inputs=[panel.enabled, owner], outputs=outputs)
