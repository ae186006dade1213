"""The Knowledge tab: upload, the documents and their chunks, what was left out, reindex and delete, the
followed folders and repositories (``ragapp.ui.sources``); its components and the events that tie them to the
handlers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr

from ragapp.core.types import DEFAULT_KB
from ragapp.engine.engine import Engine
from ragapp.ui.doc_about import TagHandlers
from ragapp.ui.documents import CHUNK_HEADERS, CHUNK_TYPES, DocumentHandlers
from ragapp.ui.enrich_progress import EnrichLine, build_enrich_line, wire_enrich_line
from ragapp.ui.handlers import DOC_HEADERS, Handlers
from ragapp.ui.i18n import t
from ragapp.ui.sources import SourcesPanel, build_sources_panel
from ragapp.ui.state import UploadControl
from ragapp.ui.uncovered import UncoveredHandlers
from ragapp.ui.upload_progress import UploadHandlers


@dataclass(frozen=True)
class KnowledgeTab:
    uploading: gr.Column
    kb_choice: gr.Dropdown
    upload: gr.File
    add: gr.Button
    stop: gr.Button
    progress: gr.Markdown
    report: gr.Markdown
    docs: gr.Dataframe
    doc_id: gr.State
    doc_view: gr.Column
    doc_quality: gr.Markdown
    doc_about: gr.Markdown  # metadata and tags
    doc_tags: gr.Textbox
    doc_tags_save: gr.Button
    doc_search: gr.Textbox
    doc_chunks: gr.Dataframe
    left_out: gr.Markdown
    deleting: gr.Row  # the open document's actions: shown to those who may delete (the load event)
    doc_reindex: gr.Button
    doc_delete: gr.Button
    confirm_row: gr.Row
    confirm_delete: gr.Button
    cancel_delete: gr.Button
    to_delete: gr.Dropdown
    reindex: gr.Button
    delete: gr.Button
    sources: SourcesPanel
    # Under an upload into a knowledge base no intent searches: one click adds an intent for it (``uncovered``).
    add_leaf_row: gr.Row
    add_leaf: gr.Button
    add_leaf_kb: gr.State
    enrich: EnrichLine | None = None  # the bases still being indexed in the background, and how far


def build_knowledge_tab(engine: Engine, handlers: Handlers, public: bool) -> KnowledgeTab:
    """The Knowledge tab's components. ``public``: accounts are off, so documents are listed at once."""
    extensions = engine.library.supported_extensions()
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
                # Enabled while an upload runs (``wire_knowledge_tab``).
                stop = gr.Button(t("kb.stop"), variant="stop", elem_id="stop-upload", scale=1, interactive=False)
        progress = gr.Markdown(elem_id="ingest-progress")  # while an upload runs: ragapp.ui.upload_progress
        report = gr.Markdown(elem_id="ingest-report")
        enrich = build_enrich_line()
        with gr.Row(visible=False, elem_id="kb-add-leaf-row") as add_leaf_row:
            add_leaf = gr.Button(t("kb.add_leaf"), size="sm", elem_id="kb-add-leaf", scale=0, min_width=280)
        add_leaf_kb = gr.State("")
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
            with gr.Row() as deleting:
                doc_reindex = gr.Button(t("kb.reindex"), size="sm", elem_id="doc-reindex", scale=0, min_width=140)
                doc_delete = gr.Button(
                    t("kb.delete_doc"), size="sm", variant="stop", elem_id="doc-delete", scale=0, min_width=200
                )
            with gr.Row(visible=False, elem_id="doc-delete-confirm") as confirm_row:  # asked before deleting
                gr.Markdown(t("kb.delete_confirm"))
                confirm_delete = gr.Button(
                    t("kb.delete_yes"), size="sm", variant="stop", elem_id="doc-delete-yes", scale=0
                )
                cancel_delete = gr.Button(t("kb.delete_no"), size="sm", elem_id="doc-delete-no", scale=0)
            doc_quality = gr.Markdown(elem_id="doc-quality")
            doc_about = gr.Markdown(elem_id="doc-about")
            with gr.Row():
                doc_tags = gr.Textbox(label=t("kb.doc_tags"), info=t("kb.doc_tags_info"), elem_id="doc-tags", scale=4)
                doc_tags_save = gr.Button(t("kb.doc_tags_save"), size="sm", elem_id="doc-tags-save", scale=0)
            doc_search = gr.Textbox(
                label=t("kb.doc_search"), show_label=False, placeholder=t("kb.doc_search"), elem_id="doc-search"
            )
            # Fixed widths for the short columns: long passages would squeeze them to a letter a line.
            doc_chunks = gr.Dataframe(
                headers=CHUNK_HEADERS, interactive=False, wrap=True, max_height=420, label=t("kb.doc_chunks"),
                elem_id="doc-chunks", column_widths=["5%", "7%", "22%", "9%", "57%"],
                datatype=CHUNK_TYPES,  # type: ignore[arg-type]
            )  # fmt: skip
        with gr.Accordion(t("kb.left_out"), open=False):
            left_out = gr.Markdown(handlers.left_out_report if public else "", elem_id="left-out")
        # Not shown: the page deletes from the document's view; scripts call this as ``/delete_document``.
        with gr.Row(visible=False):
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
        sources = build_sources_panel()
    return KnowledgeTab(
        uploading, kb_choice, upload, add, stop, progress, report, docs, doc_id, doc_view, doc_quality, doc_about,
        doc_tags,
        doc_tags_save, doc_search,
        doc_chunks, left_out, deleting, doc_reindex, doc_delete, confirm_row, confirm_delete, cancel_delete,
        to_delete, reindex, delete, sources, add_leaf_row, add_leaf, add_leaf_kb, enrich,
    )  # fmt: skip


