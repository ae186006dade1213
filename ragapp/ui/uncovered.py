"""Knowledge bases no intent searches: the notice under an upload into one (Knowledge tab) and above the tree
(Intents tab), each with one click that adds a leaf for it (``Intents.add_leaf_for``; edited afterwards like any
leaf). Routing still reaches such a base when no leaf fits a question well (``ragapp.qa.widen``); a leaf of its
own lets questions about it be routed there directly."""

from typing import Any

import gradio as gr

from ragapp.core.access import Action, may
from ragapp.core.errors import AccessDenied
from ragapp.engine.engine import Engine
from ragapp.ui.handlers import user_errors
from ragapp.ui.i18n import both
from ragapp.ui.markup import escape_text
from ragapp.ui.routing_words import uncovered_upload
from ragapp.ui.state import actor_of


class UncoveredHandlers:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _may_edit(self, request: gr.Request | None) -> bool:
        try:
            return may(actor_of(self.engine, request), Action.EDIT_INTENTS)
        except AccessDenied:
            return False

    # -- the Knowledge tab ---------------------------------------------------------------------------

    def after_upload(self, report: str, kb: str | None, request: gr.Request | None = None) -> tuple[str, Any, str]:
        """The upload's report with the notice once when ``kb`` holds documents no intent searches, the row with
        the "add a leaf" button (for those who may edit the tree) and the knowledge base it adds a leaf for."""
        if not kb or kb not in self.engine.intents.uncovered():
            return report, gr.update(visible=False), ""
        shown = self._may_edit(request)
        return f"{report}\n\n{uncovered_upload(kb)}", gr.update(visible=shown), kb

    @user_errors
    def add_after_upload(self, report: str, kb: str, request: gr.Request | None = None) -> tuple[str, Any]:
        """The click under the upload: a leaf for ``kb``; the report says what was added and the button goes."""
        if not kb:
            return report, gr.update(visible=False)
        return f"{report}\n\n{self._added(kb, request)}", gr.update(visible=False)

    # -- the Intents tab -------------------------------------------------------------------------------

    def notice(self, request: gr.Request | None = None) -> tuple[Any, str, Any, Any]:
        """The row above the tree (shown while a knowledge base holds documents no intent searches), its text,
        the knowledge bases to pick from (the first picked: one click) and the button (for editors)."""
        uncovered = self.engine.intents.uncovered()
        if not uncovered:
            return gr.update(visible=False), "", gr.update(choices=[], value=None), gr.update(visible=False)
        names = ", ".join(f"**{escape_text(kb)}**" for kb in uncovered)
        text = "ℹ️ " + both(
            f"No intent searches {names}: questions reach it only when no intent fits them well, or when their "
            "intent's search is weak. Add an intent to route its questions there directly.",
            f"没有意图检索 {names}：只有当问题与各意图都不够匹配、或所选意图的检索结果很弱时，才会检索它。"
            "添加一个意图，相关问题就会直接路由到这里。",
        )
        editor = self._may_edit(request)
        choices = gr.update(choices=uncovered, value=uncovered[0], visible=editor and len(uncovered) > 1)
        return gr.update(visible=True), text, choices, gr.update(visible=editor)

    @user_errors
    def add(self, kb: str | None, request: gr.Request | None = None) -> str:
        """The Intents tab's click: a leaf for ``kb`` (the callers refresh the tree and the notice after)."""
        if not kb:
            raise gr.Error(both("Pick a knowledge base first.", "请先选择知识库。"))
        return self._added(kb, request)

    def _added(self, kb: str, request: gr.Request | None) -> str:
        saved = self.engine.intents.add_leaf_for(kb, actor=actor_of(self.engine, request))
        node = saved.tree.get(saved.code)
        name = escape_text(node.name if node is not None else saved.code)
        code = escape_text(saved.code)
        gr.Info(both(f"Added the intent {name}.", f"已添加意图 {name}。"))
        return "✅ " + both(
            f"Added the intent **{name}** (`{code}`), which searches **{escape_text(kb)}**. In the Intents tab, "
            "give it a description and a few example questions: the router compares questions with them.",
            f"已添加意图 **{name}**（`{code}`），它检索 **{escape_text(kb)}**。请在“意图”页为它补充描述和几个"
            "示例问题：路由会拿问题与它们比较。",
        )
