"""One saved conversation as a file people can take with them: Markdown to read or paste anywhere, or JSON to
process (a documented, versioned shape; see docs/chats.md, "Taking chats with you").

Both are drawn from the conversation's exchanges, the engine's own record of each turn: the question, the
answer's text (never the chat's HTML), its citations (document, page, section, the supporting sentences), its
confidence and, in agent mode, its steps. Everything a user, a model or a document wrote is escaped where
Markdown would read it as markup, so a title like ``# hi`` or a question holding ``![x](https://evil/)`` stays
text and loads nothing. A conversation kept before exchanges were (the chat's messages as shown) is exported
from those messages: its questions, answers and citation labels. Pure functions: tested without a server.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from ragapp.core.confidence_words import answer_look, failed_words, level_look, reasons
from ragapp.core.events import AgentStepEvent, AnswerEvent
from ragapp.core.lang import is_chinese
from ragapp.core.turn import Exchange
from ragapp.core.types import Citation, Confidence
from ragapp.engine.saved_conversation import SavedConversation

ExportFormat = Literal["markdown", "json"]
FORMAT = "ragapp.conversation"
VERSION = 1  # raise it when a key changes meaning or goes; adding keys keeps it
MEDIA_TYPES: dict[ExportFormat, str] = {"markdown": "text/markdown; charset=utf-8", "json": "application/json"}
SUFFIXES: dict[ExportFormat, str] = {"markdown": ".md", "json": ".json"}

# What Markdown reads as markup inside a line (emphasis, code, links, HTML, tables, strikethrough, entities), and
# at the start of one (headings, quotes, lists, setext underlines). A backslash before ASCII punctuation always
# shows it as itself (CommonMark 2.4); the rest is left alone, so a name like "robots.md" reads as it is.
_MARKUP = re.compile(r"[\\`*_\[\]<>|~]|&(?=#?\w+;)")
_LINE_START = re.compile(r"^([#>+\-=]|\d+(?=[.)]))")
_IMAGE = re.compile(r"!\[([^\]\n]*)\]\(([^)\n]*)\)")
_TAG = re.compile(r"<(?=[A-Za-z/!?])")
_HTML_TAG = re.compile(r"<[^>\n]{0,500}>")
_ANSWER_LINE_START = re.compile(r"^(\s{0,3})(?=(?:\[[^\]\n]*\]:|={2,}\s*$))", re.MULTILINE)


def escaped(text: str) -> str:
    """User, model or document text shown as itself in Markdown, on one line (titles, names, questions)."""
    line = _MARKUP.sub(lambda m: "\\" + m.group(0), " ".join(text.split()))
    return _LINE_START.sub(lambda m: "\\" + m.group(0) if not m.group(0).isdigit() else m.group(0) + "\\", line)


def answer_markdown(text: str) -> str:
    """An answer as Markdown: its own lists and emphasis kept (the model writes Markdown on purpose), but no
    image that would load from another host, no raw HTML, and no link reference definition (``[1]: url``)
    that would turn its [n] markers into links."""
    text = _IMAGE.sub(lambda m: f"{m.group(1) or 'image'} ({m.group(2)})", text)
    text = _TAG.sub(r"\\<", text)
    return _ANSWER_LINE_START.sub(lambda m: m.group(1) + "\\", text).strip()


def plain(text: str) -> str:
    """Text shown in the chat (a conversation kept as shown) without its HTML: what it says, not its markup."""
    return _HTML_TAG.sub("", text).strip()


@dataclass(frozen=True)
class ChatExport:
    """An exported file: its name (no folder), media type and bytes; ``count``: how many chats it holds."""

    name: str
    media_type: str
    data: bytes
    count: int = 1


def confidence_words(confidence: Confidence, chinese: bool) -> str:
    """'Confidence: high', or for a low one the chat's warning: 'Confidence: low. May be wrong — check the
    sources (it may not answer what was asked).' The words are the chat's (``ragapp.core.confidence_words``)."""
    level = level_look(confidence).name.pick(chinese)
    if confidence.level != "low":
        return f"置信度：{level}" if chinese else f"Confidence: {level}"
    reasons = failed_words(confidence, chinese)
    if chinese:
        why = f"（{'；'.join(reasons)}）" if reasons else ""
        return f"置信度：{level}。⚠️ 可能有误，请核对下面的原文{why}。"
    why = f" ({'; '.join(reasons)})" if reasons else ""
    return f"Confidence: {level}. ⚠️ May be wrong — check the sources below{why}."


def confidence_lines(answer: AnswerEvent, chinese: bool) -> list[str]:
    """The answer's confidence as the chat's badge says it: its level, then each check behind it ("- ✓ Every
    sentence is in the passages"); nothing where the chat shows no badge (a refusal)."""
    look, confidence = answer_look(answer), answer.confidence
    if look is None:
        return []
    if confidence is None:
        level = look.name.pick(chinese)
        return [f"*置信度：{level}*" if chinese else f"*Confidence: {level}*", ""]
    said = [f"- {r.icon} {r.sentence.pick(chinese)}" for r in reasons(confidence)]
    return [f"*{confidence_words(confidence, chinese)}*", "", *said, *([""] if said else [])]


def _where(citation: Citation, chinese: bool) -> str:
    chunk = citation.chunk
    parts = [f"**{escaped(chunk.source)}**"]
    if chunk.page is not None:
        parts.append(f"第 {chunk.page} 页" if chinese else f"page {chunk.page}")
    if chunk.heading:
        parts.append(escaped(chunk.heading))
    return ", ".join(parts)


def _step_line(step: AgentStepEvent) -> str:
    given = {k: v for k, v in step.arguments.items() if v is not None}  # the tool's defaults say nothing
    arguments = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in given.items())
    call = f"`{step.tool}({arguments})`".replace("\n", " ") if step.tool not in ("", "?") else "—"
    if "`" in call[1:-1]:  # a backtick inside would end the code span: shown escaped instead
        call = escaped(call[1:-1])
    failed = f" ❌ {escaped(step.error or '')}" if step.status == "failed" else ""
    return f"{step.step}. {call}{failed}"


