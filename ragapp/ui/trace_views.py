"""A stored trace -> the tables and text the Traces tab shows. Pure functions over the typed trace (no gradio),
so each view is testable on its own; traces written by older versions read back with empty parts (``from_dict``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from ragapp.core.chunks import doc_of_chunk_id as doc_of
from ragapp.core.types import ConfidenceCheck
from ragapp.engine import RetrievalRecord, Span, SupportRecord, Trace, TraceSummary
from ragapp.ui.render import escape_text, plain_markdown

STATUS_ICON = {
    "ok": "✅",
    "degraded": "⚠️",
    "failed": "❌",
    "clarified": "❓",
    "not found": "🔍",
    "cancelled": "⏹️",
}
SUMMARY_HEADERS = ["Time (UTC)", "Question", "Mode", "Total (s)", "Status", "Feedback", "Degradations"]
_RATING_ICON = {"up": "👍", "down": "👎"}
FUSED_HEADERS_START = ["Final", "Moved", "Fused", "Source", "Chunk"]
FUSED_HEADERS_END = ["Fused score", "Rerank score", "In prompt"]


def summary_rows(items: Sequence[TraceSummary]) -> list[list[Any]]:
    return [
        [
            _when(t.started_at),
            _short(t.question, 90),
            t.mode,
            "" if t.total_s is None else f"{t.total_s:.2f}",
            f"{STATUS_ICON.get(t.status, '')} {t.status}",
            _RATING_ICON.get(t.rating, "") + (f" {_short(t.comment, 60)}" if t.comment else ""),
            "; ".join(t.degradations),
        ]
        for t in items
    ]


def feedback_line(rating: str, comment: str) -> str:
    """The feedback the user gave on the answer, under the trace's header ("" when none)."""
    if rating not in _RATING_ICON:
        return ""
    said = f": “{escape_text(comment)}”" if comment else ""
    return f"\n\n**Feedback** {_RATING_ICON[rating]}{said}"


def header(trace: Trace) -> str:
    """Question as typed and as searched, mode, status, time; errors and degradations set apart."""
    # Traces hold what users typed and documents said (an admin reads everyone's): shown as text, never markup.
    lines = [f"### {STATUS_ICON.get(trace.status, '')} {escape_text(trace.question)}"]
    facts = [
        f"**{trace.kind or 'chat'}**",
        f"mode **{trace.mode or '?'}**",
        f"status **{trace.status or '?'}**",
        f"total **{(trace.total_s or 0):.2f} s**",
        f"started {_when(trace.started_at)} UTC",
        f"id `{trace.id}`",
    ]
    lines.append(" · ".join(facts))
    if trace.mode_reason:
        lines.append(f"_{escape_text(trace.mode_reason)}_")
    rewrite = trace.rewrite
    if rewrite:
        lines.append(f"- **Typed:** {escape_text(rewrite.original)}")
        lines.append(f"- **Searched as:** {escape_text(rewrite.standalone)}")
        subs = rewrite.sub_questions
        if len(subs) > 1:
            lines += [f"  - part {i}: {escape_text(q)}" for i, q in enumerate(subs, start=1)]
    for error in trace.errors:
        lines.append(f"> ❌ **Error:** {escape_text(error)}")
    for message in trace.degradations:
        lines.append(f"> ⚠️ **Degraded:** {escape_text(message)}")
    for notice in trace.notices:
        if notice.level != "warning":
            lines.append(f"> ℹ️ {escape_text(notice.message)}")
    if trace.recorder_error:
        lines.append(f"> 🧰 This trace may be incomplete: {trace.recorder_error}.")
    if trace.evidence:
        quote = escape_text(_short(" ".join(trace.evidence.quote.split()), 300))
        lines.append(f"**Quoted first** [{trace.evidence.number}] {escape_text(trace.evidence.source)}: “{quote}”")
    answer = trace.answer
    if answer:
        state = "abstained" if answer.abstained else "grounded" if answer.grounded else "not grounded"
        lines.append(f"**Answer** ({state}):")
        text = answer.text
        shown = text if len(text) <= 600 else text[:599] + "…"
        lines.append("> " + plain_markdown(shown).replace("\n", "\n> "))
        if answer.confidence:
            lines.append(f"**Confidence: {answer.confidence}**")
            lines.append("\n".join(check_line(c) for c in answer.checks))
        if answer.support:
            lines.append("**Support check** (the model's answer, sentence by sentence):")
            lines.append("\n".join(support_line(s) for s in answer.support))
    return "\n\n".join(lines)


