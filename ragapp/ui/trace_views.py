"""A stored trace -> the tables and text the Traces tab shows. Pure functions over the typed trace (no gradio),
so each view is testable on its own; traces written by older versions read back with empty parts (``from_dict``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from ragapp.core.chunks import doc_of_chunk_id as doc_of
from ragapp.core.confidence_words import LEVELS
from ragapp.core.said import Said
from ragapp.core.types import ConfidenceCheck
from ragapp.engine import RetrievalRecord, Span, SupportRecord, Trace, TraceSummary
from ragapp.ui.i18n import TEXTS, both
from ragapp.ui.markup import escape_text, plain_markdown
from ragapp.ui.routing_words import why_widened
from ragapp.ui.said_words import said_or_english

STATUS_ICON = {
    "ok": "✅",
    "refused": "🚫",  # passages were found and do not hold the answer (the check or the model said so)
    "not found": "🔍",
    "degraded": "⚠️",
    "failed": "❌",
    "clarified": "❓",
    "cancelled": "⏹️",
}
# The words of a trace's status and mode, in both languages (the list's cells and the header are HTML); the
# status filter of the Traces tab offers the same words.
STATUS_WORDS = {status: TEXTS[f"status.{status}"] for status in STATUS_ICON}
MODE_WORDS = {"workflow": ("workflow", "工作流"), "agent": ("agent", "智能体"), "auto": ("auto", "自动")}
KIND_WORDS = {"chat": ("chat", "对话"), "ingest": ("upload", "上传"), "api": ("API", "API")}
SUMMARY_HEADERS = ["Time (UTC)", "Question", "Mode", "Total (s)", "Status", "Feedback", "Degradations"]
SUMMARY_TYPES = ["str", "str", "html", "str", "html", "str", "html"]  # the user's words stay text
_RATING_ICON = {"up": "👍", "down": "👎"}
FUSED_HEADERS_START = ["Final", "Moved", "Fused", "Source", "Chunk"]
FUSED_HEADERS_END = ["Fused score", "Rerank score", "In prompt"]


def summary_rows(items: Sequence[TraceSummary]) -> list[list[Any]]:
    return [
        [
            _when(t.started_at),
            _short(t.question, 90),
            _word(MODE_WORDS, t.mode),
            "" if t.total_s is None else f"{t.total_s:.2f}",
            f"{STATUS_ICON.get(t.status, '')} {_word(STATUS_WORDS, t.status)}",
            _RATING_ICON.get(t.rating, "") + (f" {_short(t.comment, 60)}" if t.comment else ""),
            "; ".join(said_or_english(t.degradations_said.get(d), d, escape_text) for d in t.degradations),
        ]
        for t in items
    ]


def feedback_line(rating: str, comment: str) -> str:
    """The feedback the user gave on the answer, under the trace's header ("" when none)."""
    if rating not in _RATING_ICON:
        return ""
    said = f": “{escape_text(comment)}”" if comment else ""
    return f"\n\n**{both('Feedback', '反馈')}** {_RATING_ICON[rating]}{said}"


