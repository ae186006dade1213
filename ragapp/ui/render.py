"""Engine events -> chat messages. Pure functions of the events: tested without a model or a browser."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import gradio as gr

from ragapp.core.confidence_words import failed_words
from ragapp.core.events import (
    CHOOSE_GROUP,
    AgentStepEvent,
    AnswerEvent,
    CachedEvent,
    EngineEvent,
    EvidenceEvent,
    ModeEvent,
    NoticeEvent,
    RecallEvent,
    RewriteEvent,
    RoutingEvent,
    StageEvent,
    WaitEvent,
)
from ragapp.core.lang import is_chinese
from ragapp.core.markers import MARKER, cited_numbers
from ragapp.core.quotes import quote
from ragapp.core.turn import StageStep, Step, Turn
from ragapp.core.types import Citation, RetrievedChunk, Said
from ragapp.ui.confidence_badge import confidence_badge
from ragapp.ui.figure_view import figure_markup
from ragapp.ui.i18n import both
from ragapp.ui.markup import code_span, escape_text, highlighted, no_remote_content, plain_markdown
from ragapp.ui.memory_words import REMEMBER_CHOICE, recall_message
from ragapp.ui.next_questions import suggestion_choices
from ragapp.ui.routing_words import routing_line, weak_search
from ragapp.ui.said_words import said_or_english

_STAGE_TITLES = {
    "memory": "🗂️ " + both("Summarising earlier turns", "正在归纳之前的对话"),
    "rewrite": "✏️ " + both("Understanding the question", "正在理解问题"),
    "route": "🧭 " + both("Choosing where to look", "正在选择检索范围"),
    "early search": "⚡ " + both("Quoting the best match meanwhile", "同时先引用最相关的原文"),
    "retrieve": "🔎 " + both("Searching the knowledge base", "正在检索知识库"),
    "translate": "🌐 " + both("Searching in the documents' language", "正在用文档的语言检索"),
    "rephrase": "🔁 " + both("Searching again with the answer's likely words", "正在换用答案可能的措辞再检索"),
    "generate": "✍️ " + both("Writing the answer", "正在写回答"),
    "agent": "🤖 " + both("Agent working", "智能体工作中"),
}
FAILED = both(": failed", "：失败")
_MODE_ICONS = {"agent": "🤖", "workflow": "🧭"}
_ARGUMENT_CHARS = 300  # longer tool arguments are cut in the step bubble
_PREVIEW_CHARS = 500
_AGENT_COUNTS = (  # the agent stage's summary: detail key, singular, plural, Chinese
    ("steps", "step", "steps", "步"),
    ("model calls", "model call", "model calls", "次模型调用"),
    ("passages", "passage found", "passages found", "段原文"),
)
_ACTIONS = {
    "route": both("Search in", "检索范围"),
    "clarify": both("Ask which one is meant", "询问指的是哪一个"),
    "system": both("Reply directly (no search)", "直接回复（不检索）"),
    "fallback": both("Search all knowledge bases", "检索全部知识库"),
}


UNSUPPORTED_MARK = both("⚠️ not found in the documents", "⚠️ 文档中没有")
_LIST_LEAD = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")
SEARCH_ALL_CHOICE = {"label": "Search everything", "value": "*"}  # renamed in a Chinese page (page_language.CHOICES)
# Under an answer served from the answer cache: ask it anew (no intent code has a colon, so none is mistaken for it).
ANSWER_AGAIN_CHOICE = {"label": "Answer again", "value": ":answer-again:"}  # renamed likewise


class TurnView:
    """The assistant side of one turn as chat messages: the engine's events are folded by ``Turn`` (in the
    engine's core), and ``messages()`` draws what it has come to so far."""

    def __init__(self, turn: Turn | None = None, figures: Mapping[str, str] | None = None) -> None:
        self.turn = turn if turn is not None else Turn()
        self.figures = dict(figures or {})  # cited figures' pictures by chunk id (``ragapp.ui.figure_view``)

    def apply(self, event: EngineEvent) -> None:
        self.turn.apply(event)

    @property
    def answer(self) -> str:
        """The answer as text (streamed, then the checked one): what the conversation remembers."""
        return self.turn.text

    def messages(self) -> list[gr.ChatMessage]:
        turn = self.turn
        out = [m for step in turn.steps if (m := step_message(step)) is not None]
        evidence = shown_evidence(turn)
        if evidence is not None:
            out.append(evidence_message(evidence))
        if turn.text or turn.done:
            shown = answer_markup(turn.answer) if turn.answer is not None else turn.text
            answer = gr.ChatMessage(role="assistant", content=no_remote_content(shown or turn.text))
            if turn.clarify is not None:
                choices = [{"label": c.label, "value": c.code} for c in turn.clarify.choices] + [SEARCH_ALL_CHOICE]
                answer.options = choices  # type: ignore[assignment]  # OptionDict is a TypedDict of these keys
            if turn.cached is not None and turn.done:
                answer.content = f"{cached_note(turn.cached)}\n\n{answer.content}"
            out.append(answer)
        if turn.rewrite is not None and turn.done:
            out.append(gr.ChatMessage(role="assistant", content=rewrite_note(turn.rewrite)))
        out.extend(source_messages(turn, self.figures))
        if turn.cached is not None and turn.done:  # Gradio shows the options of the chat's last message only
            out[-1].options = [ANSWER_AGAIN_CHOICE]  # type: ignore[list-item]  # OptionDict's keys
        elif turn.proposal is not None and turn.done and out:  # "Remember this": see ragapp.ui.memory_words
            out[-1].options = [REMEMBER_CHOICE]  # type: ignore[list-item]
        if (next_questions := suggestion_choices(turn)) and out:  # ragapp.ui.next_questions
            out[-1].options = [*next_questions, *(out[-1].options or [])]  # type: ignore[list-item]
        return out


