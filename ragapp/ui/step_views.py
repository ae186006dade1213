"""Engine events -> the chat's step bubbles: a stage's pending line and summary, an agent's tool step, the
routing decision, the mode Auto chose and the notices. Pure functions of the events, like ``ragapp.ui.render``
(the answer, its evidence and its sources), which draws a turn with them."""

from __future__ import annotations

import json
from typing import Any

import gradio as gr

from ragapp.core.events import (
    CHOOSE_GROUP,
    AgentStepEvent,
    ModeEvent,
    NoticeEvent,
    RecallEvent,
    RewriteEvent,
    RoutingEvent,
    StageEvent,
    WaitEvent,
)
from ragapp.core.stages import VERIFIED_YES
from ragapp.core.turn import StageStep, Step
from ragapp.core.types import Said
from ragapp.ui.i18n import both
from ragapp.ui.markup import code_span, escape_text, plain_markdown
from ragapp.ui.memory_words import recall_message
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
    "verify": "🔍 " + both("Checking the answer against its passages", "正在对照原文核对回答"),
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
    if event.stage == "verify" and VERIFIED_YES in detail:
        yes = float(detail[VERIFIED_YES])
        return both(f"the passages state it: {yes:.0%} likely", f"原文支持该回答的可能性：{yes:.0%}")
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
