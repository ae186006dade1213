"""The Intents tab: see the intent tree, edit it node by node, import/export it, and test a question against it.

``IntentHandlers`` holds the logic and returns plain values or ``gr.update`` dicts, so it is tested without a
browser; ``build_intents_tab`` lays out the components and wires them to it. The tree is shared by every user
and each edit is one validated transaction in the engine's store: there is no per-user state here. An edit the
tree rules refuse changes nothing and says why, in the message box under the form and in a toast.
"""

from __future__ import annotations

import html
import logging
import math
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, cast

import gradio as gr

from ragapp.core.types import DEFAULT_KB
from ragapp.engine.engine import Engine
from ragapp.router.classifier import LeafScore
from ragapp.router.decide import RoutingDecision
from ragapp.router.tree import Format, IntentNode, IntentTree, IntentTreeError, Kind
from ragapp.ui.handlers import user_errors

log = logging.getLogger(__name__)

# Sentinel choice values. Neither can be an intent code (codes start with a lowercase letter or a digit).
NEW = "(new)"
TOP = "(top)"
GROUP = "group"
KIND_CHOICES = [
    ("Group · 分组 (has child intents)", GROUP),
    ("KB · 知识库 (search knowledge bases)", "KB"),
    ("SYSTEM · 系统 (reply directly)", "SYSTEM"),
]
NEW_LABEL = "➕ New intent · 新建意图"
TOP_LABEL = "(top level) · 顶层"
TREE_HEADERS = ["Intent · 意图", "Code · 代码", "Kind · 类型", "Knowledge bases · 知识库", "Examples · 示例", "Top-k"]
SCORE_HEADERS = ["Path · 路径", "Code · 代码", "Kind · 类型", "Score · 分数"]
IMPORT_TYPES = [".yaml", ".yml", ".json"]
_INDENT = "\u2003\u2003"  # em spaces: HTML does not collapse them, so the depth stays visible in the table
_ICONS = {GROUP: "📂", "KB": "📄", "SYSTEM": "💬"}
_ACTIONS = {
    "route": ("➡️", "Route · 路由", "search the knowledge bases of the intents below · 检索下列意图的知识库"),
    "clarify": ("❓", "Ask back · 反问澄清", "the question fits several intents: the user is asked which · 请用户确认"),
    "system": ("💬", "Reply directly · 直接回复", "a message to the assistant, answered without searching · 无需检索"),
    "fallback": ("🔍", "Fall back · 全库检索", "no intent kept: search every knowledge base · 检索全部知识库"),
}

# The editor form (code, parent, name, description, examples, kind, knowledge bases, top-k, prompt): what
# ``pick`` fills and ``save`` reads. Delete and import answer message, summary, tree, picker and the form.
FormValues = tuple[Any, Any, Any, Any, Any, Any, Any, Any, Any]
_EDIT_OUTPUTS = 4 + 9


