"""The one family of events the engine emits. The chat, the logs and (later) the Traces tab all read these.

The engine never formats for a UI: it yields these records and the UI decides how they look.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ragapp.core.said import english_of
from ragapp.core.serial import OMIT_DEFAULT
from ragapp.core.types import Citation, Confidence, LeafScore, RetrievedChunk, Said, SentenceSupport


@dataclass(frozen=True)
class StageEvent:
    """A stage (rewrite, a channel, fusion, rerank, an LLM call) started, finished or failed."""

    stage: str
    status: Literal["started", "finished", "failed"]
    duration_s: float | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    error: str | None = None  # in English (the trace, logs)
    said: Said | None = None  # the error as a record, where the page has words for it


@dataclass(frozen=True)
class Widened:
    """A routed search was weak, so the knowledge bases no intent leaf covers were searched beside its leaves'."""

    added: tuple[str, ...]  # the knowledge bases searched beside the leaves'
    best: float | None  # the best rerank score the leaves' own search kept
    below: float  # what counts as weak: no passage scored this high (``widen_below_score``)


@dataclass(frozen=True)
class NoticeEvent:
    """Something the user should know: a degraded channel, reranking off, a fallback taken. ``message`` is the
    engine's English (logs, API); a notice with a typed record (``widened``) is said from that record."""

    message: str
    level: Literal["info", "warning"] = "info"
    widened: Widened | None = field(default=None, metadata=OMIT_DEFAULT)
    said: tuple[Said, ...] = field(default=(), metadata=OMIT_DEFAULT)  # ``message`` as records, for a page

    @classmethod
    def worded(cls, *said: Said, level: Literal["info", "warning"] = "info") -> NoticeEvent:
        """A notice said by records of the catalogue (its English as ``message``)."""
        return cls(english_of(said), level, said=said)


@dataclass(frozen=True)
class RetrievalEvent:
    """The chunks that reached the prompt, with the channel ranks that brought them."""

    chunks: tuple[RetrievedChunk, ...]
    degraded: tuple[str, ...] = ()


@dataclass(frozen=True)
class TokenEvent:
    """A piece of the streamed answer."""

    text: str


@dataclass(frozen=True)
class CheckedTextEvent:
    """The checked answer's beginning, known while the model still writes: the answer's text (its
    ``AnswerEvent``) will start with ``text``. Sent sentence by sentence (``qa.checked_draft``) for a stream that
    must never take a word back (the HTTP API's); each one holds all of the text so far."""

    text: str


@dataclass(frozen=True)
class WaitEvent:
    """Before the answer's first token: ``ahead`` answers are before this one in the model's queue (0: the
    model is reading this one's prompt), ``seconds`` since the model was asked. Sent when that changes and
    about once a second, so the wait is never a frozen spinner."""

    ahead: int
    seconds: float


@dataclass(frozen=True)
class EvidenceEvent:
    """The passage sentence(s) that best answer the question, shown as soon as the passages are chosen, before
    the model has read them: quoted from the document, ``citation`` says where (its highlights are the quote)."""

    quote: str
    citation: Citation
    # True: from the general search that runs while routing's model call decides (the user's whole scope);
    # a later EvidenceEvent replaces it, an EvidenceWithdrawnEvent takes it back
    early: bool = False


@dataclass(frozen=True)
class EvidenceWithdrawnEvent:
    """The early quote no longer stands: routing asked back, answered directly, or narrowed the scope to
    passages that hold no quote. The UI and API drop the quote shown."""

    reason: str


@dataclass(frozen=True)
class AnswerEvent:
    """The finished answer, which replaces the streamed tokens; ``grounded`` is False when nothing relevant was
    found or the answer was refused. ``abstained``: the app (or the model) said the documents do not hold the
    answer; ``support`` is the per-sentence check of the model's answer (empty when it was not checked).
    ``not_sure``: the app found no sentence that answers, or its answer was likely wrong, and withheld it: the
    reader gets the passage most likely to hold the answer (the first citation) and may ask for the ``guess``."""

    text: str
    citations: tuple[Citation, ...]
    grounded: bool
    abstained: bool = False
    support: tuple[SentenceSupport, ...] = ()
    confidence: Confidence | None = None  # None: not assessed (a refusal, the passages alone, checks off)
    not_sure: bool = False  # too unsure to state: ``text`` says so, ``citations`` start with the likeliest passage
    guess: str = ""  # the answer withheld as not sure (its markers numbered as ``citations``); "" for none


@dataclass(frozen=True)
class RewriteEvent:
    """The question as searched: rewritten to stand alone (using the conversation) and split into parts."""

    original: str
    standalone: str
    sub_questions: tuple[str, ...]


@dataclass(frozen=True)
class RoutingEvent:
    """How one (sub-)question was routed through the intent tree, and why."""

    question: str
    action: Literal["route", "clarify", "system", "fallback"]
    intents: tuple[LeafScore, ...]
    reason: str
    scores: tuple[LeafScore, ...] = ()  # every leaf the classifier scored, best first, with its calibrated score
    # How well the leaf named first fits (its calibrated score: the probability that it is right); None: unknown.
    fit: float | None = field(default=None, metadata=OMIT_DEFAULT)
    # Knowledge bases no intent leaf covers, searched beside the leaves' because ``fit`` < ``fit_min``.
    also: tuple[str, ...] = field(default=(), metadata=OMIT_DEFAULT)
    fit_min: float | None = field(default=None, metadata=OMIT_DEFAULT)
    # ``reason`` as records of the catalogue (``ragapp.core.said``), for a page to word in its language.
    said: tuple[Said, ...] = field(default=(), metadata=OMIT_DEFAULT)


