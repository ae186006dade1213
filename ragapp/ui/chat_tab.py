"""The Chat tab and the sidebar of past chats: their components, and the events that tie them to the handlers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr

from ragapp.config import REPO_ROOT
from ragapp.engine.engine import Engine
from ragapp.ui.chat_exports import FORMAT_CHOICES, ChatExports
from ragapp.ui.chats import ChatHistory, Feedback
from ragapp.ui.documents import DocumentHandlers
from ragapp.ui.handlers import MODE_CHOICES, Handlers
from ragapp.ui.i18n import t, t_str
from ragapp.ui.memory_panel import MemoryHandlers, MemoryPanel, build_memory_panel, choosing, wire_memory
from ragapp.ui.page_language import shown

ASSETS = REPO_ROOT / "assets"


def example_questions(path: Path = ASSETS / "examples.json", lang: str | None = None) -> list[str]:
    """The demo questions; ``lang`` ("en", "zh"): only those in that language (and those that name none)."""
    try:
        items = json.loads(path.read_text("utf-8"))
        return [item["question"] for item in items if lang is None or item.get("lang") in (lang, None)]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []


# While an answer is being written its 👍/👎 (and copy) wait: a rating would judge a draft the check may change.
# Gradio marks the question box, an output of the answer's event, as "generating" until the event ends.
# A [n] in an answer opens that answer's source n in the panel beside it, closed or not: the script sends the
# message's position and n (and a nonce, so that the same marker clicked again is an input again) through a
# hidden box to ``DocumentHandlers.cite_marker``. The panel's list cannot be clicked instead: Gradio takes a
# hidden column's components out of the page.
CHAT_HEAD = r"""<style>
body:has(#question .generating) #chatbot .message-wrap >
  .message-buttons-left:not(:has(~ .message-buttons-left)) { visibility: hidden; }
#chatbot .cite-marker { cursor: pointer; color: var(--link-text-color); }
</style>
<script>
document.addEventListener("click", (event) => {
  const marker = event.target instanceof Element ? event.target.closest("#chatbot .cite-marker") : null;
  const box = document.querySelector("#citation-wanted textarea, #citation-wanted input");
  if (!marker || !box) return;
  const number = (marker.textContent.match(/\d+/) || [""])[0];  // the first number of "[2]", "[2, 3]", "【2】"
  const messages = Array.from(document.querySelectorAll("#chatbot [data-testid=user], #chatbot [data-testid=bot]"));
  const index = messages.indexOf(marker.closest("[data-testid]"));
  box.value = `${index}:${number}:${Date.now()}`;
  box.dispatchEvent(new Event("input", { bubbles: true }));
});
</script>"""


@dataclass(frozen=True)
class ChatsSidebar:
    panel: gr.Sidebar
    new_chat: gr.Button
    chat_list: gr.Radio
    chat_title: gr.Textbox
    rename_chat: gr.Button
    delete_chat: gr.Button
    export_format: gr.Radio
    export_chat: gr.Button
    export_all: gr.Button
    exported: gr.File
    memory: MemoryPanel


def build_chats_sidebar() -> ChatsSidebar:
    with gr.Sidebar(label=t("chats.sidebar"), open=False, elem_id="chats-sidebar") as panel:
        new_chat = gr.Button(t("chats.new"), elem_id="new-chat")
        chat_list = gr.Radio(choices=[], label=t("chats.past"), elem_id="chat-list")
        chat_title = gr.Textbox(
            label=t("chats.title"), show_label=False, placeholder=t("chats.title"), elem_id="chat-title"
        )
        with gr.Row():
            rename_chat = gr.Button(t("chats.rename"), size="sm", elem_id="rename-chat")
            delete_chat = gr.Button(t("common.delete"), size="sm", variant="stop", elem_id="delete-chat")
        # The chat to take along (answers, citations, confidence): ragapp.ui.chat_exports.
        export_format = gr.Radio(
            choices=FORMAT_CHOICES, value="markdown", label=t("chats.export_as"), elem_id="export-format"
        )
        export_chat = gr.Button(t("chats.export"), size="sm", elem_id="export-chat")
        export_all = gr.Button(t("chats.export_all"), size="sm", elem_id="export-all-chats")
        exported = gr.File(label=t("chats.export_file"), interactive=False, visible=False, elem_id="chat-export-file")
        memory = build_memory_panel()  # what the user asked to remember: ragapp.ui.memory_panel
    return ChatsSidebar(
        panel, new_chat, chat_list, chat_title, rename_chat, delete_chat, export_format, export_chat, export_all,
        exported, memory,
    )  # fmt: skip


@dataclass(frozen=True)
class ChatTab:
    chatbot: gr.Chatbot
    citation_view: gr.Column
    citation_choice: gr.Radio
    citation_title: gr.Markdown
    close_citation: gr.Button
    citation_page: gr.Image
    citation_section: gr.Markdown
    citation_wanted: gr.Textbox
    feedback_row: gr.Row
    comment: gr.Textbox
    send_comment: gr.Button
    save_case: gr.Button
    question: gr.Textbox
    send: gr.Button
    clear: gr.Button
    scope: gr.Dropdown
    mode: gr.Radio
    filter_tags: gr.Dropdown
    filter_path: gr.Textbox
    filter_types: gr.Dropdown


def build_chat_tab(engine: Engine, handlers: Handlers, public: bool) -> ChatTab:
    """The Chat tab's components. ``public``: accounts are off, so the knowledge bases are listed at once."""
    with gr.Tab(t("chat.tab"), id="chat"):
        # The answer and, beside it (under it on a narrow screen), its sources: the cited passages in citation
        # order, the one picked drawn on its page with the passage marked (or its section, for other files).
        with gr.Row(equal_height=False):
            with gr.Column(scale=3, min_width=480):
                chatbot = gr.Chatbot(
                    elem_id="chatbot",
                    height=440,
                    label=t("chat.chatbot"),
                    buttons=["copy"],
                    placeholder=t_str("chat.placeholder"),
                )
            with gr.Column(scale=2, min_width=360, visible=False, elem_id="citation-view") as citation_view:
                with gr.Row():
                    citation_choice = gr.Radio(choices=[], label=t("cite.sources"), elem_id="citation-choice")
                    close_citation = gr.Button(t("cite.close"), size="sm", elem_id="citation-close", scale=0)
                citation_title = gr.Markdown(elem_id="citation-title")
                citation_page = gr.Image(
                    label=t("cite.page"), type="pil", interactive=False, visible=False, elem_id="citation-page"
                )
                citation_section = gr.Markdown(elem_id="citation-section")
            citation_wanted = gr.Textbox(visible="hidden", show_label=False, container=False, elem_id="citation-wanted")
        # Opened by a thumbs-down: say what was wrong, or keep the question as a test case.
        with gr.Row(visible=False, elem_id="feedback-row") as feedback_row:
            comment = gr.Textbox(
                label=t("chat.feedback_placeholder"),
                show_label=False,
                placeholder=t("chat.feedback_placeholder"),
                elem_id="feedback-comment",
                scale=6,
            )
            send_comment = gr.Button(t("chat.feedback_send"), elem_id="feedback-send", scale=1)
            save_case = gr.Button(t("chat.save_case"), elem_id="feedback-save-case", scale=1)
        with gr.Row():
            question = gr.Textbox(
                elem_id="question",
                label=t("chat.question"),
                show_label=False,
                placeholder=t("chat.question"),
                scale=8,
                autofocus=True,
            )
            send = gr.Button(t("chat.send"), variant="primary", elem_id="send", scale=1)
            clear = gr.Button(t("chat.clear"), elem_id="clear", scale=1)
        # The demo questions in the page's language (a style in ragapp.ui.page_language.HEAD hides the others).
        for lang in ("en", "zh"):
            if examples := example_questions(lang=lang):
                with gr.Column(elem_id=f"examples-{lang}"):
                    gr.Examples(examples=[[q] for q in examples], inputs=question, label=t("chat.examples"))
        with gr.Row():
            scope = gr.Dropdown(
                choices=handlers.kb_names() if public else [],
                value=[],
                multiselect=True,
                label=t("chat.scope"),
                info=t("chat.scope_info"),
                elem_id="chat-scope",
                scale=1,
            )
            mode = gr.Radio(
                choices=MODE_CHOICES,
                value=engine.settings.agent.mode,
                label=t("chat.mode"),
                info=t("chat.mode_info"),
                elem_id="chat-mode",
                scale=1,
            )
        # Narrows "Search in" to some documents: with any of the tags, a path starting so, of those types.
        with gr.Accordion(t("chat.filter"), open=False, elem_id="chat-filter"), gr.Row():
            filter_tags = gr.Dropdown(
                choices=[], value=[], multiselect=True, allow_custom_value=True,  # the load fills them (tag_choices)
                label=t("chat.filter_tags"), info=t("chat.filter_tags_info"), elem_id="chat-filter-tags",
            )  # fmt: skip
            filter_path = gr.Textbox(
                label=t("chat.filter_path"), info=t("chat.filter_path_info"), elem_id="chat-filter-path"
            )
            filter_types = gr.Dropdown(
                choices=[e.lstrip(".") for e in engine.library.supported_extensions()], value=[], multiselect=True,
                label=t("chat.filter_types"), info=t("chat.filter_types_info"), elem_id="chat-filter-types",
            )  # fmt: skip
    return ChatTab(
        chatbot, citation_view, citation_choice, citation_title, close_citation, citation_page, citation_section,
        citation_wanted, feedback_row, comment, send_comment, save_case, question, send, clear, scope, mode,
        filter_tags, filter_path, filter_types,
    )  # fmt: skip


def memory_outputs(panel: MemoryPanel) -> list[Any]:
    return [panel.status, panel.enabled, panel.listing, panel.text]


def wire_chat(
    engine: Engine,
    tab: ChatTab,
    sidebar: ChatsSidebar,
    handlers: Handlers,
    session: gr.State,
    owner: gr.BrowserState,
    open_chat: gr.BrowserState,
) -> ChatHistory:
    """The Chat tab's and the sidebar's events; the chat history, whose ``restore`` the page's load calls."""
    history, feedback, documents = ChatHistory(engine), Feedback(engine), DocumentHandlers(engine)
    chatbot, question = tab.chatbot, tab.question
    where = [tab.filter_tags, tab.filter_path, tab.filter_types]
    chat_io = {
        "inputs": [question, chatbot, session, tab.scope, tab.mode, owner, *where],
        "outputs": [question, chatbot, session],
    }
    # Each answer, once written, is kept in the user's chats. This and the sources below run outside Gradio's queue
    # (one plain request each, no queue join and event stream): both take milliseconds and call no model, and the
    # answer's 👍/👎 and "Answer again" wait for them; much of a kept answer's time on the page is these round trips
    # (docs/benchmarks.md, "A question asked again").
    keep: dict[str, Any] = {
        "fn": history.persist,
        "inputs": [session, owner],
        "outputs": [session, open_chat, sidebar.chat_list],
        "queue": False,
    }
    # ...and its sources shown beside it.
    citation = [tab.citation_page, tab.citation_title, tab.citation_view, tab.citation_section]
    sources: dict[str, Any] = {
        "fn": documents.cite_latest,
        "inputs": [session],
        "outputs": [*citation, tab.citation_choice],
        "queue": False,
    }
    # ...and the Memory panel shows what it may have kept ("remember that ...").
    memory = MemoryHandlers(engine)
    memory_shown: dict[str, Any] = {"fn": memory.shown, "inputs": [owner], "outputs": memory_outputs(sidebar.memory)}
    question.submit(handlers.respond, **chat_io).then(**keep).then(**sources).then(**memory_shown)  # type: ignore[arg-type]
    tab.send.click(handlers.respond, **chat_io).then(**keep).then(**sources).then(**memory_shown)  # type: ignore[arg-type]
    # A click on a choice the app offered when it asked back ("which product do you mean?"), or "Remember this".
    chatbot.option_select(
        choosing(engine, handlers),
        inputs=[chatbot, session, tab.scope, tab.mode, owner, *where],
        outputs=[question, chatbot, session],
    ).then(**keep).then(**sources).then(**memory_shown)
    wire_memory(sidebar.memory, memory, owner)
    fresh: dict[str, Any] = {
        "fn": history.new_chat,
        "inputs": [owner],
        "outputs": [chatbot, session, open_chat, sidebar.chat_list],
    }
    # The sources panel follows the chat shown: a chat started or opened shows its own last answer's sources.
    tab.clear.click(**fresh).then(**sources)
    sidebar.new_chat.click(**fresh).then(**sources)
    sidebar.chat_list.input(
        history.open, inputs=[sidebar.chat_list, owner], outputs=[chatbot, session, open_chat]
    ).then(**sources)
    sidebar.rename_chat.click(
        history.rename,
        inputs=[sidebar.chat_list, sidebar.chat_title, owner],
        outputs=[sidebar.chat_list, sidebar.chat_title],
    )
    sidebar.delete_chat.click(
        history.delete,
        inputs=[sidebar.chat_list, session, chatbot, owner],
        outputs=[sidebar.chat_list, chatbot, session, open_chat],
    ).then(**sources)
    exports = ChatExports(engine)
    # A file exported from another chat is not offered beside this one.
    for picked in (tab.clear.click, sidebar.new_chat.click, sidebar.chat_list.input):
        picked(ChatExports.withdrawn, outputs=[sidebar.exported], queue=False)
    sidebar.export_chat.click(
        exports.export, inputs=[sidebar.chat_list, session, sidebar.export_format, owner], outputs=[sidebar.exported]
    )
    sidebar.export_all.click(exports.export_all, inputs=[owner], outputs=[sidebar.exported])
    chatbot.like(feedback.rate, inputs=[session, owner], outputs=[tab.feedback_row, session])
    comment_io = {"inputs": [tab.comment, session, owner], "outputs": [tab.feedback_row, tab.comment]}
    tab.send_comment.click(feedback.comment, **comment_io)  # type: ignore[arg-type]
    tab.comment.submit(feedback.comment, **comment_io)  # type: ignore[arg-type]
    tab.save_case.click(feedback.save_case, inputs=[session, owner], outputs=[tab.feedback_row])
    chatbot.select(documents.cite, inputs=[session], outputs=[*citation, tab.citation_choice])
    tab.citation_choice.input(documents.cite_picked, inputs=[tab.citation_choice, session], outputs=citation)
    tab.citation_wanted.change(
        documents.cite_marker, inputs=[tab.citation_wanted, session], outputs=[*citation, tab.citation_choice],
        queue=False,
    )  # fmt: skip
    tab.filter_tags.focus(handlers.tag_choices, outputs=[tab.filter_tags], queue=False)  # the tags saved since
    tab.close_citation.click(lambda: gr.update(visible=shown(False)), outputs=[tab.citation_view])
    return history