def header(trace: Trace) -> str:
    """Question as typed and as searched, mode, status, time; errors and degradations set apart."""
    # Traces hold what users typed and documents said (an admin reads everyone's): shown as text, never markup.
    lines = [f"### {STATUS_ICON.get(trace.status, '')} {escape_text(trace.question)}"]
    facts = [
        f"**{_word(KIND_WORDS, trace.kind or 'chat')}**",
        f"{both('mode', '模式')} **{_word(MODE_WORDS, trace.mode or '?')}**",
        f"{both('status', '状态')} **{_word(STATUS_WORDS, trace.status or '?')}**",
        f"{both('total', '总耗时')} **{(trace.total_s or 0):.2f} s**",
        f"{both('started', '开始于')} {_when(trace.started_at)} UTC",
        f"id `{trace.id}`",
    ]
    lines.append(" · ".join(facts))
    if trace.mode_reason:
        lines.append(f"_{escape_text(trace.mode_reason)}_")
    rewrite = trace.rewrite
    if rewrite:
        lines.append(f"- **{both('Typed', '输入')}:** {escape_text(rewrite.original)}")
        lines.append(f"- **{both('Searched as', '检索问题')}:** {escape_text(rewrite.standalone)}")
        subs = rewrite.sub_questions
        if len(subs) > 1:
            lines += [f"  - {both('part', '子问题')} {i}: {escape_text(q)}" for i, q in enumerate(subs, start=1)]
    for error in trace.errors:
        lines.append(f"> ❌ **{both('Error', '错误')}:** {escape_text(error)}")
    for message in trace.degradations:
        said = said_or_english(trace.degradations_said.get(message), message, escape_text)
        lines.append(f"> ⚠️ **{both('Degraded', '降级')}:** {said}")
    for notice in trace.notices:
        if notice.level != "warning":
            lines.append(f"> ℹ️ {said_or_english(notice.said, notice.message, escape_text)}")
    if trace.recorder_error:
        incomplete = both("This trace may be incomplete", "此追踪记录可能不完整")
        lines.append(f"> 🧰 {incomplete}: {escape_text(trace.recorder_error)}.")
    if trace.evidence:
        quote = escape_text(_short(" ".join(trace.evidence.quote.split()), 300))
        first = both("Quoted first", "最先引用")
        lines.append(f"**{first}** [{trace.evidence.number}] {escape_text(trace.evidence.source)}: “{quote}”")
    answer = trace.answer
    if answer:
        state = (
            both("refused", "拒答")
            if answer.abstained
            else both("not sure: withheld", "不确定：未给出")
            if answer.not_sure
            else both("grounded", "有依据")
            if answer.grounded
            else both("not grounded", "无依据")
        )
        lines.append(f"**{both('Answer', '回答')}** ({state}):")
        text = answer.text
        shown = text if len(text) <= 600 else text[:599] + "…"
        lines.append("> " + plain_markdown(shown).replace("\n", "\n> "))
        if answer.guess:
            guess = answer.guess if len(answer.guess) <= 600 else answer.guess[:599] + "…"
            lines.append(f"**{both('The guess withheld', '未给出的猜测')}:**")
            lines.append("> " + plain_markdown(guess).replace("\n", "\n> "))
        if answer.confidence:
            level = _word(CONFIDENCE_WORDS, answer.confidence)
            chance = ""
            if answer.probability is not None:
                chance = f" · {both('P(right)', '答对概率')} {answer.probability:.2f}"
            lines.append(f"**{both('Confidence', '置信度')}: {level}{chance}**")
            lines.append("\n".join(check_line(c) for c in answer.checks))
        if answer.support:
            check = both("Support check (the model's answer, sentence by sentence)", "依据核对（逐句核对模型的回答）")
            lines.append(f"**{check}:**")
            lines.append("\n".join(support_line(s) for s in answer.support))
    return "\n\n".join(lines)


CONFIDENCE_WORDS = {level: (look.name.english, look.name.chinese) for level, look in LEVELS.items()}
CHECK_WORDS = {
    "on_topic": ("on topic", "切题"),
    "supported": ("supported", "有依据"),
    "fits": ("fits", "对题"),
    "agrees": ("agrees", "与引文一致"),
    "parts": ("parts", "各部分"),
}


def check_line(c: ConfidenceCheck) -> str:
    """'- ✅ fits: gives the number asked for': one check behind the answer's confidence (its detail from its
    records; a figure, or a check stored before they were kept, as it is)."""
    detail = f": {said_or_english(c.said, c.detail, escape_text)}" if c.detail else ""
    return f"- {'✅' if c.passed else '⚠️'} {_word(CHECK_WORDS, c.check)}{detail}"


_SUPPORT_ICONS = {"supported": "✅", "unsupported": "⚠️", "neutral": "·"}


def support_line(s: SupportRecord) -> str:
    """'- ✅ “90 minutes [1].” cites [1] (facts: 90; words 100%)': one sentence of the support check."""
    said = escape_text(_short(" ".join(s.text.split()), 120))
    if s.status == "supported":
        numbers = ", ".join(f"[{n}]" for n in s.passages)
        why = both(f"cites {numbers or 'nothing'}", f"引用 {numbers or '无'}")
    elif s.status == "unsupported":
        missing = ", ".join(s.missing)
        why = both(
            f"not in the passages ({'missing: ' + missing if s.missing else 'too few of its words'})",
            f"不在原文中（{'缺少：' + missing if s.missing else '相同的词太少'}）",
        )
    else:
        why = both("no key facts to check", "没有要核对的关键事实")
    facts = both(f"facts: {', '.join(s.facts)}; ", f"事实：{', '.join(s.facts)}；") if s.facts else ""
    changed = s.cited and list(s.cited) != s.passages
    numbers = ", ".join(f"[{n}]" for n in s.cited)
    cited = both(f"; the model cited {numbers}", f"；模型引用的是 {numbers}") if changed else ""
    words = both(f"words {s.overlap:.0%}", f"词重合 {s.overlap:.0%}")
    return f"- {_SUPPORT_ICONS.get(s.status, '·')} “{said}” {why} ({facts}{words}{cited})"


