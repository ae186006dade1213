"""The API's request and reply bodies (they make the OpenAPI page). Chat follows OpenAI's shapes; what ragapp
adds is named as an extension in each field's description."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragapp.core.filters import MAX_TAGS, DocumentFilter, TagError, clean_tags

FILTER_DOC = (
    "Search only the documents this admits (every field optional; all set fields must hold): tags (any of), "
    "source, path_prefix, path_glob, file_types, author and title (contain, ignoring case), modified_after/before "
    "and added_after/before (ISO dates). A filter no document matches finds nothing, and says so."
)

# -- chat --------------------------------------------------------------------------------------


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = None


class MessageIn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = None

    def text(self) -> str:
        """The message's text (the text parts of a list, joined; images and other parts are not read)."""
        if isinstance(self.content, list):
            return "\n".join(p.text for p in self.content if p.type == "text" and p.text)
        return self.content or ""


class ChatCompletionRequest(BaseModel):
    # OpenAI clients send more (temperature, max_tokens, user, stream_options, ...): accepted and ignored, the
    # app's own settings decide.
    model_config = ConfigDict(extra="ignore")
    model: str = Field("ragapp-workflow", description="ragapp-workflow, ragapp-agent or ragapp-auto (GET /v1/models).")
    messages: list[MessageIn] = Field(
        min_length=1,
        description="The conversation. The last message is the question (role user); the user and assistant turns "
        "before it are the history (the last RAGAPP_WORKFLOW__RECENT_TURNS turns are read). System messages are "
        "ignored: the app has its own instructions.",
    )
    stream: bool = Field(False, description="Server-sent events in OpenAI's chunk format, ending `data: [DONE]`.")
    kbs: list[str] | None = Field(
        None, description="Extension: the knowledge bases to search (GET /v1/knowledge-bases); none: all you may read."
    )
    filter: DocumentFilter | None = Field(None, description="Extension. " + FILTER_DOC)
    fresh: bool = Field(
        False,
        description='Extension: answer anew, past the answer cache (the chat\'s "Answer again"); the new answer '
        "replaces the kept one.",
    )


class CitationOut(BaseModel):
    number: int = Field(description="The n of the answer's [n] marker.")
    document: str
    doc_id: str
    chunk_id: str
    location: str = Field(description="Page and section, e.g. 'p. 3 · Warranty' ('' when the file has neither).")
    page: int | None
    heading: str | None
    text: str = Field(description="The cited chunk's whole text.")
    score: float | None
    highlights: list[str] = Field(description="The chunk's sentences that support the answer.")
    ocr_confidence: float | None = Field(
        None, description="Read from a scan by OCR, with this mean confidence (0..1); null for a text layer."
    )
    figure_url: str | None = Field(
        None,
        description="A figure's passage: where its picture is served, cropped from its page (a slide's, a Word "
        "file's or a book's picture as embedded) (GET, same key).",
    )
    caption: str | None = Field(None, description="A figure's passage: its caption ('' when it has none).")


class ChoiceOut(BaseModel):
    number: int = Field(description="What to reply to pick it (0: none of these, search everything).")
    code: str
    label: str
    score: float | None = None


class ClarificationOut(BaseModel):
    question: str
    ambiguous: str
    choices: list[ChoiceOut]


class CheckOut(BaseModel):
    check: str = Field(description="supported, fits, agrees, on_topic or parts (see the docs' Confidence section).")
    passed: bool
    detail: str


class ConfidenceOut(BaseModel):
    level: Literal["high", "medium", "low"] = Field(
        description="low: not sure, the answer withheld (`ragapp.answered` false) unless not-sure is off."
    )
    checks: list[CheckOut] = Field(description="The checks behind the level, each passed or not.")
    probability: float | None = Field(
        None, description="The calibrated probability that the answer is right (null: not calibrated)."
    )


class AssistantMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str
    citations: list[CitationOut] = Field(default_factory=list, description="Extension: the answer's sources.")
    confidence: ConfidenceOut | None = Field(
        None, description="Extension: how sure the app is of the answer, and why; absent for a refusal."
    )
    clarification: ClarificationOut | None = Field(
        None, description="Extension: set when the app asks back; reply with a choice's number to continue."
    )


class CompletionChoice(BaseModel):
    index: int = 0
    message: AssistantMessage
    finish_reason: Literal["stop"] = "stop"


