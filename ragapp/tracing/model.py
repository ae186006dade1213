"""The trace of one request as typed records: the trace, its spans, and what each step saw and decided.

Each record's ``to_dict()`` gives the JSON shape the store keeps (and the Traces tab exports); ``from_dict()``
reads it back tolerantly, so rows written by older versions (missing keys, odd values) still open: a missing
or unreadable value becomes empty, and keys a trace does not know are kept in ``Trace.extra``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragapp.core.types import LLMCall
from ragapp.tracing.reading import (
    AsDict,
    read_dict,
    read_int,
    read_list,
    read_map,
    read_maps,
    read_num,
    read_opt_int,
    read_opt_num,
    read_opt_str,
    read_str,
)
from ragapp.tracing.records import ChunkRef, LeafRecord, RetrievalRecord

# -- spans -------------------------------------------------------------------------------------------


@dataclass
class Span(AsDict):
    """A timed step, in seconds since the request started. Built open (``duration_s`` None) and closed later."""

    id: int
    parent: int | None
    name: str
    kind: str
    start_s: float
    duration_s: float | None = None
    status: str = "running"
    error: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Span:
        return cls(
            id=read_int(data, "id"),
            parent=read_opt_int(data, "parent"),
            name=read_str(data, "name"),
            kind=read_str(data, "kind"),
            start_s=read_num(data, "start_s"),
            duration_s=read_opt_num(data, "duration_s"),
            status=read_str(data, "status"),
            error=read_opt_str(data, "error"),
            attributes=read_dict(data, "attributes"),
        )


# -- routing, model calls, agent steps, the answer ----------------------------------------------------


def _leaves(data: Mapping[str, Any], key: str) -> list[LeafRecord]:
    return [LeafRecord.from_dict(s) for s in read_maps(data, key)]


@dataclass(frozen=True)
class RoutingRecord:
    """How one (sub-)question was routed: the action, the chosen leaves and every score."""

    question: str
    action: str
    reason: str
    intents: list[LeafRecord]
    scores: list[LeafRecord]

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "action": self.action,
            "reason": self.reason,
            "intents": [s.to_dict() for s in self.intents],
            "scores": [s.to_dict() for s in self.scores],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RoutingRecord:
        return cls(
            read_str(data, "question"),
            read_str(data, "action"),
            read_str(data, "reason"),
            _leaves(data, "intents"),
            _leaves(data, "scores"),
        )


@dataclass(frozen=True)
class ClarifyRecord:
    ambiguous: str
    choices: list[LeafRecord]

    def to_dict(self) -> dict[str, Any]:
        return {"ambiguous": self.ambiguous, "choices": [c.to_dict() for c in self.choices]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClarifyRecord:
        return cls(read_str(data, "ambiguous"), _leaves(data, "choices"))


@dataclass(frozen=True)
class RewriteRecord:
    original: str
    standalone: str
    sub_questions: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"original": self.original, "standalone": self.standalone, "sub_questions": list(self.sub_questions)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RewriteRecord:
        subs = [str(q) for q in read_list(data, "sub_questions")]
        return cls(read_str(data, "original"), read_str(data, "standalone"), subs)


@dataclass(frozen=True)
class Notice(AsDict):
    level: str
    message: str

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Notice:
        return cls(read_str(data, "level", "info"), read_str(data, "message"))


@dataclass(frozen=True)
class MemoryRecord(AsDict):
    folded: int
    summary: str

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MemoryRecord:
        return cls(read_int(data, "folded"), read_str(data, "summary"))


@dataclass(frozen=True)
class LLMCallRecord:
    """A model call exactly as it went over the wire, numbered in the order of the request's calls."""

    index: int
    call: LLMCall

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self.call) | {"index": self.index}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LLMCallRecord:
        call = LLMCall(
            model=read_str(data, "model"),
            messages=[dict(m) for m in read_maps(data, "messages")],
            completion=read_str(data, "completion"),
            prompt_tokens=read_int(data, "prompt_tokens"),
            completion_tokens=read_int(data, "completion_tokens"),
            seconds=read_num(data, "seconds"),
            json=bool(data.get("json")),
            tools=[str(t) for t in read_list(data, "tools")],
            tool_calls=[dict(c) for c in read_maps(data, "tool_calls")],
            error=read_opt_str(data, "error"),
            usage_reported=bool(data.get("usage_reported")),
        )
        return cls(read_int(data, "index"), call)