ACTION_WORDS = {
    "route": ("route", "路由"),
    "clarify": ("ask back", "反问"),
    "system": ("reply directly", "直接回复"),
    "fallback": ("search everything", "全部检索"),
}
INTENT_TYPES = ["str", "str", "number", "html", "html"]  # the action and the reason in both languages


def intent_rows(trace: Trace) -> list[list[Any]]:
    """Every leaf the classifier scored, per routed (sub-)question; chosen ones marked."""
    rows: list[list[Any]] = []
    for routing in trace.routing:
        chosen = {i.code for i in routing.intents}
        scores = routing.scores or routing.intents
        action, reason = _word(ACTION_WORDS, routing.action), said_or_english(routing.said, routing.reason)  # HTML
        if not scores:
            rows.append([routing.question, "—", None, action, reason])
        for s in scores:
            mark = "✓ " if s.code in chosen else ""
            rows.append([routing.question, mark + s.path, s.score, action, reason])
    return rows


def search_labels(trace: Trace) -> list[tuple[str, int]]:
    # A dropdown's choice is text: "(cached)" is said with a sign both languages read.
    return [(f"{i + 1}. {_short(r.query, 60)}{' ♻️' if r.cached else ''}", i) for i, r in enumerate(trace.retrievals)]


def channel_names(search: RetrievalRecord) -> list[str]:
    return [c.channel for c in search.channels]


def channel_rows(search: RetrievalRecord, names: Mapping[str, str]) -> list[list[Any]]:
    """Each channel's hits in its own order: channel, rank, score, document (🗑️: deleted), chunk id."""
    return [
        [c.channel, h.rank, round(h.score, 4), names.get(doc_of(h.chunk_id), "🗑️") + _via(h.via), h.chunk_id]
        for c in search.channels
        for h in c.hits
    ]


def _via(question: str | None) -> str:
    """A channel hit found through a written question: the question, after a sign that needs no language."""
    return f" ← ❓ {question}" if question else ""


def fused_headers(search: RetrievalRecord) -> list[str]:
    channels = channel_names(search)
    method = search.settings.get("fusion") or "fusion"
    ranks = [f"Rank · {c}" for c in channels]
    parts = [f"{'RRF' if method == 'rrf' else method} · {c}" for c in channels]
    return FUSED_HEADERS_START + ranks + parts + FUSED_HEADERS_END


def prompt_ids(trace: Trace) -> set[str]:
    """Chunk ids that reached the answer's prompt (after the token budget), as the trace recorded them."""
    return {c.chunk_id for c in trace.context}


def fused_rows(search: RetrievalRecord, in_prompt: set[str] | None = None) -> list[list[Any]]:
    """The fused table: final rank, how the reranker moved it, fused rank, source, chunk, rank in each channel,
    what each channel added to the fused score, fused score, rerank score, whether it reached the prompt
    (``in_prompt``: the chunk ids that did; None: as the search chose them, before the token budget)."""
    channels = channel_names(search)
    rows = []
    for c in search.candidates:
        reached = c.chunk_id in in_prompt if in_prompt is not None else c.in_prompt
        moved = c.fused_rank - c.final_rank
        rows.append(
            [c.final_rank, f"↑{moved}" if moved > 0 else f"↓{-moved}" if moved < 0 else "=", c.fused_rank]
            + [c.source + (f" ({c.location})" if c.location else ""), _short(c.text, 120)]
            + [c.channel_ranks.get(ch, "—") for ch in channels]
            + [round(c.contributions[ch], 4) if ch in c.contributions else "—" for ch in channels]
            + [round(c.fused_score, 4), "—" if c.rerank_score is None else round(c.rerank_score, 4)]
            + ["✓" if reached else ""]
        )
    return rows


