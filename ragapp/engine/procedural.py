"""Procedural memory: experience of which way of answering worked for which kind of question, learned from the
verdicts people give answers and used by rules (never put in the model's context).

Learning. An answer is judged from its trace: a thumbs up keeps it, a thumbs down does not, and so does asking the
same question again (the same words, or mostly the same words) within ``procedural.reask_minutes`` of it. The
verdict is kept with the answer's kind of question (Auto's classes, ``ragapp.agent.auto.question_kind``), the
intent routing chose, the mode that really answered (an agent that fell back counts as the workflow) and the agent
tools that returned something (``ragapp.store.procedural``). Answers served from the answer cache are not judged:
their trace holds no way of answering.

Use. Before a question is answered: Auto mode leaves its rule for the other mode when that mode was kept clearly
more often for this kind of question, and says so; the agent lists the tools that worked for this kind first
(``ragapp.agent.procedural``). The evidence goes into the trace as an ``ExperienceEvent``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from ragapp.agent.auto import question_kind
from ragapp.agent.procedural import Experience, experience_event, learned_mode, tool_order
from ragapp.config.procedural import ProceduralSettings
from ragapp.core.events import ExperienceEvent
from ragapp.store.procedural import Outcome, ProceduralStore, Signal, TableRow
from ragapp.tracing.model import Trace
from ragapp.tracing.store import TraceStore

log = logging.getLogger(__name__)

_WORD = re.compile(r"[^\W\d_]+|\d+")  # a word; a run of Chinese characters counts as characters below
SAME_WORDS = 0.6  # share of the two questions' words in common (Jaccard) that makes a re-ask


@dataclass(frozen=True)
class Steering:
    """What procedural memory does to one question: the mode Auto takes and why (None: the rule's), the agent's tool
    order (empty: as configured), and the event that puts the evidence in the trace (None: nothing known)."""

    mode: tuple[Literal["workflow", "agent"], str] | None = None
    tool_order: tuple[str, ...] = ()
    event: ExperienceEvent | None = None


class ProceduralMemory:
    def __init__(self, settings: ProceduralSettings, store: ProceduralStore, traces: TraceStore | None) -> None:
        self._settings = settings
        self._store = store
        self._traces = traces  # None: no traces, so no re-asks to find

    def experience(self, question: str) -> Experience:
        """All that is known about questions of ``question``'s kind."""
        kind = question_kind(question)
        modes, tools = self._store.tallies(kind)
        return Experience(kind, modes, tools)

    def steer(
        self, question: str, rule: tuple[Literal["workflow", "agent"], str] | None, tools: Sequence[str]
    ) -> Steering:
        """How to answer ``question``: ``rule`` is Auto's own choice (None: the mode was asked for, nothing to
        choose), ``tools`` the agent's tools as configured."""
        s = self._settings
        experience = self.experience(question)
        if not experience.modes:
            return Steering()
        learned = learned_mode(question, rule[0], experience, s.min_answers, s.margin) if rule is not None else None
        answering = learned[0] if learned is not None else rule[0] if rule is not None else "agent"
        order = tool_order(tools, experience, s.min_answers) if answering == "agent" else list(tools)
        changed = tuple(order) if order != list(tools) else ()
        mode, reason = learned if learned is not None else ("", "")
        return Steering(learned, changed, experience_event(experience, mode, reason, changed))

    # -- learning ------------------------------------------------------------------------------------------

    def rated(self, trace: Trace, rating: str) -> None:
        """Learn from a thumbs up ("up") or down ("down") on the answer of ``trace``."""
        if rating in ("up", "down"):
            self._learn(trace, "up" if rating == "up" else "down")

    def asked(self, owner: str, question: str) -> None:
        """Before ``owner``'s ``question`` is answered: if it asks their last question again, soon after, that
        answer was not kept. Never raises: a question is not refused because experience could not be kept."""
        window = self._settings.reask_minutes
        if self._traces is None or window <= 0:
            return
        try:
            self._traces.flush(timeout=2.0)  # the last answer's trace may still be queued (asked again at once)
            last = self._traces.list(owner, kind="chat", limit=1)
            if not last or not same_question(last[0].question, question):
                return
            if datetime.now(UTC) - _parsed(last[0].started_at) > timedelta(minutes=window):
                return
            trace = self._traces.get(last[0].id, owner)
            if trace is not None:
                self._learn(trace, "reask")
        except Exception:
            log.warning("procedural memory could not look for a re-ask", exc_info=True)

    def _learn(self, trace: Trace, signal: Signal) -> None:
        outcome = outcome_of(trace, signal)
        if outcome is not None:
            self._store.record(outcome)

    def table(self) -> list[TableRow]:
        """Everything learned: per kind and mode, answers and how many were kept."""
        return self._store.table()

    def close(self) -> None:
        self._store.close()


def outcome_of(trace: Trace, signal: Signal) -> Outcome | None:
    """The verdict on the answer of ``trace``, with its way of answering; None for a trace that answered nothing
    by a mode of its own (an upload, an answer from the cache, a question refused before answering)."""
    if trace.kind != "chat" or trace.answer is None or any(s.name == "answer cache" for s in trace.spans):
        return None
    agent = next((s for s in trace.spans if s.name == "agent"), None)
    if trace.mode not in ("workflow", "agent") or (trace.mode == "agent" and agent is None):
        return None
    mode = "agent" if agent is not None and agent.status != "failed" else "workflow"
    tools = tuple(s.tool for s in trace.agent_steps if s.status == "finished") if mode == "agent" else ()
    leaf = next((r.intents[0].path for r in trace.routing if r.intents), "")
    return Outcome(trace.id, question_kind(trace.question), mode, signal, tools, leaf)


def same_question(earlier: str, later: str) -> bool:
    """Whether ``later`` asks ``earlier`` again: the same words, or mostly the same (``SAME_WORDS``), ignoring case
    and punctuation; Chinese is compared character by character."""
    a, b = _words(earlier), _words(later)
    if not a or not b:
        return False
    return len(a & b) / len(a | b) >= SAME_WORDS


def _words(text: str) -> set[str]:
    words: set[str] = set()
    for w in _WORD.findall(text.casefold()):
        words.update(w if any("\u4e00" <= c <= "\u9fff" for c in w) else [w])
    return words


def _parsed(started_at: str) -> datetime:
    when = datetime.fromisoformat(started_at)
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)
