"""The Gradio app: Chat, Knowledge, Intents, Traces and Admin tabs, and the sidebar of past chats."""

import gradio as gr

from ragapp.engine.engine import Engine
from ragapp.ui.admin import build_admin_tab
from ragapp.ui.chat_tab import build_chat_tab, build_chats_sidebar, wire_chat
from ragapp.ui.handlers import Handlers
from ragapp.ui.i18n import t
from ragapp.ui.intents_layout import build_intents_tab
from ragapp.ui.knowledge_tab import build_knowledge_tab, wire_knowledge
from ragapp.ui.next_questions import OpeningQuestions
from ragapp.ui.page_language import SWITCH
from ragapp.ui.sources import wire_sources
from ragapp.ui.state import ensure_owner
from ragapp.ui.traces import build_traces_tab


def build_ui(engine: Engine) -> gr.Blocks:
    """The page: the header, a builder per tab (``chat_tab``, ``knowledge_tab``, ``intents_layout``, ``traces``,
    ``admin``), their events, and what the page's load fills in."""
    handlers = Handlers(engine)
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
        sidebar = build_chats_sidebar()
        gr.Markdown(SWITCH, elem_id="language-switch")  # English · 中文: see ragapp/ui/i18n.py
        # For people first: what the app is and does; the models and the index are under "About" below.
        gr.Markdown("# ragapp\n" + t("header.tagline"), elem_id="header")
        gr.Markdown(t("header.purpose"), elem_id="purpose")
        with gr.Row(equal_height=True):
            open_chats = gr.Button(t("chats.open"), size="sm", elem_id="open-chats", scale=0, min_width=160)
            account = gr.Markdown(elem_id="account")  # who is signed in, and Log out (none with accounts off)
        if engine.settings.paths.ephemeral:  # e.g. a Hugging Face Space without storage
            gr.Markdown(t("header.ephemeral"), elem_id="ephemeral-notice")
        with gr.Tabs():
            chat = build_chat_tab(engine, handlers, public)
            knowledge = build_knowledge_tab(engine, handlers, public)
            with gr.Tab(t("intents.tab"), id="intents") as intents_tab:
                intent_editing = build_intents_tab(engine, tab=intents_tab)
            build_traces_tab(engine, owner)
            admin = build_admin_tab(engine)  # admins only: shown and filled by the load event
        with gr.Accordion(t("header.about"), open=False, elem_id="about"):
            status = gr.Markdown(handlers.status_line(), elem_id="status-line")
            if engine.accounts is None:
                gr.Markdown(t("header.accounts_off"), elem_id="accounts-off")
        open_chats.click(lambda: gr.Sidebar(open=True), outputs=[sidebar.panel], queue=False)

        history = wire_chat(engine, chat, sidebar, handlers, session, owner, open_chat)
        wire_knowledge(engine, knowledge, handlers, chat.scope, status, owner)
        panel = knowledge.sources
        sources = wire_sources(engine, panel)

        def owner_on_load(stored: str | None, request: gr.Request) -> str:
            # A plain function, not functools.partial: Gradio finds the gr.Request parameter by its annotation,
            # which it cannot see through a partial (every browser was signed "anonymous" then).
            return ensure_owner(engine, stored, request)

        demo.load(owner_on_load, inputs=[owner], outputs=[owner]).then(
            history.restore,
            inputs=[owner, open_chat, session],
            outputs=[chat.chatbot, session, open_chat, sidebar.chat_list],
        )
        demo.load(handlers.account, outputs=[account, knowledge.uploading, knowledge.deleting, intent_editing])
        refreshed = [knowledge.docs, knowledge.to_delete, status, knowledge.kb_choice, chat.scope]
        demo.load(handlers.refresh, inputs=[chat.scope], outputs=refreshed)
        demo.load(handlers.tag_choices, outputs=[chat.filter_tags])
        opening = OpeningQuestions(engine, chat.kb_questions)
        demo.load(opening.load, outputs=opening.outputs)
        demo.load(handlers.left_out_report, outputs=[knowledge.left_out])
        demo.load(admin.load, outputs=admin.outputs)
        demo.load(sources.shown, outputs=[panel.column, panel.adding, panel.timer])
        demo.load(sources.refresh, inputs=[panel.pick], outputs=[panel.table, panel.pick, panel.report])
    return demo