def search_note(search: RetrievalRecord) -> str:
    s = search.settings
    budget, limit, top_k = s.get("recall_budget"), s.get("candidate_limit"), s.get("top_k")
    bits = [
        f"{both('fusion', '融合')} **{s.get('fusion')}**"
        + (f" (k={s.get('rrf_k')})" if s.get("fusion") == "rrf" else ""),
        f"{both('weights', '权重')} {escape_text(str(s.get('weights')))}",
        f"{both('reranker', '重排序')} **{s.get('reranker')}**",
        both(
            f"{budget} per channel → {limit} candidates → {top_k} in prompt",
            f"每通道 {budget} 条 → {limit} 个候选 → {top_k} 个进入提示",
        ),
        f"{search.seconds * 1000:.0f} ms" + (both(" (cached)", "（缓存）") if search.cached else ""),
    ]
    if search.kbs is not None:
        bits.append(both("knowledge bases", "知识库") + ": " + escape_text(", ".join(search.kbs)))
    judged = [c for c in search.candidates if c.relevance]
    if judged:
        kept = sum(c.relevance.startswith("kept") for c in judged)
        dropped = len(judged) - kept
        bits.append(both(f"relevance gate: {kept} kept, {dropped} dropped", f"相关性过滤：保留 {kept}，丢弃 {dropped}"))
    return " · ".join(bits)


def relevance_lines(search: RetrievalRecord) -> str:
    """The relevance gate's decision on each candidate, in the final order (empty for older traces)."""
    return "\n".join(
        f"- {c.final_rank}. {escape_text(c.source)}"
        + (f" ({escape_text(c.location)})" if c.location else "")
        + f" — {_relevance(c.relevance, c.said)}"
        for c in search.candidates
        if c.relevance
    )


def _relevance(gate: str, said: Said | None) -> str:
    """The gate's 'kept: rerank score ≥ 0.2' in both languages, from its record (``said``; a trace stored
    before the record was kept shows its English reason as it is)."""
    verdict, _, reason = gate.partition(": ")
    words = {"kept": both("kept", "保留"), "dropped": both("dropped", "丢弃")}
    if verdict not in words:
        return escape_text(gate)
    return f"{words[verdict]}: {said_or_english(said, reason, escape_text)}"


def llm_markdown(trace: Trace) -> str:
    """Every model call: the exact messages sent and the completion, with token counts."""
    if not trace.llm_calls:
        return "_" + both("No model call in this request.", "此请求没有调用模型。") + "_"
    purpose = {s.attributes.get("call"): _parent_name(trace, s) for s in trace.spans if s.kind == "llm"}
    out = []
    for record in trace.llm_calls:
        call, index = record.call, record.index
        tokens = f"{call.prompt_tokens} → {call.completion_tokens} " + both("tokens", "词元")
        estimated = "" if call.usage_reported else both(" (estimated)", "（估计）")
        title = f"#### {both('Call', '调用')} {index + 1} · {purpose.get(index, '')} · {call.model}"
        out.append(f"{title}\n{tokens}{estimated} · {call.seconds:.2f} s" + (" · JSON" if call.json else ""))
        if call.error:
            out.append(f"> ❌ {call.error}")
        for m in call.messages:
            out.append(f"**{m.get('role', '')}**\n```text\n{_fence(m.get('content', ''))}\n```")
        if call.tool_calls:
            out.append(f"**{both('tool calls', '工具调用')}:** `{call.tool_calls}`")
        out.append(f"**{both('completion', '输出')}**\n```text\n{_fence(call.completion)}\n```")
    return "\n\n".join(out)


def agent_rows(trace: Trace) -> list[list[Any]]:
    return [
        [
            s.step,
            s.tool,
            str(s.arguments),
            ("❌ " if s.status == "failed" else "") + _word(STEP_WORDS, s.status),
            "" if s.duration_s is None else round(s.duration_s, 2),
            s.error or _short(s.preview, 160),
        ]
        for s in trace.agent_steps
    ]


