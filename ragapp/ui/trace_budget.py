"""A stored trace -> the Traces tab's "Prompt budget": for each answer prompt (and Agent mode's decision
prompt), the tokens each part was allowed by the budget table and the tokens it took, and what was compressed
to fit. Pure functions over the typed trace (no gradio), like ``trace_views``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragapp.core.said import Said
from ragapp.core.serial import load
from ragapp.engine import Trace
from ragapp.ui.i18n import both
from ragapp.ui.markup import escape_text
from ragapp.ui.said_words import said_or_english

PART_WORDS = {
    "instructions": ("instructions", "指令"),
    "question": ("question", "问题"),
    "history": ("conversation", "对话历史"),
    "memories": ("memories", "长期记忆"),
    "passages": ("passages", "检索段落"),
    "tools": ("tool descriptions", "工具描述"),
    "answer": ("answer (kept free)", "回答（预留）"),
    "spare": ("left free", "未分配"),
}
_HEADERS = (("part", "部分"), ("budget", "预算"), ("planned", "计划"), ("as sent", "实际发送"))
_ORDER = ("instructions", "question", "history", "memories", "passages", "tools", "answer", "spare")


def budget_markdown(trace: Trace) -> str:
    """One table per prompt that recorded its budget; a line saying there was none otherwise."""
    blocks = []
    for span in trace.spans:
        attributes = span.attributes
        if not isinstance(attributes.get("prompt"), Mapping):
            continue
        if span.name == "generate":
            sent = attributes.get("prompt parts")
            part = f" · {escape_text(str(attributes['part']))}" if attributes.get("part") else ""
            title = both("Answer prompt", "回答提示词") + part
            blocks.append(_table(title, attributes, sent if isinstance(sent, Mapping) else {}))
        elif span.name == "agent":
            blocks.append(_table(both("Agent's decision prompt", "智能体决策提示词"), attributes, {}))
    if not blocks:
        return "_" + both("No prompt budget was recorded in this request.", "此请求没有记录提示词预算。") + "_"
    return "\n\n".join(blocks)


def budget_rows(attributes: Mapping[str, Any], sent: Mapping[str, Any]) -> list[tuple[str, str, str, str]]:
    """(part, allowed tokens, tokens planned, tokens as sent) for each part present; a part without an
    allowance of its own (the question, the instructions) shows "–"."""
    budget = attributes.get("budget") or {}
    used = attributes.get("prompt") or {}
    allowed = dict(budget)
    if "passages" in allowed and "history" in allowed:  # the passages also get what the conversation left
        allowed["passages"] = allowed["passages"] + max(0, allowed["history"] - int(used.get("history", 0)))
    rows = []
    for part in _ORDER:
        if part not in used and part not in allowed:
            continue
        if part in ("memories", "tools", "spare") and not used.get(part) and not allowed.get(part):
            continue  # not in this prompt
        shown = allowed.get(part) if part not in ("instructions", "question", "window") else None
        rows.append((part, _number(shown), _number(used.get(part)), _number(sent.get(part))))
    return rows


def _table(title: str, attributes: Mapping[str, Any], sent: Mapping[str, Any]) -> str:
    budget = attributes.get("budget") or {}
    window = f" · {both('window', '窗口')} {budget['window']}" if "window" in budget else ""
    lines = [
        f"**{title}**{window}",
        "",
        "| " + " | ".join(both(*pair) for pair in _HEADERS) + " |",
        "|---|---:|---:|---:|",
    ]
    for part, allowed, planned, sent_tokens in budget_rows(attributes, sent):
        lines.append(f"| {both(*PART_WORDS[part])} | {allowed} | {planned} | {sent_tokens} |")
    english = [str(c) for c in attributes.get("compressed") or ()]
    records = attributes.get("compressed_said") or ()  # none in traces written before they were kept
    said = [load(Said, r) for r in records] if len(records) == len(english) else [None] * len(english)
    for record, words in zip(said, english, strict=True):
        compressed = said_or_english(record, words, escape_text)
        lines.append(f"\n> ✂️ {both('Compressed to fit', '为放入窗口而压缩')}: {compressed}")
    return "\n".join(lines)


def _number(value: object) -> str:
    return str(value) if isinstance(value, int) else "–"