class IntentHandlers:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    # -- views ---------------------------------------------------------------------------------

    def tree_rows(self) -> list[list[Any]]:
        """One row per node, parents before children: the name indented by depth, then code, kind, knowledge
        bases, number of examples and top-k."""
        tree = self.engine.intents.tree()
        rows: list[list[Any]] = []
        for depth, node in tree.walk():
            kind = kind_of(tree, node)
            top_k = "" if kind != "KB" else (str(node.top_k) if node.top_k is not None else "default · 默认")
            rows.append(
                [
                    f"{_INDENT * depth}{_ICONS[kind]} {node.name}",
                    node.code,
                    kind,
                    ", ".join(node.kbs),
                    len(node.examples),
                    top_k,
                ]
            )
        return rows

    def summary(self) -> str:
        tree = self.engine.intents.tree()
        if not len(tree):
            return "The intent tree is empty: add an intent or import a file · 意图树为空：请新建意图或导入文件"
        kb, system = len(tree.leaves({"KB"})), len(tree.leaves({"SYSTEM"}))
        groups = len(tree) - kb - system
        note = ""
        if not self.engine.settings.workflow.route:
            note = " · ⚠️ routing is off (`RAGAPP_WORKFLOW__ROUTE=false`): the chat searches everything"
        return (
            f"**{len(tree)} intents · 个意图**: {groups} groups · 分组, {kb} KB leaves · 知识库意图, "
            f"{system} SYSTEM leaves · 系统意图{note}"
        )

    def pick_choices(self) -> list[tuple[str, str]]:
        tree = self.engine.intents.tree()
        return [(NEW_LABEL, NEW), *((_label(tree, node.code), node.code) for node in tree.nodes())]

    def parent_choices(self, editing: str | None = None) -> list[tuple[str, str]]:
        """Where a node may go: the top level or any node, except ``editing`` itself and what is under it."""
        tree = self.engine.intents.tree()
        barred = set()
        if editing and editing in tree:
            barred = {editing, *(n.code for n in tree.descendants(editing))}
        return [
            (TOP_LABEL, TOP),
            *((_label(tree, node.code), node.code) for node in tree.nodes() if node.code not in barred),
        ]

    def kb_choices(self, extra: Iterable[str] = ()) -> list[str]:
        """The knowledge bases that hold documents, "default", and any already named by the node shown."""
        names = [kb.name for kb in self.engine.library.knowledge_bases()]
        return list(dict.fromkeys([*names, DEFAULT_KB, *extra]))

    def refresh(self) -> tuple[str, list[list[Any]], Any, Any, Any]:
        """On page load: summary, tree, and fresh choices for the pickers (values kept)."""
        return (
            self.summary(),
            self.tree_rows(),
            gr.update(choices=self.pick_choices()),
            gr.update(choices=self.parent_choices()),
            gr.update(choices=self.kb_choices()),
        )

    # -- the editor ----------------------------------------------------------------------------

    def form_values(self, code: str | None) -> FormValues:
        """The form for the node ``code``, or an empty one for a new intent (None, NEW, or a code that is gone)."""
        tree = self.engine.intents.tree()
        node = tree.get(code) if code and code != NEW else None
        if node is None:
            return (
                "",
                gr.update(choices=self.parent_choices(), value=TOP),
                "",
                "",
                "",
                "KB",
                gr.update(choices=self.kb_choices(), value=[], **_kb_shows("KB")),
                gr.update(value=None, **_kb_shows("KB")),
                gr.update(value="", **_prompt_shows("KB")),
            )
        kind = kind_of(tree, node)
        return (
            node.code,
            gr.update(choices=self.parent_choices(node.code), value=node.parent or TOP),
            node.name,
            node.description,
            "\n".join(node.examples),
            kind,
            gr.update(choices=self.kb_choices(node.kbs), value=list(node.kbs), **_kb_shows(kind)),
            gr.update(value=node.top_k, **_kb_shows(kind)),
            gr.update(value=node.prompt or "", **_prompt_shows(kind)),
        )

    @user_errors
    def pick(self, picked: str | None) -> tuple[Any, ...]:
        """The node picker changed: fill the form."""
        tree = self.engine.intents.tree()
        if picked and picked != NEW and picked not in tree:
            message = f"⚠️ The intent `{picked}` no longer exists (deleted elsewhere?) · 该意图已不存在"
            return (*self.form_values(None), message)
        if not picked or picked == NEW:
            return (*self.form_values(None), "Fill in the form and press Save to add an intent · 填写后点击保存以新建")
        node = tree.get(picked)
        assert node is not None
        under = len(tree.descendants(picked))
        note = ""
        if under:
            note = f" Deleting it also deletes the {under} intent(s) under it · 删除将同时删除其下 {under} 个意图"
        return (*self.form_values(picked), f"Editing **{tree.full_path(picked)}** (`{picked}`).{note}")

    @staticmethod
    def kind_changed(kind: str | None) -> tuple[Any, Any, Any]:
        """Show the fields that matter for the kind: knowledge bases and top-k for KB, a prompt for leaves."""
        kind = kind or "KB"
        return gr.update(**_kb_shows(kind)), gr.update(**_kb_shows(kind)), gr.update(**_prompt_shows(kind))

    def node_from_form(
        self,
        code: str | None,
        parent: str | None,
        name: str | None,
        description: str | None,
        examples: str | None,
        kind: str | None,
        kbs: Sequence[str] | str | None,
        top_k: float | str | None,
        prompt: str | None,
    ) -> IntentNode:
        """An ``IntentNode`` from the form's values; fields that do not matter for the kind are dropped.
        Raises ``IntentTreeError`` for values that cannot even make a node (the tree rules come later)."""
        problems: list[str] = []
        code = (code or "").strip()
        if not code:
            problems.append("give the intent a code: a short unique id such as 'glide-w3.accessories'")
        if kind not in (GROUP, "KB", "SYSTEM"):
            problems.append("choose a kind: group, KB or SYSTEM")
        leaf_kind = cast(Kind, kind) if kind in ("KB", "SYSTEM") else None
        number: int | None = None
        if leaf_kind == "KB" and top_k not in (None, "", 0):  # the browser sends an empty number as 0
            try:
                value = float(cast(float | str, top_k))
            except ValueError:
                value = float("nan")
            if not math.isfinite(value) or value != int(value):
                problems.append(f"top-k must be a whole number (0 or empty: the default), not {top_k!r}")
            else:
                number = int(value)
        if problems:
            raise IntentTreeError(problems)
        picked_kbs = [kbs] if isinstance(kbs, str) else list(kbs or [])
        return IntentNode(
            code=code,
            name=(name or "").strip(),
            parent=None if not parent or parent == TOP else parent,
            description=(description or "").strip(),
            examples=tuple(line.strip() for line in (examples or "").splitlines() if line.strip()),
            kind=leaf_kind,
            kbs=tuple(dict.fromkeys(k.strip() for k in picked_kbs if k.strip())) if leaf_kind == "KB" else (),
            top_k=number,
            prompt=((prompt or "").strip() or None) if leaf_kind is not None else None,
        )

    @user_errors
    def save(
        self,
        picked: str | None,
        code: str | None,
        parent: str | None,
        name: str | None,
        description: str | None,
        examples: str | None,
        kind: str | None,
        kbs: Sequence[str] | str | None,
        top_k: float | str | None,
        prompt: str | None,
    ) -> tuple[str, Any, Any, Any, Any]:
        """Add the node in the form (``picked`` is NEW) or update the picked one (a new code renames it, a new
        parent moves it). Returns message, summary, tree, picker and parent picker; on a refused edit only the
        message changes."""
        try:
            node = self.node_from_form(code, parent, name, description, examples, kind, kbs, top_k, prompt)
            tree = self.engine.intents.tree()
            replacing = picked if picked and picked != NEW else None
            if replacing is not None and replacing not in tree:
                raise IntentTreeError([f"there is no intent {replacing!r} to edit (was it deleted elsewhere?)"])
            if node.code != replacing and node.code in tree:
                raise IntentTreeError(
                    [f"the code {node.code!r} is already used by {tree.full_path(node.code)}: choose another code"]
                )
            became_group = self._save(tree, node, replacing)
        except IntentTreeError as exc:
            return self._refused("Not saved · 未保存", exc.problems, 5)  # type: ignore[return-value]
        tree = self.engine.intents.tree()
        verb = "Added · 已新建" if replacing is None else "Saved · 已保存"
        message = f"✅ {verb}: **{tree.full_path(node.code)}** (`{node.code}`)"
        if replacing is not None and replacing != node.code:
            message += f", renamed from `{replacing}` · 已改名"
        if became_group is not None:
            message += (
                f". **{tree.full_path(became_group)}** had no child intents, so it is now a group (its kind, "
                "knowledge bases, top-k and prompt were cleared) · 其父意图已变为分组"
            )
        gr.Info(_toast(message))
        return (
            message,
            self.summary(),
            self.tree_rows(),
            gr.update(choices=self.pick_choices(), value=node.code),
            gr.update(choices=self.parent_choices(node.code), value=node.parent or TOP),
        )

    def _save(self, tree: IntentTree, node: IntentNode, replacing: str | None) -> str | None:
        """Save through the engine (a leaf that receives a child becomes a group in the same edit). Returns
        the code of the leaf that became a group, if any."""
        old = replacing or node.code
        host = tree.get(node.parent) if node.parent is not None else None
        becomes_group = (
            host is not None
            and host.kind is not None
            and tree.is_leaf(host.code)
            and host.code not in {old, *(n.code for n in tree.descendants(old))}
        )
        self.engine.intents.save(node, replacing)
        return host.code if becomes_group and host is not None else None

    @user_errors
    def delete(self, picked: str | None) -> tuple[Any, ...]:
        """Delete the picked intent and everything under it. Returns message, summary, tree, picker and the
        form (emptied after a deletion)."""
        refused = "Nothing deleted · 未删除"
        tree = self.engine.intents.tree()
        node = tree.get(picked) if picked and picked != NEW else None
        if not picked or picked == NEW:
            return self._refused(refused, ["pick an intent to delete first"], _EDIT_OUTPUTS)
        if node is None:
            problems = [f"there is no intent {picked!r} to delete (was it deleted elsewhere?)"]
            return self._refused(refused, problems, _EDIT_OUTPUTS)
        label = f"{tree.full_path(picked)} (`{picked}`)"
        try:
            gone = self.engine.intents.delete(picked)
        except IntentTreeError as exc:
            problems = list(exc.problems)
            if node.parent is not None and [n.code for n in tree.children(node.parent)] == [picked]:
                problems.append(
                    f"'{picked}' is the only intent under the group '{node.parent}', and a group needs at least "
                    f"one child: add another intent under '{node.parent}' first, or delete '{node.parent}' itself"
                )
            return self._refused(refused, problems, _EDIT_OUTPUTS)
        message = f"🗑️ Deleted · 已删除: **{label}**"
        if gone > 1:
            message += f" and the {gone - 1} intent(s) under it ({gone} in all) · 连同其下 {gone - 1} 个意图"
        gr.Info(_toast(message))
        return (
            message,
            self.summary(),
            self.tree_rows(),
            gr.update(choices=self.pick_choices(), value=NEW),
            *self.form_values(None),
        )

    # -- import and export ---------------------------------------------------------------------

    @user_errors
    def import_file(self, path: str | None) -> tuple[Any, ...]:
        """Replace the whole tree with a YAML/JSON file. A bad file changes nothing and lists every problem.
        Returns message, summary, tree, picker and the form (emptied after an import)."""
        refused = "Not imported · 未导入"
        if not path:
            return self._refused(refused, ["choose a .yaml, .yml or .json file first"], _EDIT_OUTPUTS)
        file = Path(path)
        suffix = file.suffix.lower()
        if suffix not in IMPORT_TYPES:
            problems = [f"{file.name}: use a .yaml, .yml or .json file"]
            return self._refused(refused, problems, _EDIT_OUTPUTS)
        fmt: Format = "json" if suffix == ".json" else "yaml"
        try:
            text = file.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            problems = [f"{file.name} could not be read as UTF-8 text ({exc})"]
            return self._refused(refused, problems, _EDIT_OUTPUTS)
        try:
            tree = self.engine.intents.import_tree(text, fmt)
        except IntentTreeError as exc:
            return self._refused(f"{refused}: {file.name}", exc.problems, _EDIT_OUTPUTS)
        leaves = len(tree.leaves())
        message = (
            f"📥 Imported · 已导入 **{file.name}**: {len(tree)} intents, {leaves} leaves · "
            f"共 {len(tree)} 个意图（{leaves} 个叶子）; the previous tree was replaced · 原意图树已被替换"
        )
        gr.Info(_toast(message))
        return (
            message,
            self.summary(),
            self.tree_rows(),
            gr.update(choices=self.pick_choices(), value=NEW),
            *self.form_values(None),
        )

    def export(self, fmt: Format) -> tuple[str, str]:
        """Write the tree to ``intents.<fmt>`` in a new temporary folder; returns the path and a message."""
        text = self.engine.intents.export(fmt)
        path = Path(tempfile.mkdtemp(prefix="ragapp-intents-")) / f"intents.{fmt}"
        path.write_text(text, encoding="utf-8")
        count = len(self.engine.intents.tree())
        return str(path), f"📤 Exported · 已导出 {count} intents as `{path.name}`: download it below · 请在下方下载"

    @user_errors
    def export_yaml(self) -> tuple[str, str]:
        return self.export("yaml")

    @user_errors
    def export_json(self) -> tuple[str, str]:
        return self.export("json")

    # -- the test box --------------------------------------------------------------------------

    @user_errors
    def test(self, question: str | None) -> tuple[list[list[Any]], str]:
        """Classify ``question`` as the chat would: every leaf with its score, and the decision in words."""
        question = (question or "").strip()
        if not question:
            return [], "Type a question to see how it would be routed · 请输入问题以测试意图路由"
        decision = self.engine.intents.test(question)
        return score_rows(decision), self.decision_markdown(decision)

    def decision_markdown(self, decision: RoutingDecision) -> str:
        icon, title, meaning = _ACTIONS[decision.action]
        lines = [f"### {icon} {title}", meaning, ""]
        if decision.intents:
            tree = self.engine.intents.tree()
            heading = "Offered choices · 候选意图" if decision.action == "clarify" else "Chosen · 选中意图"
            lines.append(f"**{heading}:**")
            for leaf in decision.intents:
                node = tree.get(leaf.code)
                kbs = f" · KB: {', '.join(node.kbs)}" if node is not None and node.kbs else ""
                lines.append(f"- {leaf.path} (`{leaf.code}`) — {leaf.score:.2f}{kbs}")
            lines.append("")
        lines.append(f"**Reason · 原因:** {decision.reason}")
        classification = decision.classification
        if classification is not None:
            if classification.error:
                lines.append(f"\n**Model error · 模型错误:** {classification.error}")
            if classification.ignored:
                ids = ", ".join(f"`{_plain(i)}`" for i in classification.ignored)
                lines.append(f"\n**Ignored ids · 已忽略的编号** (not among the candidates · 不在候选列表中): {ids}")
            lines.append(f"\n**Model time · 模型耗时:** {classification.duration_s:.1f} s")
        if not self.engine.settings.workflow.route:
            lines.append(
                "\n⚠️ Routing is off (`RAGAPP_WORKFLOW__ROUTE=false`): the chat searches everything; this is "
                "what it would do with routing on · 路由已关闭"
            )
        return "\n".join(lines)

    # -- helpers -------------------------------------------------------------------------------

    @staticmethod
    def _refused(title: str, problems: Sequence[str], outputs: int) -> tuple[Any, ...]:
        """An edit that changed nothing: a toast, the message listing every problem, and "no change" for the
        other ``outputs - 1`` outputs."""
        gr.Warning(html.escape(f"{title}: " + "; ".join(problems)))  # toasts render HTML
        listed = "\n".join(f"- {p}" for p in problems)
        return f"❌ **{title}** — nothing was changed · 意图树未改变:\n\n{listed}", *_unchanged(outputs - 1)


