"""The Intents tab's layout: see the intent tree, edit it node by node, import/export it, and test a question
against it. The components are laid out here and wired to ``IntentHandlers``, which hold what each event does.
"""

from __future__ import annotations

import gradio as gr

from ragapp.engine.engine import Engine
from ragapp.engine.intent_edits import IMPORT_SUFFIXES
from ragapp.router.tree import GROUP
from ragapp.ui.intents_handlers import NEW, TOP, IntentHandlers

KIND_CHOICES = [
    ("Group · 分组 (has child intents)", GROUP),
    ("KB · 知识库 (search knowledge bases)", "KB"),
    ("SYSTEM · 系统 (reply directly)", "SYSTEM"),
]
TREE_HEADERS = ["Intent · 意图", "Code · 代码", "Kind · 类型", "Knowledge bases · 知识库", "Examples · 示例", "Top-k"]
SCORE_HEADERS = ["Path · 路径", "Code · 代码", "Kind · 类型", "Score · 分数"]

INTRO = """Questions are routed by this tree: **groups** organise it, **KB** leaves search their knowledge bases,
**SYSTEM** leaves reply directly (greetings, who-are-you). Pick an intent to edit it, or *New intent* to add one.
问题按此意图树路由：**分组**用于组织，**KB** 叶子检索其知识库，**SYSTEM** 叶子直接回复。
选择意图进行编辑，或新建意图。"""


def build_intents_tab(engine: Engine, handlers: IntentHandlers | None = None) -> gr.Row:
    """Lay out the Intents tab inside the current ``gr.Tab`` and wire its events; returns the row of editing
    controls (edit, import, export), which roles that may not edit the tree do not see."""
    h = handlers or IntentHandlers(engine)
    gr.Markdown(INTRO, elem_id="intent-intro")
    summary = gr.Markdown(h.summary(), elem_id="intent-summary")
    tree = gr.Dataframe(
        value=h.tree_rows(),
        headers=TREE_HEADERS,
        interactive=False,
        wrap=True,
        elem_id="intent-tree",
        label="Intent tree · 意图树",
        column_widths=["32%", "21%", "9%", "16%", "10%", "12%"],
        max_height=1000,  # tall enough to show a tree of a few dozen nodes without scrolling inside the table
    )
    with gr.Row(equal_height=False, elem_id="intent-editing") as editing:
        with gr.Column(scale=3):
            gr.Markdown("### ✏️ Edit · 编辑")
            pick = gr.Dropdown(
                choices=h.pick_choices(),
                value=NEW,
                label="Intent · 意图",
                info="Pick an intent to edit, or ➕ New intent to add one · 选择要编辑的意图，或新建意图",
                elem_id="intent-pick",
            )
            with gr.Row():
                code = gr.Textbox(
                    label="Code · 代码",
                    info="Unique id: lowercase letters, digits, '_', '.', '-' · 唯一编号",
                    placeholder="glide-w3.accessories",
                    elem_id="intent-code",
                )
                parent = gr.Dropdown(
                    choices=h.parent_choices(),
                    value=TOP,
                    label="Parent · 上级",
                    info="Changing it moves the intent (and what is under it) · 修改即移动",
                    elem_id="intent-parent",
                )
            name = gr.Textbox(label="Name · 名称", placeholder="Accessories · 配件", elem_id="intent-name")
            description = gr.Textbox(
                label="Description · 描述",
                info="What questions belong here: the classifier reads it · 分类模型会阅读此描述",
                lines=2,
                elem_id="intent-description",
            )
            examples = gr.Textbox(
                label="Example questions, one per line · 示例问题（每行一个）",
                lines=3,
                elem_id="intent-examples",
            )
            kind = gr.Radio(
                choices=KIND_CHOICES,
                value="KB",
                label="Kind · 类型",
                info="A node with child intents is a group · 有子意图的节点是分组",
                elem_id="intent-kind",
            )
            with gr.Row():
                kbs = gr.Dropdown(
                    choices=h.kb_choices(),
                    value=[],
                    multiselect=True,
                    allow_custom_value=True,
                    label="Knowledge bases · 知识库",
                    info="Searched for this intent · 该意图检索的知识库",
                    elem_id="intent-kbs",
                    scale=3,
                )
                top_k = gr.Number(
                    value=None,
                    precision=0,
                    label="Top-k",
                    info="Chunks in the prompt; 0 or empty = the default · 0 或留空为默认",
                    elem_id="intent-top-k",
                    scale=1,
                )
            prompt = gr.Textbox(
                label="Extra answer instructions · 额外回答指令",
                info="Optional; for SYSTEM leaves, how to reply · 可选；SYSTEM 意图为回复指令",
                lines=2,
                elem_id="intent-prompt",
            )
            with gr.Row():
                save = gr.Button("Save · 保存", variant="primary", elem_id="intent-save")
                delete = gr.Button("Delete · 删除", variant="stop", elem_id="intent-delete")
            gr.Markdown(
                "Deleting a group deletes everything under it · 删除分组会同时删除其下所有意图",
                elem_id="intent-delete-note",
            )
            message = gr.Markdown(elem_id="intent-message")
        with gr.Column(scale=2):
            gr.Markdown("### 📦 Import / export · 导入 / 导出")
            upload = gr.File(
                label="Intent tree file (.yaml, .yml, .json) · 意图树文件",
                file_types=list(IMPORT_SUFFIXES),
                type="filepath",
                elem_id="intent-import-file",
            )
            load = gr.Button("Import (replaces the tree) · 导入（替换整棵树）", elem_id="intent-import")
            with gr.Row():
                export_yaml = gr.Button("Export YAML · 导出 YAML", elem_id="intent-export-yaml")
                export_json = gr.Button("Export JSON · 导出 JSON", elem_id="intent-export-json")
            exported = gr.File(label="Download · 下载", interactive=False, elem_id="intent-export-file")
            io_message = gr.Markdown(elem_id="intent-io-message")
    gr.Markdown("### 🧪 Test a question · 测试问题")
    with gr.Row():
        question = gr.Textbox(
            show_label=False,
            placeholder="Type a question to see how it would be routed · 输入问题，查看路由结果",
            elem_id="intent-test-question",
            scale=8,
        )
        test = gr.Button("Test · 测试", variant="primary", elem_id="intent-test", scale=1)
    decision = gr.Markdown(elem_id="intent-test-decision")
    scores = gr.Dataframe(
        value=[],
        headers=SCORE_HEADERS,
        interactive=False,
        wrap=True,
        elem_id="intent-test-scores",
        label="Every leaf's score · 各叶子意图得分",
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
    # On every page load: the tree is shared, so show what other sessions changed since the app started.
    gr.on(None, h.refresh, outputs=[summary, tree, pick, parent, kbs])
    return editing