def _exchange_markdown(exchange: Exchange, deleted: frozenset[str]) -> list[str]:
    turn = exchange.turn
    chinese = is_chinese(exchange.said + (turn.answer.text if turn.answer else ""))
    out = [f"## {'问' if chinese else 'Q'}: {escaped(exchange.said) or '…'}", ""]
    steps = turn.agent_steps
    if steps:
        out += [f"*{'智能体步骤' if chinese else 'Agent steps'}:*", "", *(_step_line(s) for s in steps), ""]
    if turn.answer is not None:
        out += [answer_markdown(turn.answer.text) or "…", ""]
        if turn.answer.guess:  # said as "not sure": the guess it withheld, marked as such
            out += [f"*{'模型的猜测（未作为回答给出）' if chinese else 'The model’s guess, withheld'}:* "
                    f"{answer_markdown(turn.answer.guess)}", ""]  # fmt: skip
        out += confidence_lines(turn.answer, chinese)
        if turn.answer.citations:
            out += [f"**{'来源' if chinese else 'Sources'}:**", ""]
            deleted_since = " (文档已删除)" if chinese else " (document deleted since)"
            for c in turn.answer.citations:
                gone = deleted_since if c.chunk.doc_id in deleted else ""
                out.append(f"- [{c.number}] {_where(c, chinese)}{gone}")
                out += [f"  > {escaped(h)}" for h in c.highlights]
            out.append("")
    elif turn.clarify is not None:
        asked = "应用反问：你指的是哪一个？" if chinese else "The app asked back which one was meant:"
        out += [f"*{asked}*", "", *(f"- {escaped(c.label)}" for c in turn.clarify.choices), ""]
    else:  # stopped before the answer was checked: what it had written, said to be unfinished
        if turn.text.strip():
            out += [answer_markdown(turn.text), ""]
        stopped = "（回答未完成：已中断）" if chinese else "(the answer was stopped before it was finished)"
        out += [f"*{stopped}*", ""]
    return out


def _shown_markdown(messages: tuple[dict[str, Any], ...]) -> list[str]:
    """A conversation kept as shown: its questions, answers and sources, from the messages."""
    out: list[str] = []
    for m in messages:
        content, titled = str(m.get("content") or ""), bool((m.get("metadata") or {}).get("title"))
        if m.get("role") == "user":
            out += [f"## Q: {escaped(plain(content)) or '…'}", ""]
        elif m.get("cited") is not None:
            gone = " (document deleted since)" if m.get("doc_deleted") else ""
            out.append(f"- {escaped(str(m.get('label') or m['cited']))}{gone}")
        elif not titled and content.strip():  # the answer (steps and sources have titles)
            out += ["", answer_markdown(plain(content)), ""]
    return out


def _stamp(when: str) -> str:
    """'2026-12-03 10:07 UTC' from the store's ISO time ("" stays "")."""
    try:
        return datetime.fromisoformat(when).astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        return when


