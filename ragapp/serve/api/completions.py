"""Engine events -> OpenAI chat completions: the conversation read from ``messages``, the answer's text and
citations, a clarification as an assistant message with numbered choices (and the reply that picks one), and
the chunks of a stream. Pure functions and small records, tested without a server."""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragapp.core.events import AnswerEvent, CheckedTextEvent, ClarifyEvent, EngineEvent
from ragapp.core.turn import Turn as Outcome
from ragapp.core.types import ChatTurn, Citation, Confidence, Mode
from ragapp.engine import SEARCH_ALL, Clarified
from ragapp.engine.library import figure_url
from ragapp.serve.api.errors import ApiError
from ragapp.serve.api.schemas import (
    AssistantMessage,
    ChatCompletion,
    CheckOut,
    ChoiceOut,
    CitationOut,
    ClarificationOut,
    CompletionChoice,
    ConfidenceOut,
    MessageIn,
    RagappInfo,
)

MODELS: dict[str, tuple[Mode, str]] = {
    "ragapp-workflow": ("workflow", "Rewrite, route through the intent tree, retrieve, answer with citations."),
    "ragapp-agent": ("agent", "A tool-calling agent that searches step by step (comparisons, multi-hop)."),
    "ragapp-auto": ("auto", "The agent for comparisons and multi-hop questions, the workflow for the rest."),
}
SEARCH_ALL_LABEL = "None of these: search everything · 都不是：全部检索"


def mode_of(model: str) -> Mode:
    if model not in MODELS:
        raise ApiError(404, f"Unknown model {model!r}: choose one of {', '.join(MODELS)}.", "model_not_found")
    return MODELS[model][0]


def conversation(messages: Sequence[MessageIn], recent_turns: int) -> tuple[str, list[ChatTurn]]:
    """(question, history): the last message is the question, the user and assistant turns before it the
    history, the last ``recent_turns`` turns of it (the API keeps no summary of older ones)."""
    last = messages[-1]
    if last.role != "user":
        raise ApiError(400, f"The last message must be the user's question (it is {last.role!r}).")
    question = last.text().strip()
    if not question:
        raise ApiError(400, "The last message holds no text: ask a question.")
    return question, history_of(messages[:-1], recent_turns)


def history_of(messages: Sequence[MessageIn], recent_turns: int) -> list[ChatTurn]:
    """The user and assistant turns of ``messages``, the last ``recent_turns`` of them."""
    history = [ChatTurn(m.role, m.text()) for m in messages if m.role in ("user", "assistant") and m.text()]
    return history[-2 * recent_turns :] if recent_turns > 0 else []


def citation_out(c: Citation) -> CitationOut:
    chunk = c.chunk
    return CitationOut(
        number=c.number, document=chunk.source, doc_id=chunk.doc_id, chunk_id=chunk.chunk_id,
        location=chunk.location, page=chunk.page, heading=chunk.heading, text=chunk.text,
        score=c.score, highlights=list(c.highlights), ocr_confidence=chunk.ocr_confidence,
        figure_url=figure_url(chunk), caption=chunk.figure.caption if chunk.figure is not None else None,
    )  # fmt: skip


def confidence_out(confidence: Confidence) -> ConfidenceOut:
    checks = [CheckOut(check=c.check, passed=c.passed, detail=c.detail) for c in confidence.checks]
    return ConfidenceOut(level=confidence.level, checks=checks, probability=confidence.probability)


def clarification(event: ClarifyEvent) -> tuple[str, ClarificationOut]:
    """The assistant message that asks back, and its choices as data."""
    choices = [ChoiceOut(number=i, code=c.code, label=c.label, score=c.score) for i, c in enumerate(event.choices, 1)]
    choices.append(ChoiceOut(number=0, code=SEARCH_ALL, label=SEARCH_ALL_LABEL))
    lines = [f"Which did you mean by “{event.ambiguous}”? · 您指的是哪一个？", ""]
    lines += [f"{c.number}. {c.label}" for c in choices]
    lines += ["", "Reply with the number. · 请回复编号。"]
    return "\n".join(lines), ClarificationOut(question=event.question, ambiguous=event.ambiguous, choices=choices)


class Clarifications:
    """The questions the API asked back, for a while: a reply naming a choice continues the question asked,
    as a click does in the chat. Keyed by owner and the text asked, since clients send the conversation back."""

    def __init__(self, kept: int = 256) -> None:
        self._kept = kept
        self._asked: OrderedDict[str, ClarifyEvent] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _key(owner: str, text: str) -> str:
        return hashlib.sha256(f"{owner}\n{text.strip()}".encode()).hexdigest()

    def asked(self, owner: str, text: str, event: ClarifyEvent) -> None:
        with self._lock:
            self._asked[self._key(owner, text)] = event
            while len(self._asked) > self._kept:
                self._asked.popitem(last=False)

    def resume(self, owner: str, messages: Sequence[MessageIn]) -> tuple[str, Clarified, int] | None:
        """(question, the pick, messages before the question) when the last message answers a question the API
        asked this owner in the message before it; else None (a new question)."""
        if len(messages) < 2 or messages[-2].role != "assistant":
            return None
        with self._lock:
            event = self._asked.get(self._key(owner, messages[-2].text()))
        if event is None:
            return None
        choice = _pick(messages[-1].text(), event)
        if choice is None:
            return None
        return event.question, Clarified(event.sub_questions, event.ambiguous, choice), max(0, len(messages) - 3)


