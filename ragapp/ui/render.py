"""Engine events -> chat messages. Pure functions of the events: tested without a model or a browser."""

from __future__ import annotations

import html
from dataclasses import dataclass, field

import gradio as gr

from ragapp.tracing.events import (
    AnswerEvent,
    ClarifyEvent,
    EngineEvent,
    NoticeEvent,
    RetrievalEvent,
    RewriteEvent,
    RoutingEvent,
    StageEvent,
    TokenEvent,
)
from ragapp.types import Citation, RetrievedChunk

_STAGE_TITLES = {
    "memory": "🗂️ Summarising earlier turns",
    "rewrite": "✏️ Understanding the question",
    "route": "🧭 Choosing where to look",
    "retrieve": "🔎 Searching the knowledge base",
    "generate": "✍️ Writing the answer",
}
_ACTIONS = {
    "route": "Search in",
    "clarify": "Ask which one is meant",
    "system": "Reply directly (no search)",
    "fallback": "Search all knowledge bases",
}
SEARCH_ALL_CHOICE = {"label": "Search everything · 全部检索", "value": "*"}


@dataclass
class TurnView:
    """The assistant side of one turn, rebuilt as events arrive."""

    steps: list[gr.ChatMessage] = field(default_factory=list)
    answer: str = ""
    sources: list[gr.ChatMessage] = field(default_factory=list)
    retrieved: tuple[RetrievedChunk, ...] = ()
    rewrite: RewriteEvent | None = None
    choices: list[dict[str, str]] = field(default_factory=list)  # clickable answers when the app asks back
    routed: int = 0  # routing decisions seen (one per sub-question)
    done: bool = False

    def apply(self, event: EngineEvent) -> None:
        if isinstance(event, StageEvent):
            self._apply_stage(event)
        elif isinstance(event, NoticeEvent):
            icon = "⚠️" if event.level == "warning" else "ℹ️"
            self.steps.append(gr.ChatMessage(role="assistant", content=f"{icon} {event.message}"))
        elif isinstance(event, RetrievalEvent):
            self.retrieved = event.chunks
        elif isinstance(event, RewriteEvent):
            self.rewrite = event
        elif isinstance(event, RoutingEvent):
            self._apply_routing(event)
        elif isinstance(event, ClarifyEvent):
            self.choices = [{"label": c.label, "value": c.code} for c in event.choices] + [SEARCH_ALL_CHOICE]
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

    def _apply_routing(self, event: RoutingEvent) -> None:
        """Put the decision and its reason in the routing step's bubble (one per sub-question)."""
        title = _STAGE_TITLES["route"]
        bubbles = [m for m in self.steps if str((m.metadata or {}).get("title", "")).endswith(title)]
        if self.routed < len(bubbles):  # no bubble when routing is off: the decision is then in the trace only
            bubbles[self.routed].content = routing_summary(event)
        self.routed += 1

    def messages(self) -> list[gr.ChatMessage]:
        out = list(self.steps)
        if self.answer or self.done:
            answer = gr.ChatMessage(role="assistant", content=self.answer)
            if self.choices:
                answer.options = self.choices  # type: ignore[assignment]  # OptionDict is a TypedDict of these keys
            out.append(answer)
        if self.rewrite is not None and self.done:
            out.append(gr.ChatMessage(role="assistant", content=rewrite_note(self.rewrite)))
        out.extend(self.sources)
        return out


def routing_summary(event: RoutingEvent) -> str:
    """'Search in: Lumen V1 › Specs (0.90)' and the reason, for the routing step's bubble."""
    action = _ACTIONS.get(event.action, event.action)
    intents = ", ".join(f"{i.label} ({i.score:.2f})" for i in event.intents)
    lines = [f"**{action}**" + (f": {intents}" if intents else "")]
    if len(event.question) < 200:
        lines.append(f"Question: {event.question}")
    lines.append(f"Why: {event.reason}")
    return "\n\n".join(lines)


def rewrite_note(event: RewriteEvent) -> str:
    """The small line under the answer that says what was searched."""
    parts = event.sub_questions if len(event.sub_questions) > 1 else (event.standalone,)
    searched = " · ".join(f"“{p}”" for p in parts)
    return f"<sub>🔎 Searched as · 检索问题: {html.escape(searched)}</sub>"


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