def to_markdown(saved: SavedConversation) -> str:
    """The conversation as Markdown: its title, dates, then each question with its answer and sources."""
    chinese = is_chinese(saved.title)
    labels = ("开始于", "更新于", "ragapp 对话") if chinese else ("started", "updated", "ragapp chat")
    times = (saved.created_at, saved.updated_at)
    dates = " · ".join(f"{label} {_stamp(when)}" for label, when in zip(labels[:2], times, strict=True) if when)
    out = [f"# {escaped(saved.title) or 'Chat'}", "", f"*{labels[2]}{' · ' + dates if dates else ''}*", ""]
    if saved.as_shown:
        out += _shown_markdown(saved.messages)
    for exchange in saved.exchanges:
        out += _exchange_markdown(exchange, saved.deleted)
    return "\n".join(out).rstrip() + "\n"


def _citation_json(c: Citation, deleted: frozenset[str]) -> dict[str, Any]:
    chunk = c.chunk
    return {"number": c.number, "document": chunk.source, "doc_id": chunk.doc_id, "page": chunk.page,
            "heading": chunk.heading, "passage": chunk.text, "highlights": list(c.highlights), "score": c.score,
            "document_deleted": chunk.doc_id in deleted}  # fmt: skip


def _exchange_json(exchange: Exchange, deleted: frozenset[str]) -> dict[str, Any]:
    turn, answer = exchange.turn, exchange.turn.answer
    confidence = answer.confidence if answer is not None else None
    return {
        "question": exchange.said,
        # A turn names its mode when Auto chose it or the agent ran; a plain workflow answer does not.
        "mode": turn.mode or ("agent" if turn.agent_steps else "workflow"),
        "answer": answer.text if answer is not None else None,
        # stopped before its end: the text written so far (else null)
        "answer_so_far": turn.text if answer is None and turn.clarify is None and turn.text else None,
        "grounded": answer.grounded if answer is not None else None,
        "abstained": answer.abstained if answer is not None else None,
        "not_sure": answer.not_sure if answer is not None else None,
        "guess": (answer.guess or None) if answer is not None else None,
        "confidence": None if confidence is None else {
            "level": confidence.level, "probability": confidence.probability,
            "checks": [{"check": c.check, "passed": c.passed, "detail": c.detail} for c in confidence.checks],
        },
        "citations": [_citation_json(c, deleted) for c in turn.citations],
        "agent_steps": [{"step": s.step, "tool": s.tool, "status": s.status, "arguments": s.arguments,
                         "error": s.error, "duration_s": s.duration_s} for s in turn.agent_steps],
        "asked_back": None if turn.clarify is None else {
            "question": turn.clarify.ambiguous, "choices": [c.label for c in turn.clarify.choices]
        },
        "trace_id": turn.trace_id or None,
    }  # fmt: skip


def _shown_json(messages: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
    exchanges: list[dict[str, Any]] = []
    for m in messages:
        content = plain(str(m.get("content") or ""))
        if m.get("role") == "user":
            exchanges.append({"question": content, "answer": None, "citations": []})
        elif exchanges and m.get("cited") is not None:
            cited = {"number": m["cited"], "label": m.get("label"), "doc_id": m.get("doc_id"),
                     "document_deleted": bool(m.get("doc_deleted"))}  # fmt: skip
            exchanges[-1]["citations"].append(cited)
        elif exchanges and not (m.get("metadata") or {}).get("title") and content:  # the answer and its notes
            said = exchanges[-1]["answer"]
            exchanges[-1]["answer"] = f"{said}\n\n{content}" if said else content
    return exchanges


def to_json(saved: SavedConversation, exported_at: str | None = None) -> str:
    """The conversation in the documented JSON shape (``format``, ``version``, ``exchanges``...)."""
    body = {
        "format": FORMAT,
        "version": VERSION,
        "id": saved.id,
        "title": saved.title,
        "created_at": saved.created_at or None,
        "updated_at": saved.updated_at or None,
        "exported_at": exported_at or datetime.now(UTC).isoformat(timespec="seconds"),
        "kept_as_shown": saved.as_shown,
        "exchanges": _shown_json(saved.messages) if saved.as_shown
        else [_exchange_json(e, saved.deleted) for e in saved.exchanges],
    }  # fmt: skip
    return json.dumps(body, ensure_ascii=False, indent=2, default=str) + "\n"


def render(saved: SavedConversation, fmt: ExportFormat) -> str:
    return to_json(saved) if fmt == "json" else to_markdown(saved)
