"""Frozen records passed between stages. No behaviour beyond small derived properties."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ragapp.core.said import Said as Said  # where the engine's records have always found it
from ragapp.core.said import english_of
from ragapp.core.serial import OMIT_DEFAULT, SKIP, Stored

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCall:
    """A model's request to run a tool. ``id`` pairs it with its result in native function calling."""

    name: str
    arguments: dict[str, Any]
    id: str = ""


@dataclass(frozen=True)
class ChatTurn:
    role: Role
    content: str
    # Native function calling: an assistant turn's calls, and on a "tool" turn the call it answers.
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None


@dataclass(frozen=True)
class Figure:
    """A figure of a page (an embedded image or drawing, ``ragapp.ingest.parsers.pdf_figures``): where it is, as
    fractions of the page's width and height from its top left (like ``OcrBox``), and its caption ("" if none)."""

    x0: float
    y0: float
    x1: float
    y1: float
    caption: str = ""
    # The picture's file inside the document's zip ("word/media/image1.png", "OEBPS/images/plot.png"): a Word
    # file's or an EPUB's figure has no page to crop it from, so it is found again by its name ("" for others).
    part: str = ""


@dataclass(frozen=True)
class Section:
    """A run of text from a parsed file, with where it came from."""

    text: str
    page: int | None = None
    heading: str | None = None
    ocr_confidence: float | None = None  # read by OCR (from a scan or an image), with its mean confidence 0..1
    has_table: bool = False  # holds a table, as Markdown (``ragapp.ingest.tables``)
    figure: Figure | None = None  # a figure's passage: its caption, the words in it and around it; one chunk


COVERAGE_WARN_BELOW = 0.95  # an upload with less of its text indexed says so, naming what was not


@dataclass(frozen=True)
class ParseReport(Stored):
    """How well a file read: for the Knowledge tab's parse-quality line and the document view. Stored with the
    document (``to_dict``/``from_dict``)."""

    pages_with_text: int | None = None  # pages (slides, sheets) that gave text, from their text layer or OCR
    ocr_pages: tuple[int, ...] = ()  # pages read by OCR
    empty_pages: tuple[int, ...] = ()  # pages that gave no text at all (blank, or a scan left unread)
    tables: int = 0  # tables found and kept as tables
    figures: int = field(default=0, metadata=OMIT_DEFAULT)  # figures kept as passages of their own
    ocr_confidence: float | None = None  # mean over the OCR'd pages
    left_out: tuple[str, ...] = ()  # what the parser left out on purpose, by rule, in English: "navigation (3 blocks)"
    # The same as records of the catalogue, in the same order (none in reports stored before they were kept).
    left_out_said: tuple[Said, ...] = field(default=(), metadata=OMIT_DEFAULT)
    coverage: float | None = None  # share of the file's own text that reached the index (ragapp.ingest.coverage)
    unread: tuple[str, ...] = ()  # the first passages of its text that did not
    unread_count: int = 0

    def leaving_out(self, *said: Said) -> ParseReport:
        """This report with ``said`` added to what the parser left out (in English and as records)."""
        english = (*self.left_out, *(s.english for s in said))
        return replace(self, left_out=english, left_out_said=(*self.left_out_said, *said))

    def coverage_warning(self) -> str:
        """'⚠️ only 82% of its text was indexed; not read: “We often get …” and 11 more passages' when the
        coverage is under ``COVERAGE_WARN_BELOW``, else ""."""
        said = self.coverage_said()
        return "" if said is None else said.english

    def coverage_said(self) -> Said | None:
        """The coverage warning as a record of the catalogue, or None when the coverage is high enough."""
        if self.coverage is None or self.coverage >= COVERAGE_WARN_BELOW:
            return None
        values: dict[str, Any] = {"share": self.coverage}
        if not self.unread:
            return Said("note.coverage_low", values)
        values["unread"] = ", ".join(f"“{line}”" for line in self.unread)
        more = self.unread_count - len(self.unread)
        if more <= 0:
            return Said("note.coverage_low_unread", values)
        code = "note.coverage_low_unread_more_one" if more == 1 else "note.coverage_low_unread_more"
        return Said(code, {**values, "more": more})


