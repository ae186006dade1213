"""Chat messages <-> records: one plain record per message the chat shows, what a click on a message looks up.

A record is what Gradio's chat shows (role, content, metadata, options) plus keys of ours: ``doc_id`` and
``chunk_id`` (the passage a citation message points at, with its ``highlights``) and ``trace_id`` (the trace of
the answer the message belongs to, for feedback). A kept conversation's records are drawn again from its
exchanges (``records_of``); one kept before exchanges were is its records as stored (``message_of``). Pure
functions: tested without a browser.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

import gradio as gr

from ragapp.core.turn import Exchange
from ragapp.core.types import ChatTurn, Citation
from ragapp.ui.i18n import both
from ragapp.ui.render import EVIDENCE_LABEL, TurnView, citation_title, shown_evidence, source_messages

DELETED_MARK = " · 🗑️ " + both("document deleted", "文档已删除")
_SHOWN_KEYS = ("role", "content", "metadata", "options")


def record_of(message: gr.ChatMessage | dict[str, Any], **ours: str | None) -> dict[str, Any]:
    """The stored form of one chat message (a ``gr.ChatMessage`` or the dict Gradio sends back)."""
    if isinstance(message, gr.ChatMessage):
        shown: dict[str, Any] = {"role": message.role, "content": message.content, "metadata": message.metadata,
                 "options": message.options}  # fmt: skip
    else:
        shown = {key: message.get(key) for key in _SHOWN_KEYS}
    record = {key: value for key, value in shown.items() if value not in (None, [], {})}
    if not isinstance(record.get("content"), str):  # files and components are not kept: their text only
        record["content"] = str(record.get("content") or "")
    return record | {key: value for key, value in ours.items() if value}


def message_of(record: dict[str, Any]) -> gr.ChatMessage:
    """A stored record shown again, exactly as it was; a citation of a since-deleted document says so."""
    metadata = dict(record.get("metadata") or {})
    if record.get("doc_deleted"):
        metadata["title"] = f"{metadata.get('title', '📄')}{DELETED_MARK}"
    message = gr.ChatMessage(
        role="user" if record.get("role") == "user" else "assistant", content=str(record.get("content") or "")
    )
    if metadata:
        message.metadata = metadata  # type: ignore[assignment]  # MetadataDict is a TypedDict of these keys
    if record.get("options"):
        message.options = list(record["options"])
    return message


def memory_of(history: list[ChatTurn], summary: str) -> dict[str, Any]:
    return {"history": [[turn.role, turn.content] for turn in history], "summary": summary}


def turns_of(memory: dict[str, Any]) -> tuple[list[ChatTurn], str]:
    """The recent turns and the summary of older ones, as stored by ``memory_of`` (bad entries skipped)."""
    turns = [
        ChatTurn(role, text)  # type: ignore[arg-type]
        for item in memory.get("history") or []
        if isinstance(item, list) and len(item) == 2 and (role := item[0]) in ("user", "assistant")
        and isinstance(text := item[1], str)
    ]  # fmt: skip
    summary = memory.get("summary")
    return turns, summary if isinstance(summary, str) else ""


def records_of(
    exchanges: Sequence[Exchange], deleted: Collection[str] = (), figures: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """The records of a kept conversation, drawn again from its exchanges as they were drawn live (a cited
    figure with its picture from ``figures``, by chunk id); a citation of a document in ``deleted`` is marked
    (``doc_deleted``)."""
    records: list[dict[str, Any]] = []
    for exchange in exchanges:
        records.append(record_of(gr.ChatMessage(role="user", content=exchange.said)))
        records.extend(turn_records(TurnView(exchange.turn, figures)))
    return [{**r, "doc_deleted": True} if r.get("doc_id") in deleted else r for r in records]


def turn_records(view: TurnView) -> list[dict[str, Any]]:
    """The records of one answered turn (the assistant side, as ``view.messages()`` shows it); a citation's
    record names its document, its chunk and the sentences it supports (to show it on its page later)."""
    turn = view.turn
    messages, evidence = view.messages(), shown_evidence(turn)
    cited = list(turn.citations)
    sources = len(source_messages(turn)) if cited else 0  # the citations' messages come last, in order
    citations: list[Citation | None] = [None] * (len(messages) - sources) + cited[:sources]
    records = []
    for message, citation in zip(messages, citations, strict=True):
        source = citation is not None  # one of the answer's sources (the quote above it is not one of its own)
        if citation is None and evidence is not None and str(message.content).startswith(EVIDENCE_LABEL):
            # the quote shown first, marked by the sentence it was taken from (a substring of the passage)
            citation = (
                evidence.citation
                if evidence.citation.highlights
                else replace(evidence.citation, highlights=(evidence.quote,))
            )
        record = record_of(message, trace_id=turn.trace_id or None)
        if citation is not None:
            record |= {"doc_id": citation.chunk.doc_id, "chunk_id": citation.chunk.chunk_id}
            if source:
                record |= {"cited": citation.number, "label": citation_title(citation)}
            if citation.highlights:
                record["highlights"] = list(citation.highlights)
        records.append(record)
    return records