class RagappInfo(BaseModel):
    trace_id: str | None = Field(description="GET /v1/traces/{id} explains this answer.")
    mode: str
    grounded: bool = Field(description="False: nothing relevant was found, or the answer was refused.")
    abstained: bool = Field(description="The documents do not hold the answer, the app (or the model) said.")
    answered: bool = Field(
        True,
        description="False: no answer is stated; `reason` says why, and the citations are the passages to read "
        "(for not_sure, the first is the one most likely to hold the answer).",
    )
    reason: Literal["not_sure", "not_in_documents", "asked_back"] | None = Field(
        None,
        description="Why nothing was stated: not_sure (no sentence of the passages answers it, or the answer was "
        "likely wrong: see `guess`), not_in_documents (the documents do not hold it), asked_back (a question back).",
    )
    guess: str | None = Field(
        None, description="With reason not_sure: the model's answer, withheld as likely wrong (null when it had none)."
    )
    notices: list[str] = Field(description="What the chat shows as notices: a degraded channel, a fallback taken.")
    answered_before: str | None = Field(
        None,
        description="Set when the answer comes from the answer cache: when it was first answered (ISO time, UTC); "
        "the same question over the same documents, so no model was asked. Send `fresh: true` to answer anew.",
    )
    memories_used: list[str] = Field(
        default_factory=list,
        description="Your memories this answer used (GET /v1/memories): what you asked the app to remember, put in "
        "the prompt as what you said before; never cited.",
    )
    suggestions: list[str] = Field(
        default_factory=list,
        description="Next questions the knowledge base can answer, in the question's language, from the headings "
        "of the sections beside the cited ones (docs/chats.md); empty under a refusal or with "
        "`workflow.suggest_questions` off. Ask one as a new user message.",
    )


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[CompletionChoice]
    ragapp: RagappInfo = Field(description="Extension: how this answer was made.")


class ModelOut(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "ragapp"
    description: str


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelOut]


# -- documents and jobs ------------------------------------------------------------------------


class DocumentOut(BaseModel):
    id: str
    name: str
    kb: str
    file_type: str
    size_bytes: int
    pages: int | None
    chunks: int
    added_at: str


class ChunkOut(BaseModel):
    chunk_id: str
    ordinal: int
    text: str
    location: str
    page: int | None
    heading: str | None
    has_table: bool
    ocr_confidence: float | None
    figure_url: str | None = Field(
        None,
        description="A figure's passage: where its picture is served, cropped from its page (a slide's, a Word "
        "file's or a book's picture as embedded) (GET, same key).",
    )
    caption: str | None = Field(None, description="A figure's passage: its caption ('' when it has none).")


class LeftOutOut(BaseModel):
    location: str
    reason: str
    preview: str


class DocumentDetail(DocumentOut):
    meta: dict[str, str] = Field(
        description="What the file says about itself (title, author, created, modified) and where it came from "
        "(source, path, folder, changed: when it last changed there); dates in UTC as YYYY-MM-DD HH:MM:SS."
    )
    tags: list[str] = Field(description="The tags users set (PUT /v1/documents/{id}/tags).")
    report: dict[str, Any] | None = Field(description="How the file read (pages with text, OCR, tables).")
    file_kept: bool
    chunk_list: list[ChunkOut] = Field(description="Its chunks, in order.")
    left_out: list[LeftOutOut] = Field(description="Pages kept out of retrieval as boilerplate, and why.")


class KnowledgeBaseOut(BaseModel):
    name: str
    documents: int
    chunks: int


class IngestResultOut(BaseModel):
    name: str
    status: Literal["added", "replaced", "duplicate", "failed", "cancelled"]
    message: str
    doc_id: str | None
    chunks: int


class JobProgressOut(BaseModel):
    """The upload's latest progress report: what the Knowledge tab draws, file by file."""

    file: str | None = Field(description="The file being read; null for the batch's last stage (index).")
    file_index: int = Field(description="Its place in the upload, from 0; equal to file_count once all are done.")
    file_count: int
    stage: Literal["parse", "tables", "ocr", "chunk", "embed", "store", "index"] = Field(
        description="parse: reading the text; tables: a PDF's pages searched for tables; ocr: scanned pages read; "
        "chunk, embed, store; index: the keyword index rebuilt, once for the whole upload."
    )
    done: int | None = Field(description="Pages (parse, tables, ocr) or chunks (embed, store) done; null: not counted.")
    total: int | None = Field(description="Of how many pages or chunks.")


