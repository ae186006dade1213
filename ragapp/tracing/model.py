"""The trace of one request as typed records: the trace, its spans, and what each step saw and decided.

Where the engine already has a record for a part (the rewrite, a routing decision, a notice, an agent step, a
confidence check), the trace keeps that record itself; the records here are what only a trace keeps (spans, a
model call's number) or keeps cut short (citations without their passages' text). All are stored by the one
serialiser in ``ragapp.core.serial``: ``to_dict()`` gives the JSON the store keeps (and the Traces tab exports),
``from_dict()`` reads it back tolerantly, so rows written by older versions still open, and keys a trace does not
know are kept in ``Trace.extra``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

from ragapp.core.events import AgentStepEvent, ExperienceEvent, MemoryEvent, NoticeEvent, RewriteEvent
from ragapp.core.said import Said
from ragapp.core.serial import KEEP_UNKNOWN, OMIT_DEFAULT, Stored
from ragapp.core.types import ConfidenceCheck, LLMCall
from ragapp.tracing.records import ChunkRef, LeafRecord, RetrievalRecord

# -- spans -------------------------------------------------------------------------------------------


@dataclass
class Span(Stored):
    """A timed step, in seconds since the request started. Built open (``duration_s`` None, status "running")
    and closed later."""

    id: int
    parent: int | None
    name: str
    kind: str
    start_s: float
    duration_s: float | None = None
    status: str = ""
    error: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)


# -- routing, model calls and the answer --------------------------------------------------------------


@dataclass(frozen=True)
class RoutingRecord(Stored):
    """How one (sub-)question was routed: the action, the chosen leaves and every score (calibrated since the scores
    were: ``fit`` is the first leaf's), and the knowledge bases no leaf covers searched beside them (``also``)
    because ``fit`` was below ``fit_min``."""

    question: str
    action: str
    reason: str
    intents: list[LeafRecord]
    scores: list[LeafRecord]
    fit: float | None = field(default=None, metadata=OMIT_DEFAULT)
    also: list[str] = field(default_factory=list, metadata=OMIT_DEFAULT)
    fit_min: float | None = field(default=None, metadata=OMIT_DEFAULT)
    # ``reason`` as records (none in traces written before they were kept: their English is shown as it is)
    said: list[Said] = field(default_factory=list, metadata=OMIT_DEFAULT)


@dataclass(frozen=True)
class ClarifyRecord(Stored):
    ambiguous: str
    choices: list[LeafRecord]


# -- --------------------------------------------------------------------


@dataclass(frozen=True)
class LLMCallRecord(LLMCall, Stored):
    """A model call exactly as it went over the wire, numbered in the order of the request's calls."""

    index: int = 0

    @classmethod
    def of(cls, call: LLMCall, index: int) -> LLMCallRecord:
        return cls(**{f.name: getattr(call, f.name) for f in fields(call)}, index=index)

    @property
    def call(self) -> LLMCall:
        return self


@dataclass(frozen=True)
class CitationRecord(Stored):
    number: int
    source: str
    doc_id: str
    chunk_id: str


@dataclass(frozen=True)
class SupportRecord(Stored):
    """The support check of one answer sentence (see ``SentenceSupport``), without the evidence sentences."""

    text: str
    status: str
    cited: list[int]
    passages: list[int]
    facts: list[str]
    missing: list[str]
    overlap: float


@dataclass(frozen=True)
class EvidenceRecord(Stored):
    """The passage sentence quoted as evidence before the model answered: what it says and where it is (the
    passage's number in the prompt, its document and chunk)."""

    quote: str
    number: int
    source: str
    chunk_id: str


@dataclass(frozen=True)
class AnswerRecord(Stored):
    """The final answer. ``abstained``, ``support``, the confidence (``confidence``, its ``checks`` and
    ``probability``) and a "not sure" (``not_sure``, the withheld ``guess``) are stored only when set, as answers
    were before them."""

    text: str
    grounded: bool
    citations: list[CitationRecord]
    abstained: bool = field(default=False, metadata=OMIT_DEFAULT)
    support: list[SupportRecord] = field(default_factory=list, metadata=OMIT_DEFAULT)
    confidence: Literal["", "high", "medium", "low"] = field(default="", metadata=OMIT_DEFAULT)  # "": not assessed
    checks: list[ConfidenceCheck] = field(default_factory=list, metadata=OMIT_DEFAULT)
    probability: float | None = field(default=None, metadata=OMIT_DEFAULT)  # the calibrated P(right)
    not_sure: bool = field(default=False, metadata=OMIT_DEFAULT)  # withheld as not sure: ``guess`` is the answer
    guess: str = field(default="", metadata=OMIT_DEFAULT)


@dataclass(frozen=True)
class IngestFileRecord(Stored):
    """What an upload did with one file."""

    name: str
    status: str
    message: str
    chunks: int


# -- the trace ---------------------------------------------------------------------------------------


@dataclass
class Trace(Stored):
    """One request (a question or an upload): its spans, searches, model calls, agent steps and outcome.

    Built by ``TraceBuilder`` (under its lock), saved as ``to_dict()`` by the store, read back with ``from_dict``.
    The optional parts (clarify, memory, mode_reason, experience, ingest, recorder_error, evidence) are left out of the
    stored form until set, as traces have always been stored.
    """

    id: str
    owner: str
    kind: str
    started_at: str  # ISO 8601, UTC
    question: str
    mode: str
    total_s: float | None = None
    status: str = "ok"
    degradations: list[str] = field(default_factory=list)
    # Each degradation as records of the catalogue, by its English (none in traces written before they were kept)
    degradations_said: dict[str, list[Said]] = field(default_factory=dict, metadata=OMIT_DEFAULT)
    errors: list[str] = field(default_factory=list)
    notices: list[NoticeEvent] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    rewrite: RewriteEvent | None = None
    routing: list[RoutingRecord] = field(default_factory=list)
    retrievals: list[RetrievalRecord] = field(default_factory=list)
    llm_calls: list[LLMCallRecord] = field(default_factory=list)
    agent_steps: list[AgentStepEvent] = field(default_factory=list)  # each tool call as it ended
    context: list[ChunkRef] = field(default_factory=list)  # the chunks that reached the answer's prompt
    evidence: EvidenceRecord | None = field(default=None, metadata=OMIT_DEFAULT)  # the quote shown first
    answer: AnswerRecord | None = None
    clarify: ClarifyRecord | None = field(default=None, metadata=OMIT_DEFAULT)
    memory: MemoryEvent | None = field(default=None, metadata=OMIT_DEFAULT)
    mode_reason: str | None = field(default=None, metadata=OMIT_DEFAULT)
    experience: ExperienceEvent | None = field(default=None, metadata=OMIT_DEFAULT)  # procedural memory's evidence
    ingest: list[IngestFileRecord] | None = field(default=None, metadata=OMIT_DEFAULT)
    recorder_error: str | None = field(default=None, metadata=OMIT_DEFAULT)
    extra: dict[str, Any] = field(default_factory=dict, metadata=KEEP_UNKNOWN)  # keys this version does not know