def cached_note(event: CachedEvent) -> str:
    """'♻️ Answered before, on 2026-12-03 …' above an answer served from the answer cache."""
    day = escape_text(event.answered_at[:10])
    asked = escape_text(" ".join(event.question.split()))
    return "♻️ " + both(
        f"*Answered before, on {day}" + (f", for “{asked}”" if asked else "") + ": the kept answer (no document "
        "searched has changed since). **Answer again** asks the model anew.*",
        f"*之前回答过（{day}" + (f"，问题是“{asked}”" if asked else "") + "）：这是保存的回答（此后所检索的文档"
        "没有改动）。点“**重新回答**”让模型重新回答。*",
    )


def shown_evidence(turn: Turn) -> EvidenceEvent | None:
    """The quote above the answer (when one was shown): the documents' best sentence while the model writes;
    once the answer is checked, the passage it cites first, by its sentence that supports the answer (as a quote:
    ``ragapp.core.quotes``, or the quote already shown when none makes one). None under
    an answer that rests on no passage: a refusal lists its nearest passages as sources, never a quote that
    reads as an answer."""
    answer = turn.answer
    if answer is None or turn.evidence is None:
        return turn.evidence
    if answer.abstained or answer.not_sure or not answer.grounded or not answer.citations:
        return None  # "not sure" shows its likeliest passage open below, never a quote that reads as an answer
    first = answer.citations[0]
    for sentence in first.highlights:
        if (shown := quote(sentence, first.chunk.text)) is not None:
            return EvidenceEvent(shown, replace(first, highlights=(sentence,)))
    if turn.evidence.citation.chunk.chunk_id == first.chunk.chunk_id:
        return EvidenceEvent(turn.evidence.quote, first)
    return None


def source_messages(turn: Turn, figures: Mapping[str, str] | None = None) -> list[gr.ChatMessage]:
    """Under a finished answer: a message per citation (a doubtful answer's first one open, so the reader
    checks it at once; a figure open on its picture, from ``figures`` by chunk id), or the passages consulted
    when a grounded answer cited none."""
    answer = turn.answer
    if answer is None:
        return []
    low = answer.not_sure or (answer.confidence is not None and answer.confidence.level == "low")
    pictures = figures or {}
    sources = [
        citation_message(c, opened=low and i == 0, picture=pictures.get(c.chunk.chunk_id))
        for i, c in enumerate(answer.citations)
    ]
    if answer.grounded and not answer.citations and turn.retrieved:
        sources = [consulted_message(turn.retrieved)]
    return sources