def check_line(c: ConfidenceCheck) -> str:
    """'- ✅ fits: gives the number asked for': one check behind the answer's confidence."""
    detail = f": {escape_text(c.detail)}" if c.detail else ""
    return f"- {'✅' if c.passed else '⚠️'} {c.check}{detail}"


_SUPPORT_ICONS = {"supported": "✅", "unsupported": "⚠️", "neutral": "·"}


def support_line(s: SupportRecord) -> str:
    """'- ✅ “90 minutes [1].” cites [1] (facts: 90; words 100%)': one sentence of the support check."""
    said = escape_text(_short(" ".join(s.text.split()), 120))
    if s.status == "supported":
        why = f"cites {', '.join(f'[{n}]' for n in s.passages) or 'nothing'}"
    elif s.status == "unsupported":
        why = f"not in the passages ({'missing: ' + ', '.join(s.missing) if s.missing else 'too few of its words'})"
    else:
        why = "no key facts to check"
    facts = f"facts: {', '.join(s.facts)}; " if s.facts else ""
    changed = s.cited and list(s.cited) != s.passages
    cited = f"; the model cited {', '.join(f'[{n}]' for n in s.cited)}" if changed else ""
    return f"- {_SUPPORT_ICONS.get(s.status, '·')} “{said}” {why} ({facts}words {s.overlap:.0%}{cited})"


def intent_rows(trace: Trace) -> list[list[Any]]:
    """Every leaf the classifier scored, per routed (sub-)question; chosen ones marked."""
    rows: list[list[Any]] = []
    for routing in trace.routing:
        chosen = {i.code for i in routing.intents}
        scores = routing.scores or routing.intents
        if not scores:
            rows.append([routing.question, "—", "", routing.action, routing.reason])
        for s in scores:
            mark = "✓ " if s.code in chosen else ""
            rows.append([routing.question, mark + s.path, s.score, routing.action, routing.reason])
    return rows


def search_labels(trace: Trace) -> list[tuple[str, int]]:
    return [
        (f"{i + 1}. {_short(r.query, 60)}{' (cached)' if r.cached else ''}", i) for i, r in enumerate(trace.retrievals)
    ]


def channel_names(search: RetrievalRecord) -> list[str]:
    return [c.channel for c in search.channels]


def channel_rows(search: RetrievalRecord, names: Mapping[str, str]) -> list[list[Any]]:
    """Each channel's hits in its own order: channel, rank, score, document, chunk id."""
    return [
        [c.channel, h.rank, round(h.score, 4), names.get(doc_of(h.chunk_id), "(deleted)"), h.chunk_id]
        for c in search.channels
        for h in c.hits
    ]


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
    bits = [
        f"fusion **{s.get('fusion')}**" + (f" (k={s.get('rrf_k')})" if s.get("fusion") == "rrf" else ""),
        f"weights {s.get('weights')}",
        f"reranker **{s.get('reranker')}**",
        f"{s.get('recall_budget')} per channel → {s.get('candidate_limit')} candidates → {s.get('top_k')} in prompt",
        f"{search.seconds * 1000:.0f} ms" + (" (cached)" if search.cached else ""),
    ]
    if search.kbs is not None:
        bits.append("knowledge bases: " + ", ".join(search.kbs))
    judged = [c for c in search.candidates if c.relevance]
    if judged:
        kept = sum(c.relevance.startswith("kept") for c in judged)
        bits.append(f"relevance gate: {kept} kept, {len(judged) - kept} dropped")
    return " · ".join(bits)


def relevance_lines(search: RetrievalRecord) -> str:
    """The relevance gate's decision on each candidate, in the final order (empty for older traces)."""
    return "\n".join(
        f"- {c.final_rank}. {c.source}" + (f" ({c.location})" if c.location else "") + f" — {c.relevance}"
        for c in search.candidates
        if c.relevance
    )