def why_not(trace: Trace, doc_id: str, name: str) -> str:
    """Where the best chunk of document ``doc_id`` ranked in each channel, after fusion and after rerank, in
    every search of the request; or that no channel returned it."""
    shown = escape_text(name)
    if not trace.retrievals:
        return both(
            f"This request ran no search, so **{shown}** could not be retrieved.",
            f"此请求没有检索，所以检索不到 **{shown}**。",
        )
    out = ["### " + both(f"Why not **{shown}**?", f"为什么没有 **{shown}**？")]
    widenings = [n.widened for n in trace.notices if n.widened is not None]
    for i, search in enumerate(trace.retrievals, start=1):
        s = search.settings
        lines = [f"**{both('Search', '检索')} {i}:** {escape_text(search.query)}"]
        if search.kbs is not None:
            lines.append(f"- {both('searched only', '只检索了')}: {escape_text(', '.join(search.kbs))}")
            lines += [f"- ℹ️ {line}" for line in why_widened(search, trace.routing, widenings)]
        found_any = False
        for channel in search.channels:
            ranks = [h for h in channel.hits if doc_of(h.chunk_id) == doc_id]
            if ranks:
                found_any = True
                top = min(ranks, key=lambda h: h.rank)
                said = both(
                    f"best chunk at rank **{top.rank}** (score {top.score:.4f})",
                    f"最好的片段排第 **{top.rank}**（得分 {top.score:.4f}）",
                )
                if top.via:
                    via = Said("search.via_question", {"question": top.via})
                    said += ", " + said_or_english(via, top.via, escape_text)
            else:
                said = both(f"not in its top {len(channel.hits)}", f"不在其前 {len(channel.hits)} 名中")
            lines.append(f"- {channel.channel}: {said}")
        mine = [c for c in search.candidates if c.doc_id == doc_id]
        if mine:
            best = min(mine, key=lambda c: c.final_rank)
            fused = min(c.fused_rank for c in mine)
            lines.append("- " + both(f"after fusion: rank **{fused}**", f"融合后：第 **{fused}** 名"))
            score = best.rerank_score
            extra = "" if score is None else both(f" (rerank score {score:.4f})", f"（重排得分 {score:.4f}）")
            lines.append(
                "- " + both(f"after rerank: rank **{best.final_rank}**", f"重排后：第 **{best.final_rank}** 名") + extra
            )
            gate = best.relevance  # the gate's own words ("" in traces recorded before it gave them)
            minimum = s.get("min_rerank_score")
            if any(c.in_prompt for c in mine):
                reached = both("it **reached the prompt**", "它**进入了提示**")
                lines.append(f"- ✅ {reached}" + (f" ({_relevance(gate, best.said)})" if gate else ""))
            elif gate.startswith("dropped"):
                lines.append(f"- ⛔ {both('relevance gate', '相关性过滤')}: {_relevance(gate, best.said)}")
            elif score is not None and minimum is not None and score < minimum:
                lines.append(
                    "- ⛔ "
                    + both(
                        f"dropped by the relevance threshold (min_rerank_score {minimum})",
                        f"低于相关性阈值而被丢弃（min_rerank_score {minimum}）",
                    )
                )
            else:
                top_k = s.get("top_k", "?")
                lines.append(
                    "- ⛔ "
                    + both(
                        f"below the {top_k} chunks that fit the prompt, or judged not relevant",
                        f"排在能放进提示的 {top_k} 个片段之后，或被判为不相关",
                    )
                )
        elif found_any:
            limit = s.get("candidate_limit", "?")
            lines.append(
                "- ⛔ "
                + both(
                    f"fused below the {limit} candidates passed to the reranker",
                    f"融合后排在交给重排序的 {limit} 个候选之后",
                )
            )
        else:
            lines.append(
                "- ⛔ "
                + both(
                    "**never retrieved**: no channel returned any of its chunks for this query",
                    "**从未被检索到**：没有任何通道为此查询返回它的片段",
                )
            )
        out.append("\n".join(lines))
    return "\n\n".join(out)


def cited_documents(trace: Trace) -> list[str]:
    """Document names the answer cited, else those whose chunks reached the prompt."""
    cited = [c.source for c in trace.answer.citations] if trace.answer else []
    names = cited or [c.source for c in trace.context]
    return list(dict.fromkeys(names))


STEP_WORDS = {"finished": ("finished", "完成"), "failed": ("failed", "失败"), "started": ("started", "进行中")}


def _word(words: Mapping[str, tuple[str, str]], value: str) -> str:
    """``value`` (a status, a mode) in both languages when ``words`` know it, else as it is (escaped)."""
    pair = words.get(value)
    return both(*pair) if pair else escape_text(value)


def _parent_name(trace: Trace, span: Span) -> str:
    parent = span.parent
    return trace.spans[parent].name if parent is not None and 0 <= parent < len(trace.spans) else ""


def _when(iso: str) -> str:
    try:
        return dt.datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return iso


def _short(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fence(text: str) -> str:
    return str(text).replace("```", "ʼʼʼ")