def step_message(step: Step) -> gr.ChatMessage | None:
    """One step's bubble (None: nothing to show, as for a stage that reported only its end)."""
    if isinstance(step, NoticeEvent):
        icon = "⚠️" if step.level == "warning" else "ℹ️"
        # Its records in both languages (a notice may quote a document: escaped); one stored before: its English
        widened = step.widened
        said = weak_search(widened) if widened is not None else said_or_english(step.said, step.message, escape_text)
        return gr.ChatMessage(role="assistant", content=f"{icon} {said}")
    if isinstance(step, ModeEvent):
        return gr.ChatMessage(role="assistant", content=mode_line(step))
    if isinstance(step, AgentStepEvent):
        return agent_step_message(step)
    if isinstance(step, RecallEvent):
        return recall_message(step)
    return stage_message(step) if step.opened else None


def stage_message(step: StageStep) -> gr.ChatMessage:
    """A stage's bubble: pending with its live line (its place in the model's queue; for the answer, what the
    model reads and for how long), then done with its summary, its duration, or its error."""
    title = _STAGE_TITLES.get(step.stage, step.stage)
    metadata: dict[str, Any] = {"title": title, "status": "pending" if step.pending else "done"}
    content = routing_summary(step.routing) if step.routing is not None else ""
    if step.pending:
        reading = reading_words(step.started_detail) if "passages" in step.started_detail else None
        wait = step.wait or WaitEvent(0, 0.0)
        # Beside the title, seen while the step is collapsed; in the title, not Gradio's plain-text "log", so
        # that it is said in the page's language.
        if step.stage == "generate" and (reading or step.wait is not None):
            metadata["title"] = f"{title} · {wait_line(wait, reading)}"
        elif wait.ahead > 0:
            metadata["title"] = f"{title} · {wait_line(wait, None)}"
    else:
        if step.duration_s is not None:
            metadata["duration"] = round(step.duration_s, 2)
        if step.status == "failed":
            metadata["title"] = f"❌ {title}{FAILED}"
            content = said_or_english(step.said, step.error or "", plain_markdown)
        elif step.routing is None:
            content = stage_summary(StageEvent(step.stage, step.status, step.duration_s, step.detail, step.error))
    return gr.ChatMessage(role="assistant", content=content, metadata=metadata)  # type: ignore[arg-type]


def agent_step_message(event: AgentStepEvent) -> gr.ChatMessage:
    """One bubble per step: pending while the tool runs, done when it finishes or fails (a step that fails
    before it starts, an unreadable reply, gets one straight away)."""
    called = event.tool not in ("", "?")
    english = f"Step {event.step} · {event.tool if called else 'no tool call'}"
    title = "🛠️ " + both(english, f"步骤 {event.step} · {event.tool if called else '未调用工具'}")  # each whole
    if event.tool == CHOOSE_GROUP:  # many tools: the model picks a group of them first
        chosen = str(event.arguments.get("group", "?"))
        title = "🗂️ " + both(f"Step {event.step} · tool group {chosen}", f"步骤 {event.step} · 工具组 {chosen}")
    metadata: dict[str, Any] = {"title": title, "status": "pending" if event.status == "started" else "done"}
    if event.status == "failed":
        metadata["title"] = f"❌ {title}{FAILED}"
    if event.duration_s is not None and event.status != "started":
        metadata["duration"] = round(event.duration_s, 2)
    return gr.ChatMessage(role="assistant", content=agent_step_body(event), metadata=metadata)  # type: ignore[arg-type]


def routing_summary(event: RoutingEvent) -> str:
    """'Search in: Lumen V1 › Specs (0.90)' and the reason, for the routing step's bubble."""
    action = _ACTIONS.get(event.action, event.action)
    intents = ", ".join(f"{i.label} ({i.score:.2f})" for i in event.intents)
    lines = [f"**{action}**" + (f": {intents}" if intents else "")]
    if len(event.question) < 200:
        lines.append(f"{both('Question', '问题')}: {event.question}")
    lines.append(f"{both('Why', '原因')}: {said_or_english(event.said, event.reason, escape_text)}")
    also = routing_line(event)
    if also is not None:
        lines.append(also)
    return "\n\n".join(lines)