def wire_knowledge(
    engine: Engine,
    tab: KnowledgeTab,
    handlers: Handlers,
    scope: gr.Dropdown,
    status: gr.Markdown,
    owner: gr.BrowserState,
) -> None:
    """The Knowledge tab's events. ``scope`` (the Chat tab's knowledge bases) and ``status`` (the header's
    line) follow every change to the documents."""
    documents, tags = DocumentHandlers(engine), TagHandlers(engine)
    upload_control = gr.State(UploadControl())  # the Stop button's signal, one per browser session
    refreshed = [tab.docs, tab.to_delete, status, tab.kb_choice, scope]
    tab.docs.select(documents.open, outputs=[tab.doc_quality, tab.doc_chunks, tab.doc_id, tab.doc_view]).then(
        _shown(False), outputs=[tab.confirm_row], queue=False
    ).then(tags.about, inputs=[tab.doc_id], outputs=[tab.doc_about, tab.doc_tags])
    tag_io: dict[str, Any] = {"inputs": [tab.doc_id, tab.doc_tags], "outputs": [tab.doc_about, tab.doc_tags]}
    tab.doc_tags_save.click(tags.save, **tag_io)
    tab.doc_tags.submit(tags.save, **tag_io)
    # The open document's actions: index it again; delete it once confirmed.
    tab.doc_reindex.click(documents.reindex, inputs=[tab.doc_id, owner], outputs=[tab.report]).then(
        handlers.refresh, inputs=[scope], outputs=refreshed
    )
    tab.doc_delete.click(_shown(True), outputs=[tab.confirm_row], queue=False)
    tab.cancel_delete.click(_shown(False), outputs=[tab.confirm_row], queue=False)
    tab.confirm_delete.click(handlers.delete, inputs=[tab.doc_id, scope], outputs=[tab.report, *refreshed]).then(
        lambda: (gr.update(visible=False), gr.update(visible=False)), outputs=[tab.confirm_row, tab.doc_view]
    ).then(handlers.left_out_report, outputs=[tab.left_out])
    tab.doc_search.submit(documents.search, inputs=[tab.doc_id, tab.doc_search], outputs=[tab.doc_chunks])
    # Not queued: it must reach the upload while that one still runs.
    tab.stop.click(documents.stop, inputs=[upload_control], queue=False)
    tab.reindex.click(documents.reindex, inputs=[tab.to_delete, owner], outputs=[tab.report]).then(
        handlers.refresh, inputs=[scope], outputs=refreshed
    )
    # Stop is enabled for the upload's length; its progress, file by file, shows above where its report will be
    # (Gradio's own spinner would cover it).
    uploaded = tab.add.click(_stoppable(True), outputs=[tab.stop], queue=False).then(
        UploadHandlers(handlers).upload,
        inputs=[tab.upload, tab.kb_choice, scope, owner, upload_control],
        outputs=[tab.progress, tab.report, tab.docs, tab.to_delete, tab.upload, status, tab.kb_choice, scope],
        show_progress="hidden",
    )
    uploaded.then(_stoppable(False), outputs=[tab.stop], queue=False).then(
        handlers.left_out_report, outputs=[tab.left_out]
    )
    if tab.enrich is not None:
        wire_enrich_line(engine, tab.enrich, uploaded)
    # Once per upload: the knowledge base it went into, when no intent searches it, and the click that adds one.
    uncovered = UncoveredHandlers(engine)
    uploaded.success(
        uncovered.after_upload,
        inputs=[tab.report, tab.kb_choice],
        outputs=[tab.report, tab.add_leaf_row, tab.add_leaf_kb],
        queue=False,
    )
    tab.add_leaf.click(
        uncovered.add_after_upload, inputs=[tab.report, tab.add_leaf_kb], outputs=[tab.report, tab.add_leaf_row]
    )
    tab.delete.click(
        handlers.delete,
        inputs=[tab.to_delete, scope],
        outputs=[tab.report, *refreshed],
        api_name="delete_document",
    ).then(handlers.left_out_report, outputs=[tab.left_out])


def _shown(visible: bool) -> Callable[[], Any]:
    return lambda: gr.update(visible=visible)


def _stoppable(running: bool) -> Callable[[], Any]:
    """The Stop button's state: enabled while an upload runs."""
    return lambda: gr.update(interactive=running)