def llm_markdown(trace: Trace) -> str:
    """Every model call: the exact messages sent and the completion, with token counts."""
    if not trace.llm_calls:
        return "_No model call in this request._"
    purpose = {s.attributes.get("call"): _parent_name(trace, s) for s in trace.spans if s.kind == "llm"}
    out = []
    for record in trace.llm_calls:
        call, index = record.call, record.index
        tokens = f"{call.prompt_tokens} → {call.completion_tokens} tokens"
        estimated = "" if call.usage_reported else " (estimated)"
        title = f"#### Call {index + 1} · {purpose.get(index, '')} · {call.model}"
        out.append(f"{title}\n{tokens}{estimated} · {call.seconds:.2f} s" + (" · JSON" if call.json else ""))
        if call.error:
            out.append(f"> ❌ {call.error}")
        for m in call.messages:
            out.append(f"**{m.get('role', '')}**\n```text\n{_fence(m.get('content', ''))}\n```")
        if call.tool_calls:
            out.append(f"**tool calls:** `{call.tool_calls}`")
        out.append(f"**completion**\n```text\n{_fence(call.completion)}\n```")
    return "\n\n".join(out)


def agent_rows(trace: Trace) -> list[list[Any]]:
    return [
        [
            s.step,
            s.tool,
            str(s.arguments),
            ("❌ " if s.status == "failed" else "") + s.status,
            "" if s.duration_s is None else round(s.duration_s, 2),
            s.error or _short(s.preview, 160),
        ]
        for s in trace.agent_steps
    ]


def why_not(trace: Trace, doc_id: str, name: str) -> str:
    """Where the best chunk of document ``doc_id`` ranked in each channel, after fusion and after rerank, in
    every search of the request; or that no channel returned it."""
    if not trace.retrievals:
        return f"This request ran no search, so **{escape_text(name)}** could not be retrieved."
    out = [f"### Why not **{escape_text(name)}**?"]
    for i, search in enumerate(trace.retrievals, start=1):
        s = search.settings
        lines = [f"**Search {i}:** {escape_text(search.query)}"]
        if search.kbs is not None:
            lines.append(f"- searched only: {', '.join(search.kbs)}")
        found_any = False
        for channel in search.channels:
            ranks = [h for h in channel.hits if doc_of(h.chunk_id) == doc_id]
            if ranks:
                found_any = True
                top = min(ranks, key=lambda h: h.rank)
                lines.append(f"- {channel.channel}: best chunk at rank **{top.rank}** (score {top.score:.4f})")
            else:
                lines.append(f"- {channel.channel}: not in its top {len(channel.hits)}")
        mine = [c for c in search.candidates if c.doc_id == doc_id]
        if mine:
            best = min(mine, key=lambda c: c.final_rank)
            lines.append(f"- after fusion: rank **{min(c.fused_rank for c in mine)}**")
            score = best.rerank_score
            rerank = f"rank **{best.final_rank}**" + ("" if score is None else f" (rerank score {score:.4f})")
            lines.append(f"- after rerank: {rerank}")
            gate = best.relevance  # the gate's own words ("" in traces recorded before it gave them)
            if any(c.in_prompt for c in mine):
                lines.append("- ✅ it **reached the prompt**" + (f" ({gate})" if gate else ""))
            elif gate.startswith("dropped"):
                lines.append(f"- ⛔ relevance gate: {gate}")
            elif score is not None and s.get("min_rerank_score") is not None and score < s["min_rerank_score"]:
                lines.append(f"- ⛔ dropped by the relevance threshold (min_rerank_score {s['min_rerank_score']})")
            else:
                lines.append(f"- ⛔ below the {s.get('top_k', '?')} chunks that fit the prompt, or judged not relevant")
        elif found_any:
            lines.append(f"- ⛔ fused below the {s.get('candidate_limit', '?')} candidates passed to the reranker")
        else:
            lines.append("- ⛔ **never retrieved**: no channel returned any of its chunks for this query")
        out.append("\n".join(lines))
    return "\n\n".join(out)


def cited_documents(trace: Trace) -> list[str]:
    """Document names the answer cited, else those whose chunks reached the prompt."""
    cited = [c.source for c in trace.answer.citations] if trace.answer else []
    names = cited or [c.source for c in trace.context]
    return list(dict.fromkeys(names))


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
