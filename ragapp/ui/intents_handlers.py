"""The Intents tab's handlers: what each event shows, as plain values or ``gr.update`` dicts (no browser needed).

The rules of an edit live in the engine's intents facet; these handlers turn the form into an ``IntentDraft``,
call the facet, and show its outcome or its refusal (in the message box under the form and in a toast). The
tree is shared by every user and each edit is one validated transaction: there is no per-user state here.
``ragapp.ui.intents_layout`` lays out the components and wires them to these handlers.
"""

import html
import logging
import re
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import gradio as gr
from gradio.i18n import I18nData

from ragapp.core.types import LeafScore, Said
from ragapp.engine import GROUP, Format, IntentTree, IntentTreeError, RoutingDecision
from ragapp.engine.engine import Engine
from ragapp.engine.intent_edits import IntentDraft
from ragapp.ui.handlers import user_errors
from ragapp.ui.i18n import both, t
from ragapp.ui.markup import escape_text
from ragapp.ui.said_words import said_or_english
from ragapp.ui.state import actor_of

log = logging.getLogger(__name__)

# Sentinel choice values. Neither can be an intent code (codes start with a lowercase letter or a digit).
NEW = "(new)"
TOP = "(top)"
NEW_LABEL = t("intents.new")
TOP_LABEL = t("intents.top")
_INDENT = "\u2003\u2003"  # em spaces: HTML does not collapse them, so the depth stays visible in the table
_ICONS = {GROUP: "📂", "KB": "📄", "SYSTEM": "💬"}
_ACTIONS = {
    "route": (
        "➡️", both("Route", "路由"),
        both("search the knowledge bases of the intents below", "检索下列意图的知识库"),
    ),
    "clarify": (
        "❓", both("Ask back", "反问澄清"),
        both("the question fits several intents: the user is asked which", "问题符合多个意图：请用户确认是哪一个"),
    ),
    "system": (
        "💬", both("Reply directly", "直接回复"),
        both("a message to the assistant, answered without searching", "发给助手的话，无需检索直接回复"),
    ),
    "fallback": (
        "🔍", both("Fall back", "全库检索"),
        both("no intent kept: search every knowledge base", "没有选中意图：检索全部知识库"),
    ),
}  # fmt: skip

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
            kind = tree.shown_kind(node.code)
            top_k = "" if kind != "KB" else (str(node.top_k) if node.top_k is not None else "—")
            rows.append(
                [
                    f"{_INDENT * depth}{_ICONS[kind]} {node.name}",
                    node.code,
                    both("group", "分组") if kind == GROUP else kind,  # KB and SYSTEM: the same in both
                    ", ".join(node.kbs),
                    len(node.examples),
                    top_k,
                ]
            )
        return rows

    def summary(self) -> str:
        tree = self.engine.intents.tree()
        if not len(tree):
            return both("The intent tree is empty: add an intent or import a file", "意图树为空：请新建意图或导入文件")
        kb, system = len(tree.leaves({"KB"})), len(tree.leaves({"SYSTEM"}))
        groups = len(tree) - kb - system
        off = " · ⚠️ " + both(
            "routing is off (`RAGAPP_WORKFLOW__ROUTE=false`): the chat searches everything",
            "路由已关闭（`RAGAPP_WORKFLOW__ROUTE=false`）：对话会检索全部知识库",
        )
        return both(
            f"**{len(tree)} intents**: {groups} groups, {kb} KB leaves, {system} SYSTEM leaves",
            f"**共 {len(tree)} 个意图**：{groups} 个分组，{kb} 个知识库意图，{system} 个系统意图",
        ) + ("" if self.engine.settings.workflow.route else off)

    def pick_choices(self) -> list[tuple[str | I18nData, str]]:
        tree = self.engine.intents.tree()
        return [(NEW_LABEL, NEW), *((_label(tree, node.code), node.code) for node in tree.nodes())]

    def parent_choices(self, editing: str | None = None) -> list[tuple[str | I18nData, str]]:
        """Where a node may go: the top level or any node, except ``editing`` itself and what is under it."""
        tree = self.engine.intents.tree()
        return [(TOP_LABEL, TOP), *((_label(tree, node.code), node.code) for node in tree.parents_for(editing))]

    def kb_choices(self, extra: Iterable[str] = ()) -> list[str]:
        """The knowledge bases a KB leaf may name, and any already named by the node shown."""
        return self.engine.intents.knowledge_bases(extra)

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
        kind = tree.shown_kind(node.code)
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
            message = "⚠️ " + both(
                f"The intent `{picked}` no longer exists (deleted elsewhere?)", f"意图 `{picked}` 已不存在"
            )
            return (*self.form_values(None), message)
        if not picked or picked == NEW:
            return (
                *self.form_values(None),
                both("Fill in the form and press Save to add an intent", "填写后点击保存以新建意图"),
            )
        node = tree.get(picked)
        assert node is not None
        under = len(tree.descendants(picked))
        note = ""
        if under:
            note = " " + both(
                f"Deleting it also deletes the {under} intent(s) under it.", f"删除将同时删除其下 {under} 个意图。"
            )
        return (*self.form_values(picked), f"Editing **{tree.full_path(picked)}** (`{picked}`).{note}")

    @staticmethod
    def kind_changed(kind: str | None) -> tuple[Any, Any, Any]:
        """Show the fields that matter for the kind: knowledge bases and top-k for KB, a prompt for leaves."""
        kind = kind or "KB"
        return gr.update(**_kb_shows(kind)), gr.update(**_kb_shows(kind)), gr.update(**_prompt_shows(kind))

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
        request: gr.Request | None = None,
    ) -> tuple[str, Any, Any, Any, Any]:
        """Add the node in the form (``picked`` is NEW) or update the picked one (a new code renames it, a new
        parent moves it). Returns message, summary, tree, picker and parent picker; on a refused edit only the
        message changes."""
        replacing = picked if picked and picked != NEW else None
        draft = IntentDraft(
            code, None if parent == TOP else parent, name, description, examples, kind, kbs, top_k, prompt
        )
        try:
            saved = self.engine.intents.save(draft, replacing, actor=actor_of(self.engine, request))
        except IntentTreeError as exc:
            return self._refused(both("Not saved", "未保存"), exc.reasons, 5)  # type: ignore[return-value]
        tree = saved.tree
        verb = both("Added", "已新建") if saved.added else both("Saved", "已保存")
        message = f"✅ {verb}: **{tree.full_path(saved.code)}** (`{saved.code}`)"
        if saved.renamed_from is not None:
            message += both(f", renamed from `{saved.renamed_from}`", f"，原编号 `{saved.renamed_from}`")
        if saved.made_group is not None:
            group = tree.full_path(saved.made_group)
            message += both(
                f". **{group}** had no child intents, so it is now a group (its kind, knowledge bases, top-k and "
                "prompt were cleared)",
                f"。**{group}** 原本没有子意图，现已变为分组（其类型、知识库、top-k 和提示已清空）",
            )
        gr.Info(_toast(message))
        node = tree.get(saved.code)
        return (
            message,
            self.summary(),
            self.tree_rows(),
            gr.update(choices=self.pick_choices(), value=saved.code),
            gr.update(choices=self.parent_choices(saved.code), value=(node.parent if node else None) or TOP),
        )

    @user_errors
    def delete(self, picked: str | None, request: gr.Request | None = None) -> tuple[Any, ...]:
        """Delete the picked intent and everything under it. Returns message, summary, tree, picker and the
        form (emptied after a deletion)."""
        refused = both("Nothing deleted", "未删除")
        if not picked or picked == NEW:
            return self._refused(
                refused, [both("pick an intent to delete first", "请先选择要删除的意图")], _EDIT_OUTPUTS
            )
        try:
            deleted = self.engine.intents.delete(picked, actor=actor_of(self.engine, request))
        except IntentTreeError as exc:
            return self._refused(refused, exc.reasons, _EDIT_OUTPUTS)
        message = f"🗑️ {both('Deleted', '已删除')}: **{deleted.path} (`{picked}`)**"
        gone = deleted.count
        if gone > 1:
            message += both(
                f" and the {gone - 1} intent(s) under it ({gone} in all)",
                f"，连同其下 {gone - 1} 个意图（共 {gone} 个）",
            )
        return self._replaced(message)

    # -- import and export ---------------------------------------------------------------------

    @user_errors
    def import_file(self, path: str | None, request: gr.Request | None = None) -> tuple[Any, ...]:
        """Replace the whole tree with a YAML/JSON file. A bad file changes nothing and lists every problem.
        Returns message, summary, tree, picker and the form (emptied after an import)."""
        refused = both("Not imported", "未导入")
        if not path:
            first = both("choose a .yaml, .yml or .json file first", "请先选择 .yaml、.yml 或 .json 文件")
            return self._refused(refused, [first], _EDIT_OUTPUTS)
        file = Path(path)
        try:
            tree = self.engine.intents.import_file(file, actor=actor_of(self.engine, request))
        except IntentTreeError as exc:
            return self._refused(f"{refused}: {file.name}", exc.reasons, _EDIT_OUTPUTS)
        leaves = len(tree.leaves())
        name = escape_text(file.name)
        message = "📥 " + both(
            f"Imported **{name}**: {len(tree)} intents, {leaves} leaves; the previous tree was replaced",
            f"已导入 **{name}**：共 {len(tree)} 个意图（{leaves} 个叶子），原意图树已被替换",
        )
        return self._replaced(message)

    def export(self, fmt: Format) -> tuple[str, str]:
        """Write the tree to ``intents.<fmt>`` in a new temporary folder; returns the path and a message."""
        text = self.engine.intents.export(fmt)
        path = Path(tempfile.mkdtemp(prefix="ragapp-intents-")) / f"intents.{fmt}"
        path.write_text(text, encoding="utf-8")
        count = len(self.engine.intents.tree())
        said = both(
            f"Exported {count} intents as `{path.name}`: download it below",
            f"已导出 {count} 个意图到 `{path.name}`，请在下方下载",
        )
        return str(path), f"📤 {said}"

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
            return [], both("Type a question to see how it would be routed", "请输入问题以测试意图路由")
        decision = self.engine.intents.test(question)
        return score_rows(decision), self.decision_markdown(decision)

    def decision_markdown(self, decision: RoutingDecision) -> str:
        icon, title, meaning = _ACTIONS[decision.action]
        lines = [f"### {icon} {title}", meaning, ""]
        if decision.intents:
            tree = self.engine.intents.tree()
            heading = (
                both("Offered choices", "候选意图") if decision.action == "clarify" else both("Chosen", "选中意图")
            )
            lines.append(f"**{heading}:**")
            for leaf in decision.intents:
                node = tree.get(leaf.code)
                kbs = f" · KB: {', '.join(node.kbs)}" if node is not None and node.kbs else ""
                lines.append(f"- {leaf.path} (`{leaf.code}`) — {leaf.score:.2f}{kbs}")
            lines.append("")
        if decision.fit is not None:
            lines += [fit_line(decision.fit.probability, self.engine.settings.workflow.route_fit_min), ""]
        lines.append(f"**{both('Reason', '原因')}:** {said_or_english(decision.said, decision.reason, escape_text)}")
        classification = decision.classification
        if classification is not None:
            if classification.error:
                lines.append(f"\n**{both('Model error', '模型错误')}:** {classification.error}")
            if classification.ignored:
                ids = ", ".join(f"`{_plain(i)}`" for i in classification.ignored)
                why = both("not among the candidates", "不在候选列表中")
                lines.append(f"\n**{both('Ignored ids', '已忽略的编号')}** ({why}): {ids}")
            lines.append(f"\n**{both('Model time', '模型耗时')}:** {classification.duration_s:.1f} s")
        if not self.engine.settings.workflow.route:
            lines.append(
                "\n⚠️ "
                + both(
                    "Routing is off (`RAGAPP_WORKFLOW__ROUTE=false`): the chat searches everything; this is what it "
                    "would do with routing on",
                    "路由已关闭（`RAGAPP_WORKFLOW__ROUTE=false`）：对话会检索全部知识库；以上是开启路由时的结果",
                )
            )
        return "\n".join(lines)

    # -- helpers -------------------------------------------------------------------------------

    def _replaced(self, message: str) -> tuple[Any, ...]:
        """After a deletion or an import: a toast, the message, the fresh view, and an empty form."""
        gr.Info(_toast(message))
        return (
            message,
            self.summary(),
            self.tree_rows(),
            gr.update(choices=self.pick_choices(), value=NEW),
            *self.form_values(None),
        )

    @staticmethod
    def _refused(title: str, reasons: Sequence[Said | str], outputs: int) -> tuple[Any, ...]:
        """An edit that changed nothing: a toast, the message listing every reason in both languages (the
        engine's records, or the page's own words), and "no change" for the other ``outputs - 1`` outputs."""
        gr.Warning(_toast(f"{title}: " + "; ".join(_reason(r, _as_is) for r in reasons)))
        listed = "\n".join(f"- {_reason(r, escape_text)}" for r in reasons)
        unchanged = both("nothing was changed", "意图树未改变")
        return f"❌ **{title}** — {unchanged}:\n\n{listed}", *_unchanged(outputs - 1)


