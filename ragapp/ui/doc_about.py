"""A document's metadata and tags in the Knowledge tab's document view: what the file says about itself (title,
author, dates), where it came from (source and path), and the tags users set, which the Chat's filter reads."""

import gradio as gr

from ragapp.engine.engine import Engine
from ragapp.engine.library import DocumentView
from ragapp.ui.handlers import user_errors
from ragapp.ui.i18n import both
from ragapp.ui.markup import code_span, escape_text
from ragapp.ui.state import actor_of

# (key, English, Chinese) in the order shown.
_FIELDS = (
    ("title", "Title", "标题"),
    ("author", "Author", "作者"),
    ("created", "Created", "创建于"),
    ("modified", "Modified", "修改于"),
    ("source", "Source", "来源"),
    ("path", "Path", "路径"),
    ("changed", "Changed there", "在来源处修改于"),
)


def about_line(view: DocumentView) -> str:
    """'Title: Leave Policy · Author: Ana Ruiz · Source: `hr-share` · Path: `policies/leave.pdf` · Tags: hr, policy'."""
    parts = []
    for key, english, chinese in _FIELDS:
        value = view.meta.get(key)
        if value:
            shown = code_span(value) if key in ("source", "path") else escape_text(value)
            parts.append(f"{both(english, chinese)}: {shown}")
    tags = ", ".join(escape_text(t) for t in view.tags) or both("none", "无")
    parts.append(f"{both('Tags', '标签')}: {tags}")
    return " · ".join(parts)


class TagHandlers:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def about(self, doc_id: str | None, request: gr.Request | None = None) -> tuple[str, str]:
        """The open document's metadata line, and its tags as the tag box edits them (comma separated)."""
        if not doc_id:
            return "", ""
        view = self.engine.library.document_view(doc_id, actor=actor_of(self.engine, request))
        return about_line(view), ", ".join(view.tags)

    @user_errors
    def save(self, doc_id: str | None, text: str | None, request: gr.Request | None = None) -> tuple[str, str]:
        """Make the comma-separated ``text`` the open document's tags (the engine checks the rules and who may)."""
        if not doc_id:
            raise gr.Error(both("Pick a document in the table first.", "请先在表格中选择一份文档。"))
        tags = [part for part in (text or "").replace("，", ",").split(",") if part.strip()]
        saved = self.engine.library.set_tags(doc_id, tags, actor=actor_of(self.engine, request))
        gr.Info(both(f"Tags saved: {', '.join(saved) or 'none'}", f"标签已保存：{'、'.join(saved) or '无'}"))
        return self.about(doc_id, request)
