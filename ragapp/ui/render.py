"""Engine events -> chat messages: the answer, its evidence and its sources (the step bubbles: ``step_views``).
Pure functions of the events: tested without a model or a browser."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

import gradio as gr

from ragapp.core.confidence_words import failed_words
from ragapp.core.events import (
    AnswerEvent,
    CachedEvent,
    EngineEvent,
    EvidenceEvent,
)
from ragapp.core.lang import is_chinese
from ragapp.core.markers import MARKER, cited_numbers
from ragapp.core.quotes import quote
from ragapp.core.turn import Turn
from ragapp.core.types import Citation, RetrievedChunk
from ragapp.ui.confidence_badge import confidence_badge
from ragapp.ui.figure_view import figure_markup
from ragapp.ui.i18n import both
from ragapp.ui.markup import escape_text, highlighted, no_remote_content
from ragapp.ui.memory_words import REMEMBER_CHOICE
from ragapp.ui.next_questions import suggestion_choices
from ragapp.ui.step_views import rewrite_note, step_message

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