@dataclass(frozen=True)
class OcrBox:
    """Where OCR read a line of a page, as fractions of the page's width and height (to highlight it later)."""

    page: int
    text: str
    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True)
class ParsedDocument:
    name: str
    file_type: str
    sections: tuple[Section, ...]
    pages: int | None = None
    report: ParseReport = ParseReport()
    ocr_boxes: tuple[OcrBox, ...] = ()


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    doc_id: str
    ordinal: int
    text: str
    source: str
    page: int | None = None
    heading: str | None = None
    ocr_confidence: float | None = None  # the section was read by OCR, with this mean confidence (0..1)
    has_table: bool = False  # the text holds (part of) a Markdown table
    figure: Figure | None = field(default=None, metadata=OMIT_DEFAULT)  # the chunk is this figure's passage

    @property
    def location(self) -> str:
        """Human-readable place in the source: 'p. 3 · Warranty', and for a figure '🖼 Figure 2: …' after it."""
        parts = []
        if self.page is not None:
            parts.append(f"p. {self.page}")
        if self.heading:
            parts.append(self.heading)
        if self.figure is not None:  # a picture, not words: no language of its own (the caption is the file's)
            parts.append(f"🖼 {self.figure.caption}".strip())
        return " · ".join(parts)

    @property
    def figure_drawn(self) -> bool:
        """Whether the chunk is a figure whose picture can be found again: on its page (a PDF's, a slide's), or by
        its file inside the document (a Word file's, an EPUB's). A Word figure indexed before its picture's name
        was kept has neither: it is shown as its words."""
        return self.figure is not None and (self.page is not None or bool(self.figure.part))


@dataclass(frozen=True)
class DocumentRecord:
    doc_id: str
    name: str
    file_type: str
    content_hash: str
    size_bytes: int
    pages: int | None
    chunk_count: int
    added_at: str
    kb: str = "default"  # last, so positional construction from older code keeps working


@dataclass(frozen=True)
class SkippedSection:
    """A page (or section) of a document kept out of retrieval as boilerplate, and why."""

    doc_id: str
    ordinal: int  # the section's place in the parsed document, from 0
    page: int | None
    heading: str | None
    reason: str  # "table of contents", "index", "licence text (GNU FDL)"
    preview: str  # the start of its text, to recognise it by

    @property
    def location(self) -> str:
        """'p. 3', the heading, or 'section 4' when the file has neither."""
        if self.page is not None:
            return f"p. {self.page}"
        return self.heading or f"section {self.ordinal + 1}"


# Where documents go when no knowledge base is named (and where documents from before knowledge bases live).
DEFAULT_KB = "default"


@dataclass(frozen=True)
class KnowledgeBase:
    """A named knowledge base and what it holds."""

    name: str
    documents: int
    chunks: int


# The knowledge bases a question searches: a set of names, or None for all of them.
Scope = frozenset[str] | None

# The documents a question may draw on, by id, after its ``DocumentFilter`` (None: no filter, every document of
# its scope). An empty set finds nothing: a filter that matches no document never means "search everything".
Docs = frozenset[str] | None


@dataclass(frozen=True)
class FileOrigin:
    """Where a file came from, for ``Ingestor.ingest_files``: ``source`` names it ("upload", or a synced folder,
    repository or website), ``path`` is the file's path within that source ("/" separated, e.g.
    "policies/2024/leave.pdf"; a web page's URL), ``modified_at`` when it last changed there (ISO 8601; None:
    unknown), ``file_type`` what its content is when its name does not say (a web page's extension from its
    Content-Type, e.g. "html"; None: by the name's extension)."""

    source: str
    path: str
    modified_at: str | None = None
    file_type: str | None = None


# The name of a retrieval channel that searches another ragapp begins so: "remote:hr".
REMOTE_PREFIX = "remote:"


@dataclass(frozen=True)
class ChannelHit:
    """One channel's opinion of one chunk: its 1-based rank and raw score. ``group`` names hits whose scores
    are only comparable among themselves (the vector channel's languages); score fusion normalises each
    group on its own."""

    chunk_id: str
    rank: int
    score: float
    group: str | None = None
    chunk: Chunk | None = None  # the passage itself, from a channel outside the catalog (another ragapp)
    via: str | None = None  # the written question through which the channel found the chunk (None: its own text)