@dataclass(frozen=True)
class ClarifyEvent:
    """The app asks back instead of guessing; the turn ends here. Answering means calling ``ask`` again
    with ``clarified=Clarified(sub_questions, choice)``."""

    question: str  # the standalone question
    sub_questions: tuple[str, ...]
    ambiguous: str  # the sub-question that was ambiguous
    choices: tuple[LeafScore, ...]


@dataclass(frozen=True)
class MemoryEvent:
    """Older turns were folded into ``summary``: the caller keeps the summary and drops the ``folded``
    oldest turns of its history."""

    summary: str
    folded: int


@dataclass(frozen=True)
class Recalled:
    """One of the user's memories, as recalled for a question (``similarity``: the embedder's cosine)."""

    id: str
    text: str
    similarity: float = 0.0
    created_at: str = ""


@dataclass(frozen=True)
class RecallEvent:
    """The asker's own memories recalled for this question: they go into a separate part of the prompt,
    labelled as what the user said before; never numbered passages, never cited (``ragapp.engine.memories``)."""

    memories: tuple[Recalled, ...]


@dataclass(frozen=True)
class RememberedEvent:
    """The user asked to remember ``text`` ("remember that ..."), or accepted the offer: kept as
    ``memory_id``, with the sentences screening ``cut`` out of it; ``memory_id`` "" when refused (``reason``)."""

    text: str
    memory_id: str = ""
    cut: tuple[str, ...] = ()
    reason: str = ""  # in English (logs, the API)
    said: Said | None = None  # the reason as a record, for the page's language


@dataclass(frozen=True)
class ProposalEvent:
    """After the answer: ``text`` (from the user's own message) may be worth remembering; kept only when the
    user accepts (``Memories.add``)."""

    text: str


@dataclass(frozen=True)
class Suggestion:
    """A next question the knowledge base can answer: ``text``, made from the heading of the section
    ``chunk_id`` begins (``ragapp.qa.suggest``)."""

    text: str
    chunk_id: str


@dataclass(frozen=True)
class SuggestionsEvent:
    """After the answer: the next questions to offer (never under a refusal or a question back)."""

    questions: tuple[Suggestion, ...]


@dataclass(frozen=True)
class ModeEvent:
    """Which way the question is answered (workflow or agent), and why (Auto mode decides per question)."""

    mode: Literal["workflow", "agent"]
    reason: str


# The agent step that picks a group of tools (``ragapp.agent.groups``) rather than calling one.
CHOOSE_GROUP = "choose_group"


@dataclass(frozen=True)
class AgentStepEvent:
    """One agent step: started (the model chose a tool), then finished or failed (bad arguments, unknown tool,
    a repeated call, a timeout, a tool error), with a preview of what the tool returned. With many tools, a step
    may instead choose a group of them (``tool`` is ``CHOOSE_GROUP``, the group in ``arguments["group"]``)."""

    step: int
    status: Literal["started", "finished", "failed"]
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    thought: str = ""
    preview: str = ""
    duration_s: float | None = None
    error: str | None = None


@dataclass(frozen=True)
class CachedEvent:
    """The answer that follows was kept from an earlier request (``ragapp.engine.answer_cache``): the same
    question over the same documents was answered at ``answered_at`` (ISO time, UTC), in trace ``trace_id`` ("":
    not traced). Asking again with ``fresh=True`` ("Answer again") runs the whole pipeline instead."""

    answered_at: str
    trace_id: str = ""
    question: str = ""  # for an answer kept for another wording of the question (a paraphrase): that wording
    similarity: float | None = None  # and how alike the embedder found the two


@dataclass(frozen=True)
class Tally:
    """How answers done one way (a mode, or an agent tool) fared: ``kept`` of ``answers`` (👍, or no re-ask)."""

    name: str
    kept: int
    answers: int


@dataclass(frozen=True)
class ExperienceEvent:
    """What procedural memory knew about questions of this ``kind`` (Auto's classes) and what it changed: the
    ``mode`` Auto took because of it ("": the rule's own, or not Auto), the tools it listed first for the agent
    (``tool_order``), and the evidence (``modes``, ``tools``) behind both. ``reason`` is shown with the mode."""

    kind: str
    modes: tuple[Tally, ...] = ()
    tools: tuple[Tally, ...] = ()
    mode: str = ""
    reason: str = ""
    tool_order: tuple[str, ...] = ()


@dataclass(frozen=True)
class TraceEvent:
    """The id of the trace this request leaves (first, when tracing is on): what feedback on the answer and a
    restored conversation point at."""

    trace_id: str


EngineEvent = (
    StageEvent
    | NoticeEvent
    | RetrievalEvent
    | TokenEvent
    | CheckedTextEvent
    | EvidenceEvent
    | EvidenceWithdrawnEvent
    | WaitEvent
    | AnswerEvent
    | RewriteEvent
    | RoutingEvent
    | ClarifyEvent
    | MemoryEvent
    | ModeEvent
    | AgentStepEvent
    | TraceEvent
    | CachedEvent
    | RecallEvent
    | RememberedEvent
    | ProposalEvent
    | ExperienceEvent
    | SuggestionsEvent
)