def score_rows(decision: RoutingDecision) -> list[list[Any]]:
    """Every leaf the classifier was offered, with the model's score (0 when it gave none), best first."""
    classification = decision.classification
    if classification is None:
        return []
    offered: list[LeafScore] = list(classification.candidates)
    known = {leaf.code for leaf in offered}
    offered += [s for s in classification.scores if s.code not in known]
    rows = [[s.path, s.code, s.kind, round(classification.score_of(s.code), 2)] for s in offered]
    return sorted(rows, key=lambda row: -row[3])  # stable: ties keep the tree order


def kind_of(tree: IntentTree, node: IntentNode) -> str:
    """The kind as the form and the tree view show it: "group", "KB" or "SYSTEM"."""
    if node.kind is None or not tree.is_leaf(node.code):
        return GROUP
    return node.kind


def _label(tree: IntentTree, code: str) -> str:
    return f"{tree.full_path(code)} ({code})"


def _kb_shows(kind: str) -> dict[str, Any]:
    """Knowledge bases and top-k matter on KB leaves only."""
    return {"visible": kind == "KB"}


def _prompt_shows(kind: str) -> dict[str, Any]:
    """The prompt matters on leaves: extra answer instructions (KB) or the reply's instructions (SYSTEM)."""
    label = "Reply instructions · 回复指令" if kind == "SYSTEM" else "Extra answer instructions · 额外回答指令"
    return {"visible": kind in ("KB", "SYSTEM"), "label": label}


def _unchanged(count: int) -> tuple[Any, ...]:
    return tuple(gr.update() for _ in range(count))


def _toast(markdown: str) -> str:
    """A message for a toast, which renders HTML rather than Markdown."""
    return html.escape(markdown.replace("**", "").replace("`", ""))


def _plain(text: str) -> str:
    return text.replace("`", "'")


# -- layout --------------------------------------------------------------------------------------

INTRO = """Questions are routed by this tree: **groups** organise it, **KB** leaves search their knowledge bases,
**SYSTEM** leaves reply directly (greetings, who-are-you). Pick an intent to edit it, or *New intent* to add one.
问题按此意图树路由：**分组**用于组织，**KB** 叶子检索其知识库，**SYSTEM** 叶子直接回复。
选择意图进行编辑，或新建意图。"""


def build_intents_tab(engine: Engine, handlers: IntentHandlers | None = None) -> IntentHandlers:
    """Lay out the Intents tab inside the current ``gr.Tab`` and wire its events; returns the handlers."""
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
    with gr.Row(equal_height=False):
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
                file_types=IMPORT_TYPES,
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
    return h