@dataclass(frozen=True)
class FusedCandidate:
    """A chunk after fusion. Keeps every channel's rank and score for the trace."""

    chunk_id: str
    fused_score: float
    channel_ranks: dict[str, int] = field(default_factory=dict)
    channel_scores: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class RetrievedChunk:
    """A candidate joined with its chunk text, after reranking."""

    chunk: Chunk
    fused_score: float
    channel_ranks: dict[str, int]
    channel_scores: dict[str, float]
    rerank_score: float | None = None


@dataclass(frozen=True)
class Citation:
    number: int
    chunk: Chunk
    score: float | None = None
    highlights: tuple[str, ...] = ()  # the passage's sentences that support the answer (shown highlighted)


# How one answer sentence stands against the passages: its key facts are all in the passage(s) it now cites
# (supported), not (unsupported), or it states no key fact and is not checked (neutral).
SupportStatus = Literal["supported", "unsupported", "neutral"]


@dataclass(frozen=True)
class SentenceSupport:
    """The support check of one answer sentence. ``text`` is the sentence as it stands in the final answer (its
    [n] markers fixed); the sentences joined give the answer's text unless the answer abstained."""

    text: str
    status: SupportStatus
    cited: tuple[int, ...] = ()  # the passage numbers the model wrote
    passages: tuple[int, ...] = ()  # the passages that support it: its markers now
    facts: tuple[str, ...] = ()  # its key facts, normalised
    missing: tuple[str, ...] = ()  # key facts found in no passage
    overlap: float = 0.0  # share of its content words in the supporting (else the closest) passage(s)
    evidence: tuple[str, ...] = ()  # per supporting passage, the sentence in it that supports this one

    @property
    def supported(self) -> bool:
        return self.status == "supported"


ConfidenceLevel = Literal["high", "medium", "low"]


@dataclass(frozen=True)
class ConfidenceCheck:
    """One reason behind an answer's confidence: a check (``supported``, ``fits``, ``agrees``, ``on_topic``),
    whether the answer passed it, and what it saw, in a few words."""

    check: str
    passed: bool
    detail: str = ""  # in English: what the HTTP API, the exported chat and older traces give
    said: tuple[Said, ...] = field(default=(), metadata=OMIT_DEFAULT)  # ``detail`` as records, for a page

    @classmethod
    def worded(cls, check: str, passed: bool, *said: Said) -> ConfidenceCheck:
        """A check whose detail is said by records of the catalogue, worded part after part."""
        return cls(check, passed, english_of(said), said)


@dataclass(frozen=True)
class Confidence:
    """How sure the app is of an answer (see ``ragapp.qa.confidence``): high, medium or low (said as "not sure",
    the answer withheld), with its reasons, and the probability and signals the level comes from."""

    level: ConfidenceLevel
    checks: tuple[ConfidenceCheck, ...] = ()
    # P(right) as the calibrator gives it (None: not calibrated), and what it read (``ragapp.qa.confidence``)
    probability: float | None = field(default=None, metadata=OMIT_DEFAULT)
    signals: tuple[tuple[str, float], ...] = field(default=(), compare=False, metadata=SKIP)  # not stored

    @property
    def failed(self) -> tuple[ConfidenceCheck, ...]:
        return tuple(c for c in self.checks if not c.passed)


@dataclass(frozen=True)
class LeafScore:
    """An intent-tree leaf with the model's relevance score for a question (0-1, not a calibrated probability)."""

    code: str
    path: str
    kind: Literal["KB", "SYSTEM"]
    parent: str | None
    score: float

    @property
    def label(self) -> str:
        """The leaf with its parent, e.g. 'Lumen V1 · 流明 V1 › Specs and battery · 规格与续航'."""
        return " › ".join(self.path.split(" > ")[-2:])


@dataclass(frozen=True)
class IngestResult:
    """What happened to one uploaded file."""

    name: str
    status: Literal["added", "replaced", "duplicate", "failed", "cancelled"]
    message: str
    doc_id: str | None = None
    chunks: int = 0
    kb: str = ""  # where it went (added, replaced)
    notes: tuple[Said, ...] = ()  # what else the message says: parts left out, a coverage warning
    said: Said | None = None  # the message as a code and values, where the UI has words for it