@dataclass(frozen=True)
class AgentStepRecord(AsDict):
    """One tool call the agent made, as it ended."""

    step: int
    tool: str
    arguments: dict[str, Any]
    thought: str
    status: str
    preview: str
    duration_s: float | None
    error: str | None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AgentStepRecord:
        return cls(
            step=read_int(data, "step"),
            tool=read_str(data, "tool"),
            arguments=read_dict(data, "arguments"),
            thought=read_str(data, "thought"),
            status=read_str(data, "status"),
            preview=read_str(data, "preview"),
            duration_s=read_opt_num(data, "duration_s"),
            error=read_opt_str(data, "error"),
        )


@dataclass(frozen=True)
class CitationRecord(AsDict):
    number: int
    source: str
    doc_id: str
    chunk_id: str

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CitationRecord:
        return cls(
            read_int(data, "number"), read_str(data, "source"), read_str(data, "doc_id"), read_str(data, "chunk_id")
        )


@dataclass(frozen=True)
class SupportRecord(AsDict):
    """The support check of one answer sentence (see ``SentenceSupport``)."""

    text: str
    status: str
    cited: list[int]
    passages: list[int]
    facts: list[str]
    missing: list[str]
    overlap: float

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SupportRecord:
        def ints(key: str) -> list[int]:
            return [int(n) for n in read_list(data, key) if isinstance(n, int) and not isinstance(n, bool)]

        return cls(
            read_str(data, "text"),
            read_str(data, "status"),
            ints("cited"),
            ints("passages"),
            [str(f) for f in read_list(data, "facts")],
            [str(f) for f in read_list(data, "missing")],
            read_num(data, "overlap"),
        )


@dataclass(frozen=True)
class EvidenceRecord(AsDict):
    """The passage sentence quoted as evidence before the model answered: what it says and where it is (the
    passage's number in the prompt, its document and chunk)."""

    quote: str
    number: int
    source: str
    chunk_id: str

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvidenceRecord:
        return cls(
            read_str(data, "quote"), read_int(data, "number"), read_str(data, "source"), read_str(data, "chunk_id")
        )


@dataclass(frozen=True)
class CheckRecord(AsDict):
    """One check behind an answer's confidence (see ``ConfidenceCheck``)."""

    check: str
    passed: bool
    detail: str

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckRecord:
        return cls(read_str(data, "check"), data.get("passed") is True, read_str(data, "detail"))


@dataclass(frozen=True)
class AnswerRecord:
    """The final answer. ``abstained``, ``support`` and the confidence (``confidence``, its ``checks``) are
    stored only when set, as answers were before them."""

    text: str
    grounded: bool
    citations: list[CitationRecord]
    abstained: bool = False
    support: list[SupportRecord] = field(default_factory=list)
    confidence: str = ""  # high, medium or low; "" when not assessed
    checks: list[CheckRecord] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "text": self.text,
            "grounded": self.grounded,
            "citations": [c.to_dict() for c in self.citations],
        }
        if self.abstained:
            out["abstained"] = True
        if self.support:
            out["support"] = [s.to_dict() for s in self.support]
        if self.confidence:
            out["confidence"] = self.confidence
            out["checks"] = [c.to_dict() for c in self.checks]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AnswerRecord:
        citations = [CitationRecord.from_dict(c) for c in read_maps(data, "citations")]
        support = [SupportRecord.from_dict(s) for s in read_maps(data, "support")]
        confidence = read_str(data, "confidence")
        return cls(
            read_str(data, "text"), bool(data.get("grounded")), citations, data.get("abstained") is True, support,
            confidence if confidence in ("high", "medium", "low") else "",
            [CheckRecord.from_dict(c) for c in read_maps(data, "checks")],
        )  # fmt: skip


@dataclass(frozen=True)
class IngestFileRecord(AsDict):
    """What an upload did with one file."""

    name: str
    status: str
    message: str
    chunks: int

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> IngestFileRecord:
        return cls(
            read_str(data, "name"), read_str(data, "status"), read_str(data, "message"), read_int(data, "chunks")
        )


# -- the trace ---------------------------------------------------------------------------------------

# Keys a trace always has; the optional ones (clarify, memory, mode_reason, ingest, recorder_error, evidence) are
# left out of ``to_dict`` until set, as traces have always been stored.
_OPTIONAL = ("clarify", "memory", "mode_reason", "ingest", "recorder_error", "evidence")


