"""One turn, folded once: what the engine's events of one question add up to.

The chat renders a ``Turn`` (``ragapp.ui.render``), the HTTP API answers from it, the trace builder records
from it, a conversation stores it, and the evaluation commands read their figures from it: each adds its own
view, none reads the event stream its own way. ``apply`` takes the events in order as they arrive; the turn is
complete once its answer (or its question back) has come.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ragapp.core.events import (
    AgentStepEvent,
    AnswerEvent,
    CachedEvent,
    ClarifyEvent,
    EngineEvent,
    EvidenceEvent,
    EvidenceWithdrawnEvent,
    MemoryEvent,
    ModeEvent,
    NoticeEvent,
    ProposalEvent,
    Recalled,
    RecallEvent,
    RememberedEvent,
    RetrievalEvent,
    RewriteEvent,
    RoutingEvent,
    StageEvent,
    Suggestion,
    SuggestionsEvent,
    TokenEvent,
    TraceEvent,
    WaitEvent,
)
from ragapp.core.markers import draft_numbers
from ragapp.core.said import Said
from ragapp.core.serial import OMIT_DEFAULT, SKIP, Stored, dump
from ragapp.core.types import Chunk, Citation, RetrievedChunk


@dataclass
class StageStep(Stored):
    """A stage of the answer as the turn saw it: pending from its start until it finishes or fails.
    ``started_s``, ``ended_s``: seconds into the turn when it was said to start and end (``duration_s`` is the
    stage's own measure); ``wait``: the last word on its place in the model's queue while
    pending; ``routing``: a routing stage's decision."""

    stage: str
    status: Literal["started", "finished", "failed"] = "started"
    started_s: float = 0.0
    ended_s: float | None = None
    duration_s: float | None = None
    detail: dict[str, Any] = field(default_factory=dict)  # the start's detail, then the end's
    started_detail: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    said: Said | None = field(default=None, metadata=OMIT_DEFAULT)  # the error as a record (none before kept)
    wait: WaitEvent | None = None
    routing: RoutingEvent | None = None
    opened: bool = True  # False: the stage reported only its end

    @property
    def pending(self) -> bool:
        return self.status == "started"


# What a turn shows as its steps, in the order they came.
Step = StageStep | NoticeEvent | ModeEvent | AgentStepEvent | RecallEvent


@dataclass
class Turn(Stored):
    """The outcome of one question and the way to it. ``text`` is what the conversation remembers."""

    question: str = ""
    mode: str = ""
    mode_reason: str = ""
    trace_id: str = ""
    steps: list[Step] = field(default_factory=list)
    streamed: str = ""  # the answer's tokens as they came
    answer: AnswerEvent | None = None
    clarify: ClarifyEvent | None = None
    rewrite: RewriteEvent | None = None
    routing: list[RoutingEvent] = field(default_factory=list)  # one decision per (sub-)question
    evidence: EvidenceEvent | None = None
    retrieved: tuple[RetrievedChunk, ...] = ()  # what reached the prompt last
    context: list[Chunk] = field(default_factory=list)  # every chunk that reached a prompt, first time first
    degraded: list[str] = field(default_factory=list)
    memory: MemoryEvent | None = None
    cached: CachedEvent | None = None  # the answer was kept from an earlier request (when, and its trace)
    recalled: tuple[Recalled, ...] = ()  # the asker's memories that went into the prompt
    remembered: RememberedEvent | None = None  # "remember that ...": what was kept (or refused)
    proposal: ProposalEvent | None = None  # offered to remember after the answer
    suggestions: tuple[Suggestion, ...] = ()  # the next questions offered under the answer
    # seconds into the turn: the quoted evidence, the first token, the last event
    evidence_s: float | None = None
    first_token_s: float | None = None
    seconds: float = 0.0
    clock: Callable[[], float] = field(default=time.perf_counter, repr=False, compare=False, metadata=SKIP)
    started: float = field(default=0.0, repr=False, compare=False, metadata=SKIP)

    def __post_init__(self) -> None:
        self.started = self.clock()

    @classmethod
    def of(cls, events: Iterable[EngineEvent], **fields: Any) -> Turn:
        """The turn the ``events`` add up to (read to their end)."""
        turn = cls(**fields)
        for event in events:
            turn.apply(event)
        return turn

    # -- what it adds up to ---------------------------------------------------------------------------

    @property
    def text(self) -> str:
        """The answer as text: the checked one once it came, else what streamed so far (its markers numbered
        as the checked answer's will be: ``draft_numbers``)."""
        return self.answer.text if self.answer is not None else draft_numbers(self.streamed)

    @property
    def done(self) -> bool:
        return self.answer is not None

    @property
    def citations(self) -> tuple[Citation, ...]:
        return self.answer.citations if self.answer is not None else ()

    @property
    def notices(self) -> list[NoticeEvent]:
        return [s for s in self.steps if isinstance(s, NoticeEvent)]

    @property
    def stages(self) -> list[StageStep]:
        return [s for s in self.steps if isinstance(s, StageStep)]

    @property
    def agent_steps(self) -> list[AgentStepEvent]:
        """Each agent step as it stands now (as it ended, once it did)."""
        return [s for s in self.steps if isinstance(s, AgentStepEvent)]

    def failure(self, stage: str) -> str | None:
        """The error of the first failed ``stage`` (None: it did not fail)."""
        return next((s.error or "" for s in self.stages if s.stage == stage and s.status == "failed"), None)

    def pending(self) -> StageStep | None:
        """The latest stage still running."""
        return next((s for s in reversed(self.stages) if s.pending), None)

    # -- folding ----------------------------------------------------------------------------------------

    def now(self) -> float:
        return self.clock() - self.started

    def apply(self, event: EngineEvent) -> str:
        """Take the next event; returns the answer text it adds ("" for none)."""
        self.seconds = self.now()
        handler = _HANDLERS.get(type(event))
        if handler is not None:
            return handler(self, event) or ""
        return ""

    def _stage(self, e: StageEvent) -> None:
        if e.status == "started":
            detail = dump(e.detail)  # as JSON keeps it: a turn reads back from its stored form the same
            self.steps.append(StageStep(e.stage, "started", self.seconds, detail=detail, started_detail=detail))
            return
        step = next((s for s in reversed(self.stages) if s.stage == e.stage and s.pending), None)
        if step is None:  # a stage that reports only its end
            step = StageStep(e.stage, started_s=max(0.0, self.seconds - (e.duration_s or 0.0)), opened=False)
            self.steps.append(step)
        step.status, step.duration_s, step.error, step.said, step.wait = e.status, e.duration_s, e.error, e.said, None
        step.ended_s = self.seconds
        step.detail = dump(e.detail)

    def _wait(self, e: WaitEvent) -> None:
        step = self.pending()
        if step is not None:
            step.wait = e

    def _routing(self, e: RoutingEvent) -> None:
        """A routing decision goes to its routing stage (one per sub-question, in order)."""
        self.routing.append(e)
        routes = [s for s in self.stages if s.stage == "route"]
        if len(self.routing) <= len(routes):
            routes[len(self.routing) - 1].routing = e

    def _agent_step(self, e: AgentStepEvent) -> None:
        """One entry per step, replaced as it moves on; a step's end keeps its start's arguments and thought
        when it does not repeat them."""
        for i, step in enumerate(self.steps):
            if isinstance(step, AgentStepEvent) and step.step == e.step:
                arguments = e.arguments or step.arguments
                self.steps[i] = replace(e, arguments=arguments, thought=e.thought or step.thought)
                return
        self.steps.append(e)

    def _mode(self, e: ModeEvent) -> None:
        self.mode, self.mode_reason = e.mode, e.reason
        self.steps.append(e)

    def _retrieval(self, e: RetrievalEvent) -> None:
        self.retrieved = e.chunks
        have = {c.chunk_id for c in self.context}
        self.context.extend(r.chunk for r in e.chunks if r.chunk.chunk_id not in have)
        self.degraded.extend(d for d in e.degraded if d not in self.degraded)

    def _evidence(self, e: EvidenceEvent) -> None:
        self.evidence = e  # an early quote is replaced by the one the narrowed search found
        if self.evidence_s is None:
            self.evidence_s = self.seconds

    def _token(self, e: TokenEvent) -> str:
        if e.text and self.first_token_s is None:
            self.first_token_s = self.seconds
        self.streamed += e.text
        return e.text

    def _recall(self, e: RecallEvent) -> None:
        self.recalled = e.memories
        self.steps.append(e)

    def _trace(self, e: TraceEvent) -> None:
        self.trace_id = e.trace_id


@dataclass
class Exchange(Stored):
    """One question of a conversation and the turn that answered it, as the conversation keeps them: ``said``
    is the user's side as shown (the question typed, or the choice picked when the app asked back)."""

    said: str
    turn: Turn

    def cited_documents(self) -> set[str]:
        """The documents its answer cites or quotes."""
        cited = {c.chunk.doc_id for c in self.turn.citations}
        if self.turn.evidence is not None:
            cited.add(self.turn.evidence.citation.chunk.doc_id)
        return cited


def _keep(name: str) -> Callable[[Turn, Any], None]:
    def keep(turn: Turn, event: Any) -> None:
        setattr(turn, name, event)

    return keep


_HANDLERS: dict[type, Callable[[Turn, Any], str | None]] = {
    StageEvent: Turn._stage,
    WaitEvent: Turn._wait,
    RoutingEvent: Turn._routing,
    AgentStepEvent: Turn._agent_step,
    ModeEvent: Turn._mode,
    RetrievalEvent: Turn._retrieval,
    EvidenceEvent: Turn._evidence,
    EvidenceWithdrawnEvent: lambda turn, _e: setattr(turn, "evidence", None),
    TokenEvent: Turn._token,
    TraceEvent: Turn._trace,
    NoticeEvent: lambda turn, e: turn.steps.append(e),
    AnswerEvent: _keep("answer"),
    ClarifyEvent: _keep("clarify"),
    RewriteEvent: _keep("rewrite"),
    MemoryEvent: _keep("memory"),
    CachedEvent: _keep("cached"),
    RecallEvent: Turn._recall,
    RememberedEvent: _keep("remembered"),
    ProposalEvent: _keep("proposal"),
    SuggestionsEvent: lambda turn, e: setattr(turn, "suggestions", e.questions),
}