# The phases of ingesting one file, in order; "index" (the keyword index update) runs once for the whole batch.
# parse: reading the text (pages counted in a PDF); figures: a PDF's pages searched for figures; tables: searched
# for tables; ocr: scanned pages (and figures' words) read by OCR; chunk: cut into chunks; embed: chunks embedded
# (counted); store: written to the stores; index: the keyword index rebuilt, once for the whole batch.
IngestPhase = Literal["parse", "figures", "tables", "ocr", "chunk", "embed", "store", "index"]


@dataclass(frozen=True)
class IngestProgress:
    """How far an upload has got: the file (None: the whole batch), its phase, the fraction of the whole batch
    done (0..1), items done of total where counted (pages read, chunks embedded), what is happening in words (for
    logs and traces: a page renders the phase and the counts), and the file's place in the batch (``index`` of
    ``count``, from 0)."""

    file: str | None
    phase: IngestPhase
    fraction: float
    message: str  # e.g. "parsing", "embedded 32/90 chunks"
    done: int | None = None
    total: int | None = None
    index: int = 0
    count: int = 1

    @property
    def text(self) -> str:
        """The line a user sees: 'report.pdf: embedded 32/90 chunks'."""
        return f"{self.file}: {self.message}" if self.file else self.message


@dataclass(frozen=True)
class ChannelResult:
    channel: str
    hits: tuple[ChannelHit, ...]
    duration_s: float
    stages: dict[str, float] = field(default_factory=dict)  # seconds per inner step, e.g. query embedding


@dataclass(frozen=True)
class RelevanceDecision:
    """Whether a candidate may reach the prompt, the rule that said so in words, and the score that rule read
    (a rerank score, or a vector similarity for a passage the reranker did not judge). See
    ``ragapp.retrieval.relevance``."""

    kept: bool
    said: Said
    score: float

    @property
    def reason(self) -> str:
        """The rule in English ("rerank score ≥ 0.2"), as logs and the HTTP API give it."""
        return self.said.english


@dataclass(frozen=True)
class RetrievalResult:
    """Everything a trace needs to explain the chunks that were chosen."""

    query: str
    chunks: tuple[RetrievedChunk, ...]  # what reaches the prompt
    candidates: tuple[RetrievedChunk, ...]  # fused (and reranked) before the relevance gate
    channel_results: tuple[ChannelResult, ...]
    degraded: tuple[str, ...] = ()
    # Each of ``degraded`` as records of the catalogue, by its English (one said otherwise has none).
    degraded_said: dict[str, tuple[Said, ...]] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)  # every knob this request ran with
    kbs: tuple[str, ...] | None = None  # the scope searched; None: all knowledge bases
    cached: bool = False
    filtered: int | None = None  # how many documents a document filter let the channels search; None: no filter
    # chunk id -> channel -> what that channel added to its fused score (see ``fusion.contributions``)
    contributions: dict[str, dict[str, float]] = field(default_factory=dict)
    # chunk id -> the relevance gate's decision on that candidate (see ``ragapp.retrieval.relevance``)
    decisions: dict[str, RelevanceDecision] = field(default_factory=dict)


@dataclass(frozen=True)
class LLMCall:
    """One model call as it went over the wire: the exact messages and what came back."""

    model: str
    messages: list[dict[str, Any]]
    completion: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    json: bool = False
    tools: list[str] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    usage_reported: bool = False  # True: counts from the backend; False: estimated from the text
    # With scores (the local model): each piece's own log-probability where it is one top token, as the answer
    # writer reads them (the calibrator's ``logprob_*`` signals: kept so a replay reads what the run read)
    logprobs: list[float] = field(default_factory=list, metadata=OMIT_DEFAULT)


# How a question is answered: the workflow, the agent (tool calls, step by step) or auto (chosen per question).
Mode = Literal["workflow", "agent", "auto"]

# Whose traces and test cases, when the caller names nobody (scripts, the CLI).
LOCAL_OWNER = "local"