def mode_line(event: ModeEvent) -> str:
    """'🤖 Auto chose agent: the question compares things': which way Auto mode took, and why."""
    # The engine says why in the question's language ("Auto chose …" / "自动模式选择了…").
    said = event.reason.lower().startswith("auto chose") or event.reason.startswith("自动模式")
    reason = event.reason if said else f"Auto chose {event.mode}: {event.reason}"
    return f"{_MODE_ICONS.get(event.mode, 'ℹ️')} {plain_markdown(reason)}"


def agent_step_body(event: AgentStepEvent) -> str:
    """The step bubble: why the model took the step, the call it made, and what came back (or the error)."""
    lines = []
    if event.thought:
        lines.append(f"**{both('Why', '原因')}:** {plain_markdown(event.thought)}")
    grouped = event.tool == CHOOSE_GROUP
    if grouped:
        lines.append(f"**{both('Tool group', '工具组')}:** {code_span(str(event.arguments.get('group', '')))}")
    elif event.tool not in ("", "?"):
        arguments = json.dumps(event.arguments, ensure_ascii=False, default=str)
        if len(arguments) > _ARGUMENT_CHARS:
            arguments = arguments[:_ARGUMENT_CHARS] + "…"
        lines.append(f"**{both('Tool', '工具')}:** {code_span(event.tool)} {code_span(arguments)}")
    if event.status == "failed":
        error = plain_markdown(event.error) if event.error else both("the step failed", "这一步失败了")
        lines.append(f"**{both('Error', '错误')}:** {error}")
    elif event.status == "finished":
        preview = event.preview.strip()
        if len(preview) > _PREVIEW_CHARS:
            preview = preview[:_PREVIEW_CHARS] + "…"
        preview = plain_markdown(preview) if preview else both("(no output)", "（无输出）")
        label = both("Its tools", "组内工具") if grouped else both("Result", "结果")
        lines.append(f"**{label}:** {preview}")
    return "\n\n".join(lines)


def rewrite_note(event: RewriteEvent) -> str:
    """The small line under the answer that says what was searched."""
    parts = event.sub_questions if len(event.sub_questions) > 1 else (event.standalone,)
    searched = " · ".join(f"“{p}”" for p in parts)
    return f"<sub>🔎 {both('Searched as', '检索问题')}: {plain_markdown(searched)}</sub>"


# The search channels' names, in both languages (a channel of a plug-in keeps its own name).
_CHANNEL_WORDS = {"vector": ("vector", "向量"), "keyword": ("keyword", "关键词")}