@dataclass
class Trace:
    """One request (a question or an upload): its spans, searches, model calls, agent steps and outcome.

    Built by ``TraceBuilder`` (under its lock), saved as ``to_dict()`` by the store, read back with ``from_dict``.
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
    errors: list[str] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    rewrite: RewriteRecord | None = None
    routing: list[RoutingRecord] = field(default_factory=list)
    retrievals: list[RetrievalRecord] = field(default_factory=list)
    llm_calls: list[LLMCallRecord] = field(default_factory=list)
    agent_steps: list[AgentStepRecord] = field(default_factory=list)
    context: list[ChunkRef] = field(default_factory=list)  # the chunks that reached the answer's prompt
    evidence: EvidenceRecord | None = None  # the quote shown before the answer
    answer: AnswerRecord | None = None
    clarify: ClarifyRecord | None = None
    memory: MemoryRecord | None = None
    mode_reason: str | None = None
    ingest: list[IngestFileRecord] | None = None
    recorder_error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # keys this version does not know, kept as they came

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "owner": self.owner,
            "kind": self.kind,
            "started_at": self.started_at,
            "question": self.question,
            "mode": self.mode,
            "total_s": self.total_s,
            "status": self.status,
            "degradations": list(self.degradations),
            "errors": list(self.errors),
            "notices": [n.to_dict() for n in self.notices],
            "spans": [s.to_dict() for s in self.spans],
            "rewrite": None if self.rewrite is None else self.rewrite.to_dict(),
            "routing": [r.to_dict() for r in self.routing],
            "retrievals": [r.to_dict() for r in self.retrievals],
            "llm_calls": [c.to_dict() for c in self.llm_calls],
            "agent_steps": [s.to_dict() for s in self.agent_steps],
            "context": [c.to_dict() for c in self.context],
            "answer": None if self.answer is None else self.answer.to_dict(),
        }
        optional = {
            "clarify": None if self.clarify is None else self.clarify.to_dict(),
            "memory": None if self.memory is None else self.memory.to_dict(),
            "mode_reason": self.mode_reason,
            "ingest": None if self.ingest is None else [r.to_dict() for r in self.ingest],
            "recorder_error": self.recorder_error,
            "evidence": None if self.evidence is None else self.evidence.to_dict(),
        }
        out.update((k, v) for k, v in optional.items() if v is not None)
        return {**self.extra, **out}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Trace:
        rewrite, answer = read_map(data, "rewrite"), read_map(data, "answer")
        clarify, memory = read_map(data, "clarify"), read_map(data, "memory")
        evidence = read_map(data, "evidence")
        ingest = data.get("ingest") if isinstance(data.get("ingest"), list) else None
        known = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        return cls(
            id=str(data.get("id") or ""),
            owner=read_str(data, "owner"),
            kind=read_str(data, "kind"),
            started_at=read_str(data, "started_at"),
            question=read_str(data, "question"),
            mode=read_str(data, "mode"),
            total_s=read_opt_num(data, "total_s"),
            status=read_str(data, "status"),
            degradations=[str(d) for d in read_list(data, "degradations")],
            errors=[str(e) for e in read_list(data, "errors")],
            notices=[Notice.from_dict(n) for n in read_maps(data, "notices")],
            spans=[Span.from_dict(s) for s in read_maps(data, "spans")],
            rewrite=None if rewrite is None else RewriteRecord.from_dict(rewrite),
            routing=[RoutingRecord.from_dict(r) for r in read_maps(data, "routing")],
            retrievals=[RetrievalRecord.from_dict(r) for r in read_maps(data, "retrievals")],
            llm_calls=[LLMCallRecord.from_dict(c) for c in read_maps(data, "llm_calls")],
            agent_steps=[AgentStepRecord.from_dict(s) for s in read_maps(data, "agent_steps")],
            context=[ChunkRef.from_dict(c) for c in read_maps(data, "context")],
            evidence=None if evidence is None else EvidenceRecord.from_dict(evidence),
            answer=None if answer is None else AnswerRecord.from_dict(answer),
            clarify=None if clarify is None else ClarifyRecord.from_dict(clarify),
            memory=None if memory is None else MemoryRecord.from_dict(memory),
            mode_reason=read_opt_str(data, "mode_reason"),
            ingest=None
            if ingest is None
            else [IngestFileRecord.from_dict(r) for r in ingest if isinstance(r, Mapping)],
            recorder_error=read_opt_str(data, "recorder_error"),
            extra={k: v for k, v in data.items() if k not in known},
        )
