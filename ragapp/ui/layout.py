"""The Gradio app: Chat, Knowledge, Intents, Traces and Admin tabs, and the sidebar of past chats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gradio as gr

from ragapp.config import REPO_ROOT
from ragapp.core.types import DEFAULT_KB
from ragapp.engine.engine import Engine
from ragapp.ui.admin import build_admin_tab
from ragapp.ui.chats import ChatHistory, Feedback
from ragapp.ui.documents import CHUNK_HEADERS, DocumentHandlers
from ragapp.ui.handlers import DOC_HEADERS, MODE_CHOICES, Handlers
from ragapp.ui.i18n import SWITCH, t, t_str
from ragapp.ui.intents_layout import build_intents_tab
from ragapp.ui.state import UploadControl, ensure_owner
from ragapp.ui.traces import build_traces_tab

ASSETS = REPO_ROOT / "assets"


def example_questions(path: Path = ASSETS / "examples.json", lang: str | None = None) -> list[str]:
    """The demo questions; ``lang`` ("en", "zh"): only those in that language (and those that name none)."""
    try:
        items = json.loads(path.read_text("utf-8"))
        return [item["question"] for item in items if lang is None or item.get("lang") in (lang, None)]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []


def build_ui(engine: Engine) -> gr.Blocks:
    handlers = Handlers(engine)
    extensions = engine.library.supported_extensions()
    # With accounts on, what the page starts with names no document or knowledge base: the load event fills in
    # what the signed-in user may see.
    public = engine.accounts is None
    # Uploads Gradio keeps in its cache are removed hourly once an hour old (the handler removes its own at once).
    with gr.Blocks(title="ragapp", delete_cache=(3600, 3600)) as demo:
        session = gr.State(None)  # a Session, created on the first question
        # Whose traces and test cases: an id this browser keeps between visits (a login name wins over it).
        # Gradio encrypts what the browser keeps with a random key per process unless given one: a restart, or
        # another replica, could not read it back and the browser would lose its chats. So a key from our secret.
        kept = engine.signer.derive("browser-state")
        owner = gr.BrowserState("", storage_key="ragapp-owner", secret=kept)
        # The chat open in this browser, reopened on reload (only ever one of the owner's own).
        open_chat = gr.BrowserState("", storage_key="ragapp-open-chat", secret=kept)
        history, feedback, documents = ChatHistory(engine), Feedback(engine), DocumentHandlers(engine)
        upload_control = gr.State(UploadControl())  # the Stop button's signal, one per browser session
        with gr.Sidebar(label=t("chats.sidebar"), open=False, elem_id="chats-sidebar"):
            new_chat = gr.Button(t("chats.new"), elem_id="new-chat")
            chat_list = gr.Radio(choices=[], label=t("chats.past"), elem_id="chat-list")
            chat_title = gr.Textbox(show_label=False, placeholder=t("chats.title"), elem_id="chat-title")
            with gr.Row():
                rename_chat = gr.Button(t("chats.rename"), size="sm", elem_id="rename-chat")
                delete_chat = gr.Button(t("common.delete"), size="sm", variant="stop", elem_id="delete-chat")
        gr.Markdown(SWITCH, elem_id="language-switch")  # English · 中文: see ragapp/ui/i18n.py
        gr.Markdown("# ragapp\n" + t("header.tagline"), elem_id="header")
        if engine.settings.paths.ephemeral:  # e.g. a Hugging Face Space without storage
            gr.Markdown(t("header.ephemeral"), elem_id="ephemeral-notice")
        status = gr.Markdown(handlers.status_line(), elem_id="status-line")
        account = gr.Markdown(elem_id="account")
        with gr.Tabs():
            with gr.Tab(t("chat.tab"), id="chat"):
                chatbot = gr.Chatbot(
                    elem_id="chatbot",
                    height=560,
                    label=t("chat.chatbot"),
                    buttons=["copy"],
                    placeholder=t_str("chat.placeholder"),
                )
                # A citation clicked in the chat: its page, the passage marked (or its section, for other files).
                with gr.Column(visible=False, elem_id="citation-view") as citation_view:
                    with gr.Row():
                        citation_title = gr.Markdown(elem_id="citation-title")
                        close_citation = gr.Button(t("cite.close"), size="sm", elem_id="citation-close", scale=0)
                    citation_page = gr.Image(
                        label=t("cite.page"), type="pil", interactive=False, visible=False, elem_id="citation-page"
                    )
                    citation_section = gr.Markdown(elem_id="citation-section")
                # Opened by a thumbs-down: say what was wrong, or keep the question as a test case.
                with gr.Row(visible=False, elem_id="feedback-row") as feedback_row:
                    comment = gr.Textbox(
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
                        show_label=False,
                        placeholder=t("chat.question"),
                        scale=8,
                        autofocus=True,
                    )
                    send = gr.Button(t("chat.send"), variant="primary", elem_id="send", scale=1)
                    clear = gr.Button(t("chat.clear"), elem_id="clear", scale=1)
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
                # The demo questions in the page's language (a style in ragapp.ui.i18n.HEAD hides the others).
                for lang in ("en", "zh"):
                    if examples := example_questions(lang=lang):
                        with gr.Column(elem_id=f"examples-{lang}"):
                            gr.Examples(examples=[[q] for q in examples], inputs=question, label=t("chat.examples"))
            with gr.Tab(t("kb.tab"), id="knowledge"):
                # Shown to the roles that may change the knowledge bases (the engine checks again on each call).
                with gr.Column(elem_id="uploading") as uploading:
                    kb_choice = gr.Dropdown(
                        choices=handlers.upload_kb_choices() if public else [DEFAULT_KB],
                        value=DEFAULT_KB,
                        allow_custom_value=True,
                        label=t("kb.choice"),
                        info=t("kb.choice_info"),
                        elem_id="kb-choice",
                    )
                    upload = gr.File(
                        label=t("kb.upload") + f" ({', '.join(extensions)})",
                        file_count="multiple",
                        file_types=extensions,
                        elem_id="upload",
                    )
                    with gr.Row():
                        add = gr.Button(t("kb.add"), variant="primary", elem_id="add-files", scale=4)
                        stop = gr.Button(t("kb.stop"), variant="stop", elem_id="stop-upload", scale=1)
                report = gr.Markdown(elem_id="ingest-report")
                docs = gr.Dataframe(
                    value=handlers.documents_table if public else [],
                    headers=DOC_HEADERS,
                    interactive=False,
                    elem_id="documents",
                    label=t("kb.documents"),
                )
                gr.Markdown(t("kb.doc_hint"), elem_id="doc-hint")
                doc_id = gr.State("")
                with gr.Column(visible=False, elem_id="doc-view") as doc_view:
                    doc_quality = gr.Markdown(elem_id="doc-quality")
                    doc_search = gr.Textbox(show_label=False, placeholder=t("kb.doc_search"), elem_id="doc-search")
                    doc_chunks = gr.Dataframe(
                        headers=CHUNK_HEADERS, interactive=False, wrap=True, max_height=420, label=t("kb.doc_chunks"),
                        elem_id="doc-chunks",
                    )  # fmt: skip
                with gr.Accordion(t("kb.left_out"), open=False):
                    left_out = gr.Markdown(handlers.left_out_report if public else "", elem_id="left-out")
                with gr.Row() as deleting:
                    to_delete = gr.Dropdown(
                        choices=handlers.document_choices() if public else [],
                        # Gradio checks an API call's value against the choices the page was built with (empty
                        # with accounts on): the engine checks the id, the role and the knowledge base instead.
                        allow_custom_value=True,
                        label=t("kb.to_delete"),
                        elem_id="delete-choice",
                        scale=4,
                    )
                    reindex = gr.Button(t("kb.reindex"), elem_id="reindex", scale=1)
                    delete = gr.Button(t("common.delete"), variant="stop", elem_id="delete", scale=1)
            with gr.Tab(t("intents.tab"), id="intents"):
                intent_editing = build_intents_tab(engine)
            build_traces_tab(engine, owner)
            admin = build_admin_tab(engine)  # admins only: shown and filled by the load event

        chat_io = {"inputs": [question, chatbot, session, scope, mode, owner], "outputs": [question, chatbot, session]}
        # Each answer, once written, is kept in the user's chats.
        keep: dict[str, Any] = {
            "fn": history.persist,
            "inputs": [session, owner],
            "outputs": [session, open_chat, chat_list],
        }
        question.submit(handlers.respond, **chat_io).then(**keep)  # type: ignore[arg-type]
        send.click(handlers.respond, **chat_io).then(**keep)  # type: ignore[arg-type]
        # A click on a choice the app offered when it asked back ("which product do you mean?").
        chatbot.option_select(
            handlers.choose, inputs=[chatbot, session, scope, mode, owner], outputs=[question, chatbot, session]
        ).then(**keep)
        fresh: dict[str, Any] = {
            "fn": history.new_chat,
            "inputs": [owner],
            "outputs": [chatbot, session, open_chat, chat_list],
        }
        clear.click(**fresh)
        new_chat.click(**fresh)
        chat_list.input(history.open, inputs=[chat_list, owner], outputs=[chatbot, session, open_chat])
        rename_chat.click(history.rename, inputs=[chat_list, chat_title, owner], outputs=[chat_list, chat_title])
        delete_chat.click(
            history.delete,
            inputs=[chat_list, session, chatbot, owner],
            outputs=[chat_list, chatbot, session, open_chat],
        )
        chatbot.like(feedback.rate, inputs=[session, owner], outputs=[feedback_row, session])
        send_comment.click(feedback.comment, inputs=[comment, session, owner], outputs=[feedback_row, comment])
        comment.submit(feedback.comment, inputs=[comment, session, owner], outputs=[feedback_row, comment])
        save_case.click(feedback.save_case, inputs=[session, owner], outputs=[feedback_row])
        citation = [citation_page, citation_title, citation_view, citation_section]
        chatbot.select(documents.cite, inputs=[session], outputs=citation)
        close_citation.click(lambda: gr.update(visible=False), outputs=[citation_view])
        docs.select(documents.open, outputs=[doc_quality, doc_chunks, doc_id, doc_view])
        doc_search.submit(documents.search, inputs=[doc_id, doc_search], outputs=[doc_chunks])
        # Not queued: it must reach the upload while that one still runs.
        stop.click(documents.stop, inputs=[upload_control], queue=False)
        reindex.click(documents.reindex, inputs=[to_delete, owner], outputs=[report]).then(
            handlers.refresh, inputs=[scope], outputs=[docs, to_delete, status, kb_choice, scope]
        )
        add.click(
            handlers.upload,
            inputs=[upload, kb_choice, scope, owner, upload_control],
            outputs=[report, docs, to_delete, upload, status, kb_choice, scope],
        ).then(handlers.left_out_report, outputs=[left_out])
        delete.click(
            handlers.delete,
            inputs=[to_delete, scope],
            outputs=[report, docs, to_delete, status, kb_choice, scope],
            api_name="delete_document",
        ).then(handlers.left_out_report, outputs=[left_out])

        def owner_on_load(stored: str | None, request: gr.Request) -> str:
            # A plain function, not functools.partial: Gradio finds the gr.Request parameter by its annotation,
            # which it cannot see through a partial (every browser was signed "anonymous" then).
            return ensure_owner(engine, stored, request)

        demo.load(owner_on_load, inputs=[owner], outputs=[owner]).then(
            history.restore, inputs=[owner, open_chat], outputs=[chatbot, session, open_chat, chat_list]
        )
        demo.load(handlers.account, outputs=[account, uploading, deleting, intent_editing])
        demo.load(handlers.refresh, inputs=[scope], outputs=[docs, to_delete, status, kb_choice, scope])
        demo.load(handlers.left_out_report, outputs=[left_out])
        demo.load(admin.load, outputs=admin.outputs)
    return demo