def stage_summary(event: StageEvent) -> str:
    """What a finished stage did, from its detail, in both languages (names, questions and sentences as they
    are: they are the user's and the documents' words)."""
    detail = event.detail
    if event.stage == "retrieve":
        found = [(_CHANNEL_WORDS.get(name, (name, name)), count) for name, count in detail.get("channels", {}).items()]
        candidates, relevant = detail.get("candidates", 0), detail.get("relevant", 0)
        reranker = str(detail.get("reranker", "off"))
        reranker_en, reranker_zh = ("off", "未开启") if reranker == "off" else (reranker, reranker)
        english = (
            f"{', '.join(f'{en}: {count} hits' for (en, _zh), count in found) or 'no channel answered'} · "
            f"{candidates} fused candidates · {relevant} relevant · reranker: {reranker_en}"
        )
        chinese = (
            f"{'，'.join(f'{zh}：{count} 条' for (_en, zh), count in found) or '没有检索通道返回结果'} · "
            f"融合后 {candidates} 个候选 · {relevant} 个相关 · 重排序：{reranker_zh}"
        )
        return both(escape_text(english), escape_text(chinese))
    if event.stage == "agent" and event.status == "finished":
        counts = [(detail.get(k, 0), one, many, zh) for k, one, many, zh in _AGENT_COUNTS]
        english = " · ".join(f"{n} {one if n == 1 else many}" for n, one, many, _zh in counts)
        return both(english, " · ".join(f"{n} {zh}" for n, _one, _many, zh in counts))
    if event.stage == "generate" and "chars" in detail:
        n = detail["chars"]
        return both(f"{n} characters written", f"写了 {n} 个字符")
    if event.stage == "memory" and "turns folded" in detail:
        n = detail["turns folded"]
        return both(f"{n} earlier turn{'s' if n != 1 else ''} summarised", f"归纳了之前的 {n} 轮对话")
    if detail.get("model call") == "none":  # a rule made no model call (docs/workflow.md)
        rule = Said(str(detail.get("rule")))  # a code of the catalogue; a step stored before: its English why
        return said_or_english(rule, str(detail.get("why", "")), escape_text)
    if event.stage == "rewrite" and "question" in detail:
        question, parts = escape_text(str(detail["question"])), detail.get("parts", 1)
        english = f"searched as “{question}”" + (f" in {parts} parts" if parts and parts > 1 else "")
        return both(english, f"检索问题：“{question}”" + (f"，分为 {parts} 部分" if parts and parts > 1 else ""))
    if event.stage == "route" and "decision" in detail:
        action = _ACTIONS.get(str(detail["decision"]), escape_text(str(detail["decision"])))
        intents = escape_text(", ".join(str(i) for i in detail.get("intents") or []))
        return action + (f" · {intents}" if intents else "")
    if event.stage == "translate" and "question" in detail:
        return both("searched as", "检索问题") + f": “{escape_text(str(detail['question']))}”"
    if event.stage == "rephrase" and "sentence" in detail:
        return both("searched with", "检索用句") + f": “{escape_text(str(detail['sentence']))}”"
    return escape_text(", ".join(f"{k}: {v}" for k, v in detail.items()))


def reading_words(detail: dict[str, Any]) -> tuple[str, str]:
    """("5 passages (≈ 600 tokens)", "5 段资料（约 600 词元）"): what the model reads before it writes, from the
    generate stage's detail."""
    count = int(detail.get("passages", 0))
    tokens = detail.get("prompt tokens")
    english = f"{count} passage{'s' if count != 1 else ''}" + (f" (≈ {tokens} tokens)" if tokens else "")
    return english, f"{count} 段资料" + (f"（约 {tokens} 词元）" if tokens else "")


def wait_line(event: WaitEvent, reading: tuple[str, str] | None) -> str:
    """The pending answer's live line: its place in the model's queue, or what the model is reading, and for
    how long."""
    clock = f" · {event.seconds:.0f} s"
    if event.ahead > 0:
        answers = "answer" if event.ahead == 1 else "answers"
        return both(
            f"⏳ Waiting for the model: {event.ahead} {answers} ahead of yours{clock}",
            f"⏳ 排队中，前面还有 {event.ahead} 个回答{clock}",
        )
    english, chinese = reading or ("the question", "问题")
    space = " " if chinese[:1].isdigit() else ""  # "正在阅读 3 段资料", "正在阅读问题"
    return both(f"📖 Reading {english}…{clock}", f"📖 正在阅读{space}{chinese}…{clock}")


def citation_title(citation: Citation) -> str:
    return f"[{citation.number}] {_where(citation)}"


def _where(citation: Citation) -> str:
    """The cited document's name and its page or section, as stored (escape it where Markdown renders it); for
    a passage read from a scan, how sure the OCR was, so a reader knows to check an odd word against the page."""
    where = citation.chunk.location
    read = citation.chunk.ocr_confidence
    scanned = f" · 🖨️ OCR {read:.0%}" if read is not None else ""  # the same words in both languages
    return citation.chunk.source + (f" · {where}" if where else "") + scanned


EVIDENCE_LABEL = "📌 " + both("From the documents", "文档原文")


def evidence_message(event: EvidenceEvent) -> gr.ChatMessage:
    """The quoted sentence(s) that best answer the question, with where they come from: on screen as soon as
    the passages are chosen, while the model is still reading them."""
    quote = f"<mark>{escape_text(event.quote)}</mark>"
    return gr.ChatMessage(
        role="assistant", content=f"{EVIDENCE_LABEL} · {escape_text(citation_title(event.citation))}\n\n> {quote}"
    )