def _pick(reply: str, event: ClarifyEvent) -> str | None:
    said = reply.strip().rstrip(".").casefold()
    if said.isdigit():
        number = int(said)
        if number == 0:
            return SEARCH_ALL
        return event.choices[number - 1].code if 0 < number <= len(event.choices) else None
    return next((c.code for c in event.choices if said in (c.code.casefold(), c.label.casefold())), None)


@dataclass
class Turn:
    """One answer as the API returns it: the engine's turn (``ragapp.core.turn``), the mode asked for, and the
    completion's id."""

    mode: str
    id: str = field(default_factory=lambda: f"chatcmpl-{secrets.token_hex(12)}")
    outcome: Outcome = field(default_factory=Outcome)
    streamed: str = ""  # what the stream has sent of the answer

    def apply(self, event: EngineEvent) -> str:
        """Take one event; returns the text it adds to a stream ("" for none): the answer's sentences once
        checked (``CheckedTextEvent``), never the unchecked draft, so that what a client joins up is the checked
        answer; what no such event gave (the rest, an answer not written by the model) comes in the last chunk."""
        self.outcome.apply(event)
        if self.outcome.answer is not None or not isinstance(event, CheckedTextEvent):
            return ""
        if not event.text.startswith(self.streamed):  # cannot happen (``qa.checked_draft``); never take back
            return ""
        added, self.streamed = event.text[len(self.streamed) :], event.text
        return added

    @property
    def answer(self) -> AnswerEvent | None:
        return self.outcome.answer

    @property
    def clarify(self) -> ClarifyEvent | None:
        return self.outcome.clarify

    @property
    def trace_id(self) -> str | None:
        return self.outcome.trace_id or None

    @property
    def notices(self) -> list[str]:
        return [n.message for n in self.outcome.notices]

    def message(self) -> AssistantMessage:
        if self.clarify is not None:
            text, asked = clarification(self.clarify)
            return AssistantMessage(content=text, clarification=asked)
        if self.answer is not None:
            citations = [citation_out(c) for c in self.answer.citations]
            confidence = confidence_out(self.answer.confidence) if self.answer.confidence else None
            return AssistantMessage(content=self.answer.text, citations=citations, confidence=confidence)
        return AssistantMessage(content=self.streamed)

    def info(self) -> RagappInfo:
        answer, mode = self.answer, self.outcome.mode or self.mode  # the mode Auto chose, once it did
        return RagappInfo(
            trace_id=self.trace_id, mode=mode, grounded=answer is not None and answer.grounded,
            abstained=answer is not None and answer.abstained, notices=list(self.notices),
            answered_before=self.outcome.cached.answered_at if self.outcome.cached is not None else None,
            memories_used=[m.text for m in self.outcome.recalled], **_stated(answer, self.clarify is not None),
            suggestions=[s.text for s in self.outcome.suggestions],
        )  # fmt: skip

    def tail(self) -> tuple[str, bool]:
        """What a stream still has to send of the final text, and whether that text replaces what was streamed
        (never, as the stream sends checked text only; were it so, the last chunk carries it whole, in
        ``ragapp.content``)."""
        final = self.message().content
        if final.startswith(self.streamed):
            return final[len(self.streamed) :], False
        return "", True


def _stated(answer: AnswerEvent | None, asked_back: bool) -> dict[str, Any]:
    """``answered``, ``reason`` and ``guess`` of the ``ragapp`` extension."""
    if asked_back:
        return {"answered": False, "reason": "asked_back"}
    if answer is not None and answer.not_sure:
        return {"answered": False, "reason": "not_sure", "guess": answer.guess or None}
    if answer is not None and (answer.abstained or not answer.grounded):
        return {"answered": False, "reason": "not_in_documents"}
    return {"answered": True}


def completion(turn: Turn, model: str, created: int) -> ChatCompletion:
    return ChatCompletion(
        id=turn.id, created=created, model=model,
        choices=[CompletionChoice(message=turn.message())], ragapp=turn.info(),
    )  # fmt: skip


def sse(data: dict[str, Any] | str) -> str:
    """One server-sent event."""
    return f"data: {data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)}\n\n"


def chunk(
    turn: Turn, model: str, created: int, delta: dict[str, Any], finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    """A ``chat.completion.chunk`` (``extra``: top-level extension fields, on the last chunk)."""
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"id": turn.id, "object": "chat.completion.chunk", "created": created, "model": model,
            "choices": [choice], **extra}  # fmt: skip


def last_chunk(turn: Turn, model: str, created: int) -> dict[str, Any]:
    """The chunk that ends a stream: the rest of the text, the citations and the confidence (in the delta, as
    in a reply's message), and the ``ragapp`` extension."""
    rest, replaced = turn.tail()
    message = turn.message()
    delta: dict[str, Any] = {"content": rest} if rest else {}
    delta["citations"] = [c.model_dump() for c in message.citations]
    if message.confidence is not None:
        delta["confidence"] = message.confidence.model_dump()
    if message.clarification is not None:
        delta["clarification"] = message.clarification.model_dump()
    info = turn.info().model_dump()
    if replaced:
        info["content"] = message.content
    return chunk(turn, model, created, delta, "stop", ragapp=info)