class JobOut(BaseModel):
    id: str
    status: Literal["queued", "running", "done", "failed", "cancelled"]
    kb: str
    files: list[str]
    fraction: float = Field(description="Of the whole upload done, 0..1.")
    message: str = Field(description="What is happening, e.g. 'report.pdf: embedded 32/90 chunks'.")
    progress: JobProgressOut | None = Field(None, description="The latest progress report; null before the first.")
    results: list[IngestResultOut] = Field(description="Per file, once the job has ended.")
    error: str | None
    created: str
    finished: str | None


class TagsIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tags: list[str] = Field(
        max_length=MAX_TAGS,
        description=f"The document's tags, replacing the ones it had ([] removes all): at most {MAX_TAGS}, each up to "
        "40 letters, digits, spaces or . : / + # & -; stored in lower case.",
    )

    @field_validator("tags")
    @classmethod
    def _clean(cls, tags: list[str]) -> list[str]:
        try:
            return list(clean_tags(tags))
        except TagError as exc:
            raise ValueError(str(exc)) from None


class TagsOut(BaseModel):
    id: str
    tags: list[str]


class Deleted(BaseModel):
    id: str
    name: str
    deleted: Literal[True] = True


# -- retrieval -----------------------------------------------------------------------------------


class RetrieveRequest(BaseModel):
    query: str = Field(description="The question, searched as it is (no rewriting, no routing).")
    kbs: list[str] | None = Field(None, description="The knowledge bases to search; none: all you may read.")
    filter: DocumentFilter | None = Field(None, description=FILTER_DOC)


class RelevanceOut(BaseModel):
    kept: bool
    reason: str
    score: float


class CandidateOut(BaseModel):
    chunk_id: str
    doc_id: str
    document: str
    location: str
    text: str
    in_prompt: bool = Field(description="Passed the relevance gate: an answer would read it.")
    final_rank: int = Field(description="After reranking (1 = best).")
    fused_rank: int
    fused_score: float
    rerank_score: float | None
    channel_ranks: dict[str, int] = Field(description="Each channel's 1-based rank of the chunk (bm25, vector, ...).")
    channel_scores: dict[str, float] = Field(description="Each channel's raw score.")
    contributions: dict[str, float] = Field(description="What each channel added to the fused score.")
    relevance: RelevanceOut | None = Field(description="The relevance gate's decision, and the score it read.")


class HitOut(BaseModel):
    chunk_id: str
    rank: int
    score: float


class ChannelOut(BaseModel):
    channel: str
    seconds: float
    hits: list[HitOut]


class RetrieveResponse(BaseModel):
    query: str
    kbs: list[str] | None
    cached: bool
    seconds: float
    degraded: list[str] = Field(
        description="Channels or models that failed (the search went on without them), or a filter no document matches."
    )
    filtered: int | None = Field(None, description="How many documents the filter let the search use; null: no filter.")
    indexing: list[str] = Field(
        default_factory=list,
        description="The bases searched that are still being indexed in the background: their passages without "
        "vectors yet were found by their words only, so this search may miss some.",
    )
    timings: dict[str, float]
    knobs: dict[str, Any] = Field(description="Every retrieval setting this search ran with.")
    chunks: list[CandidateOut] = Field(description="What an answer's prompt would get, best first.")
    candidates: list[CandidateOut] = Field(description="Every fused candidate, in the final order.")
    channels: list[ChannelOut]


# -- traces and test cases ---------------------------------------------------------------------------


class TraceSummaryOut(BaseModel):
    id: str
    started_at: str
    question: str
    mode: str
    kind: str
    total_s: float | None
    status: str
    degradations: list[str]
    rating: str
    comment: str


class TestCaseIn(BaseModel):
    __test__ = False  # not a pytest test class
    question: str
    expected: list[str] = Field(min_length=1, description="Names of the documents that should answer it.")
    kbs: list[str] | None = None
    trace_id: str | None = None


class TestCaseOut(BaseModel):
    __test__ = False
    id: int
    question: str
    expected: list[str]
    kbs: list[str] | None
    created_at: str
    trace_id: str | None


class EvaluateRequest(BaseModel):
    changes: dict[str, Any] = Field(
        default_factory=dict,
        description='Retrieval settings to try beside the current ones, e.g. {"fusion": "rrf", "rerank": false}.',
    )
    k: int = Field(10, ge=1, le=100, description="Cut-off of MRR@k and nDCG@k.")


class CaseResultOut(BaseModel):
    question: str
    expected: list[str]
    ranked: list[str]
    first_rank: int | None
    hit: bool
    mrr: float
    ndcg: float
    seconds: float


class EvaluateReport(BaseModel):
    label: str
    k: int
    settings: dict[str, Any]
    hit_rate: float
    mrr: float
    ndcg: float
    results: list[CaseResultOut]
