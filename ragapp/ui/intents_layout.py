"""The Intents tab's layout: see the intent tree, edit it node by node, import/export it, and test a question
against it. The components are laid out here and wired to ``IntentHandlers``, which hold what each event does.
"""

from __future__ import annotations

import gradio as gr

from ragapp.engine import GROUP
from ragapp.engine.engine import Engine
from ragapp.engine.intent_edits import IMPORT_SUFFIXES
from ragapp.ui.i18n import t
from ragapp.ui.intents_handlers import NEW, TOP, IntentHandlers
from ragapp.ui.uncovered import UncoveredHandlers

KIND_CHOICES = [(t("intents.kind_group"), GROUP), (t("intents.kind_kb"), "KB"), (t("intents.kind_system"), "SYSTEM")]
# English names: the page renames them in Chinese (ragapp.ui.page_language.HEADERS).
TREE_HEADERS = ["Intent", "Code", "Kind", "Knowledge bases", "Examples", "Top-k"]
SCORE_HEADERS = ["Path", "Code", "Kind", "Score"]

INTRO = t("intents.intro")


def build_intents_tab(engine: Engine, handlers: IntentHandlers | None = None, tab: gr.Tab | None = None) -> gr.Row:
    """Lay out the Intents tab inside the current ``gr.Tab`` (``tab``: shown afresh each time it is opened) and
    wire its events; returns the row of editing controls (edit, import, export), which roles that may not edit
    the tree do not see."""
    h = handlers or IntentHandlers(engine)
    uncovered = UncoveredHandlers(engine)
    gr.Markdown(INTRO, elem_id="intent-intro")
    summary = gr.Markdown(h.summary(), elem_id="intent-summary")
    # Knowledge bases no intent searches (an upload the tree does not know): said once, with the click that adds one.
    with gr.Row(visible=False, equal_height=True, elem_id="intent-uncovered") as uncovered_row:
        uncovered_text = gr.Markdown(elem_id="intent-uncovered-text")
        uncovered_kb = gr.Dropdown(
            choices=[], label=t("intents.uncovered_kb"), elem_id="intent-uncovered-kb", scale=0, min_width=200
        )
        add_uncovered = gr.Button(t("intents.add_uncovered"), elem_id="intent-add-uncovered", scale=0, min_width=200)
    tree = gr.Dataframe(
        value=h.tree_rows(),
        headers=TREE_HEADERS,
        interactive=False,
        wrap=True,
        elem_id="intent-tree",
        label=t("intents.tree"),
        column_widths=["32%", "21%", "9%", "16%", "10%", "12%"],
        datatype=["str", "str", "html", "str", "number", "str"],  # the kind in both languages
        max_height=1000,  # tall enough to show a tree of a few dozen nodes without scrolling inside the table
    )
    with gr.Row(equal_height=False, elem_id="intent-editing") as editing:
        with gr.Column(scale=3):
            gr.Markdown(t("intents.edit"))
            pick = gr.Dropdown(
                choices=h.pick_choices(),
                value=NEW,
                label=t("intents.pick"),
                info=t("intents.pick_info"),
                elem_id="intent-pick",
            )
            with gr.Row():
                code = gr.Textbox(
                    label=t("intents.code"),
                    info=t("intents.code_info"),
                    placeholder="glide-w3.accessories",
                    elem_id="intent-code",
                )
                parent = gr.Dropdown(
                    choices=h.parent_choices(),
                    value=TOP,
                    label=t("intents.parent"),
                    info=t("intents.parent_info"),
                    elem_id="intent-parent",
                )
            name = gr.Textbox(label=t("intents.name"), placeholder=t("intents.name_placeholder"), elem_id="intent-name")
            description = gr.Textbox(
                label=t("intents.description"),
                info=t("intents.description_info"),
                lines=2,
                elem_id="intent-description",
            )
            examples = gr.Textbox(
                label=t("intents.examples"),
                lines=3,
                elem_id="intent-examples",
            )
            kind = gr.Radio(
                choices=KIND_CHOICES,
                value="KB",
                label=t("intents.kind"),
                info=t("intents.kind_info"),
                elem_id="intent-kind",
            )
            with gr.Row():
                kbs = gr.Dropdown(
                    choices=h.kb_choices(),
                    value=[],
                    multiselect=True,
                    allow_custom_value=True,
                    label=t("intents.kbs"),
                    info=t("intents.kbs_info"),
                    elem_id="intent-kbs",
                    scale=3,
                )
                top_k = gr.Number(
                    value=None,
                    precision=0,
                    label="Top-k",
                    info=t("intents.top_k_info"),
                    elem_id="intent-top-k",
                    scale=1,
                )
            prompt = gr.Textbox(
                label=t("intents.prompt"),
                info=t("intents.prompt_info"),
                lines=2,
                elem_id="intent-prompt",
            )
            with gr.Row():
                save = gr.Button(t("intents.save"), variant="primary", elem_id="intent-save")
                delete = gr.Button(t("common.delete"), variant="stop", elem_id="intent-delete")
            gr.Markdown(
                t("intents.delete_note"),
                elem_id="intent-delete-note",
            )
            message = gr.Markdown(elem_id="intent-message")
        with gr.Column(scale=2):
            gr.Markdown(t("intents.io"))
            upload = gr.File(
                label=t("intents.file"),
                file_types=list(IMPORT_SUFFIXES),
                type="filepath",
                elem_id="intent-import-file",
            )
            load = gr.Button(t("intents.import"), elem_id="intent-import")
            with gr.Row():
                export_yaml = gr.Button(t("intents.export_yaml"), elem_id="intent-export-yaml")
                export_json = gr.Button(t("intents.export_json"), elem_id="intent-export-json")
            exported = gr.File(label=t("intents.download"), interactive=False, elem_id="intent-export-file")
            io_message = gr.Markdown(elem_id="intent-io-message")
    gr.Markdown(t("intents.test_heading"))
    with gr.Row():
        question = gr.Textbox(
            label=t("intents.test_placeholder"),
            show_label=False,
            placeholder=t("intents.test_placeholder"),
            elem_id="intent-test-question",
            scale=8,
        )
        test = gr.Button(t("intents.test"), variant="primary", elem_id="intent-test", scale=1)
    decision = gr.Markdown(elem_id="intent-test-decision")
    scores = gr.Dataframe(
        value=[],
        headers=SCORE_HEADERS,
        interactive=False,
        wrap=True,
        elem_id="intent-test-scores",
        label=t("intents.scores"),
        column_widths=["55%", "25%", "10%", "10%"],
        max_height=1000,
    )

    form = [code, parent, name, description, examples, kind, kbs, top_k, prompt]
    refreshed = [summary, tree, pick]
    pick.input(h.pick, inputs=[pick], outputs=[*form, message])
    kind.change(h.kind_changed, inputs=[kind], outputs=[kbs, top_k, prompt])
    save.click(h.save, inputs=[pick, *form], outputs=[message, *refreshed, parent])
    delete.click(h.delete, inputs=[pick], outputs=[message, *refreshed, *form])
    load.click(h.import_file, inputs=[upload], outputs=[io_message, *refreshed, *form])
    export_yaml.click(h.export_yaml, outputs=[exported, io_message])
    export_json.click(h.export_json, outputs=[exported, io_message])
    for trigger in (test.click, question.submit):
        trigger(h.test, inputs=[question], outputs=[scores, decision])
    notice = [uncovered_row, uncovered_text, uncovered_kb, add_uncovered]
    add_uncovered.click(uncovered.add, inputs=[uncovered_kb], outputs=[message]).success(
        h.refresh, outputs=[summary, tree, pick, parent, kbs]
    ).then(uncovered.notice, outputs=notice)
    # On every page load (and each time the tab is opened): the tree is shared, so show what other sessions, or an
    # upload in the Knowledge tab, changed since.
    gr.on(None, h.refresh, outputs=[summary, tree, pick, parent, kbs])
    gr.on(None, uncovered.notice, outputs=notice)
    if tab is not None:
        tab.select(h.refresh, outputs=[summary, tree, pick, parent, kbs])
        tab.select(uncovered.notice, outputs=notice)
    return editing