# A click on the passage (a chat message) opens it where it stands: the page drawn, or its section.
OPEN_PAGE_HINT = "<sub>🔍 " + both("Click the passage to see it on its page", "点击原文查看所在页面") + "</sub>"


def citation_message(citation: Citation, opened: bool = False, picture: str | None = None) -> gr.ChatMessage:
    """A collapsed message per citation: click its title (document and page) to read the cited passage, the
    sentences that support the answer highlighted. ``opened``: the passage shown in full, not collapsed.
    ``picture``: a cited figure's (a ``data:`` URL), shown open with its caption and page instead of its words."""
    if picture is not None:  # no status: Gradio draws the message open
        title = f"📄 [{citation.number}] {escape_text(_where(citation))}"
        content = f"{figure_markup(citation, picture)}\n\n{OPEN_PAGE_HINT}"
        return gr.ChatMessage(role="assistant", content=content, metadata={"title": title})
    if opened:
        title = f"📄 [{citation.number}] {escape_text(_where(citation))}"
        body = highlighted(citation.chunk.text, citation.highlights)
        return gr.ChatMessage(role="assistant", content=f"**{title}**\n\n{body}\n\n{OPEN_PAGE_HINT}")
    return gr.ChatMessage(
        role="assistant",
        content=f"{highlighted(citation.chunk.text, citation.highlights)}\n\n{OPEN_PAGE_HINT}",
        metadata={"title": f"📄 [{citation.number}] {escape_text(_where(citation))}", "status": "done"},
    )


NOT_SURE_HEAD = both("Not sure — the passage most likely to hold it:", "不确定——最可能包含答案的段落：")
GUESS_BUTTON = both("Show the model's guess", "显示模型的猜测")
GUESS_CLASS = "model-guess"


def answer_markup(event: AnswerEvent) -> str:
    """The answer as displayed: each unsupported sentence muted and marked ⚠️ (a refusal is shown as it is), under
    it its confidence badge, and under a low-confidence answer a note saying so and why; "not sure" instead of
    an answer withheld (``not_sure_markup``)."""
    if event.not_sure:
        return not_sure_markup(event)
    shown = _clickable(_marked(event), {c.number for c in event.citations})
    return "\n\n".join(part for part in (shown, confidence_badge(event), low_confidence_note(event)) if part)


def not_sure_markup(event: AnswerEvent) -> str:
    """'Not sure — the passage most likely to hold it:' (the passage follows, open: ``source_messages``), and the
    model's withheld guess behind a "Show the model's guess" button (a native ``<details>``: a click, a tap or
    Enter opens it, no script), with its badge saying why it was withheld."""
    head = f"🤔 **{NOT_SURE_HEAD}**"
    if not event.guess:
        return head
    guess = _clickable(event.guess, {c.number for c in event.citations})
    badge = confidence_badge(event)
    inside = "\n\n".join(part for part in (guess, badge) if part)
    return f'{head}\n\n<details class="{GUESS_CLASS}"><summary>{GUESS_BUTTON}</summary>\n\n{inside}\n\n</details>'


def _clickable(text: str, numbers: set[int]) -> str:
    """Each [n] marker of a citation the answer has, made a link to it in the sources beside the answer (the
    page's script, ``ragapp.ui.chat_tab.CHAT_HEAD``, picks it there)."""

    def marker(match: re.Match[str]) -> str:
        first = cited_numbers(match.group(0))[0]
        return f'<span class="cite-marker">{match.group(0)}</span>' if first in numbers else match.group(0)

    return MARKER.sub(marker, text)


def low_confidence_note(event: AnswerEvent) -> str:
    """'⚠️ May be wrong — check the passage (it may not answer what was asked).' under a low-confidence answer;
    "" otherwise."""
    if event.confidence is None or event.confidence.level != "low":
        return ""
    chinese = is_chinese(event.text)
    reasons = failed_words(event.confidence, chinese)
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
        metadata={
            "title": "📚 " + both("Passages consulted (the answer cited none)", "参考过的原文（回答未引用）"),
            "status": "done",
        },
    )