def fit_line(fit: float, fit_min: float) -> str:
    """How well the question fits the leaf named first: its calibrated score, and what a low one does."""
    fits = fit >= fit_min
    return both(
        f"**Fit:** {fit:.2f}, the probability that the first intent is right"
        + ("" if fits else f"; below {fit_min:.2f}, so the knowledge bases no intent searches are searched too"),
        f"**匹配度：**{fit:.2f}，即第一个意图正确的概率"
        + ("" if fits else f"；低于 {fit_min:.2f}，因此也会检索没有意图覆盖的知识库"),
    )


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


def _label(tree: IntentTree, code: str) -> str:
    return f"{tree.full_path(code)} ({code})"


def _kb_shows(kind: str) -> dict[str, Any]:
    """Knowledge bases and top-k matter on KB leaves only."""
    return {"visible": kind == "KB"}


def _prompt_shows(kind: str) -> dict[str, Any]:
    """The prompt matters on leaves: extra answer instructions (KB) or the reply's instructions (SYSTEM)."""
    label = t("intents.prompt_system") if kind == "SYSTEM" else t("intents.prompt")
    return {"visible": kind in ("KB", "SYSTEM"), "label": label}


def _unchanged(count: int) -> tuple[Any, ...]:
    return tuple(gr.update() for _ in range(count))


_OURS = re.compile(r"&lt;(/span|span class=&quot;lang-(?:en|zh)&quot;)&gt;")


def _toast(markdown: str) -> str:
    """A message for a toast, which renders HTML rather than Markdown: escaped, but for the language spans of
    ``both``."""
    escaped = html.escape(markdown.replace("**", "").replace("`", ""))
    return _OURS.sub(lambda m: "<" + m.group(1).replace("&quot;", '"') + ">", escaped)


def _reason(reason: Said | str, escape: Callable[[str], str]) -> str:
    return reason if isinstance(reason, str) else said_or_english(reason, reason.english, escape)


def _as_is(text: str) -> str:
    return text  # the toast escapes the whole message itself


def _plain(text: str) -> str:
    return text.replace("`", "'")
