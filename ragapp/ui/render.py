"""Engine events -> chat messages. Pure functions of the events: tested without a model or a browser."""

from __future__ import annotations

import html
from dataclasses import dataclass, field

import gradio as gr

from ragapp.tracing.events import (
    AnswerEvent,
    EngineEvent,
    NoticeEvent,
    RetrievalEvent,
    StageEvent,
    TokenEvent,
)
from ragapp.types import Citation, RetrievedChunk

_STAGE_TITLES = {"retrieve": "🔎 Searching the knowledge base", "generate": "✍️ Writing the answer"}


@dataclass
class TurnView:
    """The assistant side of one turn, rebuilt as events arrive."""

    steps: list[gr.ChatMessage] = field(default_factory=list)
    answer: str = ""
    sources: list[gr.ChatMessage] = field(default_factory=list)
    retrieved: tuple[RetrievedChunk, ...] = ()
    done: bool = False

    def apply(self, event: EngineEvent) -> None:
        if isinstance(event, StageEvent):
            self._apply_stage(event)
        elif isinstance(event, NoticeEvent):
            icon = "⚠️" if event.level == "warning" else "ℹ️"
            self.steps.append(gr.ChatMessage(role="assistant", content=f"{icon} {event.message}"))
        elif isinstance(event, RetrievalEvent):
            self.retrieved = event.chunks
        elif isinstance(event, TokenEvent):
            self.answer += event.text
        elif isinstance(event, AnswerEvent):
            self.answer = event.text
            self.sources = [citation_message(c) for c in event.citations]
            if event.grounded and not event.citations and self.retrieved:
                self.sources = [consulted_message(self.retrieved)]
            self.done = True

    def _apply_stage(self, event: StageEvent) -> None:
        title = _STAGE_TITLES.get(event.stage, event.stage)
        if event.status == "started":
            self.steps.append(
                gr.ChatMessage(role="assistant", content="", metadata={"title": title, "status": "pending"})
            )
            return
        for message in reversed(self.steps):
            meta = message.metadata or {}
            if meta.get("title") == title and meta.get("status") == "pending":
                meta["status"] = "done"
                if event.duration_s is not None:
                    meta["duration"] = round(event.duration_s, 2)
                if event.status == "failed":
                    meta["title"] = f"❌ {title}: failed"
                    message.content = event.error or ""
                else:
                    message.content = stage_summary(event)
                break

    def messages(self) -> list[gr.ChatMessage]:
        out = list(self.steps)
        if self.answer or self.done:
            out.append(gr.ChatMessage(role="assistant", content=self.answer))
        out.extend(self.sources)
        return out


def stage_summary(event: StageEvent) -> str:
    detail = event.detail
    if event.stage == "retrieve":
        channels = ", ".join(f"{name}: {count} hits" for name, count in detail.get("channels", {}).items())
        return (
            f"{channels or 'no channel answered'} · {detail.get('candidates', 0)} fused candidates · "
            f"{detail.get('relevant', 0)} relevant · reranker: {detail.get('reranker', 'off')}"
        )
    return ", ".join(f"{k}: {v}" for k, v in detail.items())


def citation_title(citation: Citation) -> str:
    where = citation.chunk.location
    return f"[{citation.number}] {citation.chunk.source}" + (f" · {where}" if where else "")


def citation_message(citation: Citation) -> gr.ChatMessage:
    """A collapsed message per citation: click its title to read the cited passage."""
    return gr.ChatMessage(
        role="assistant",
        content=html.escape(citation.chunk.text),
        metadata={"title": f"📄 {citation_title(citation)}", "status": "done"},
    )


def consulted_message(chunks: tuple[RetrievedChunk, ...]) -> gr.ChatMessage:
    lines = [f"- {c.chunk.source}" + (f" · {c.chunk.location}" if c.chunk.location else "") for c in chunks]
    return gr.ChatMessage(
        role="assistant",
        content="\n".join(lines),
        metadata={"title": "📚 Passages consulted (the answer cited none)", "status": "done"},
    )
