"""What a trace keeps of a search and a chunk: typed records (stored by ``ragapp.core.serial``), and the
functions that make them from the engine's results."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragapp.core.serial import OMIT_DEFAULT, Stored, dump
from ragapp.core.types import LeafScore, RelevanceDecision, RetrievalResult, RetrievedChunk, Said

PREVIEW_CHARS = 400


@dataclass(frozen=True)
class PassageScores(Stored):
    """A passage's scores as it reached the answer's prompt (the calibrator reads them): after a search merged
    with a translated or rephrased one, or across a question's parts, a chunk keeps one search's scores, which
    its records in ``Trace.retrievals`` alone do not say."""

    fused_score: float
    channel_ranks: dict[str, int]
    channel_scores: dict[str, float]
    rerank_score: float | None


@dataclass(frozen=True)
class ChunkRef(Stored):
    """A chunk as a trace shows it, its text cut to a preview; a passage of the answer's prompt with its
    ``scores`` (None in traces written before they were kept, and for other chunks)."""

    chunk_id: str
    doc_id: str
    source: str
    location: str
    text: str
    scores: PassageScores | None = field(default=None, metadata=OMIT_DEFAULT)


@dataclass(frozen=True)
class CandidateRecord(Stored):
    """A fused candidate: its chunk, its rank and score in each channel, what each channel added to its fused
    score, its rerank score, how it moved, and the relevance gate's decision in English (``relevance``: "" in
    rows written before the gate recorded it) and as a record (``said``: None in rows written before it was
    kept, whose English a view shows as it is)."""

    chunk_id: str
    doc_id: str
    source: str
    location: str
    text: str
    fused_rank: int
    fused_score: float
    channel_ranks: dict[str, int]
    channel_scores: dict[str, float]
    contributions: dict[str, float]
    rerank_score: float | None
    final_rank: int
    in_prompt: bool
    relevance: str = ""
    said: Said | None = field(default=None, metadata=OMIT_DEFAULT)


@dataclass(frozen=True)
class HitRecord(Stored):
    chunk_id: str
    rank: int
    score: float
    via: str | None = field(default=None, metadata=OMIT_DEFAULT)  # the written question that found it


@dataclass(frozen=True)
class ChannelRecord(Stored):
    """One channel's hits in its own order, and how long it took."""

    channel: str
    seconds: float
    hits: list[HitRecord]


@dataclass(frozen=True)
class RetrievalRecord(Stored):
    """One search: the settings it ran with, each channel's hits and every fused candidate."""

    query: str
    kbs: list[str] | None
    cached: bool
    seconds: float
    degraded: list[str]
    timings: dict[str, float]
    settings: dict[str, Any]  # JSON-able: fusion, rrf_k, weights, candidate_limit, top_k, ...
    channels: list[ChannelRecord]
    candidates: list[CandidateRecord]


@dataclass(frozen=True)
class LeafRecord(Stored):
    """An intent leaf with the score the classifier gave it."""

    code: str
    path: str
    kind: str
    score: float


# -- from the engine's results ----------------------------------------------------------------------


SETTINGS_KEPT = (
    "fusion",
    "rrf_k",
    "weights",
    "recall_budget",
    "candidate_limit",
    "context_top_k",
    "min_rerank_score",
    "agreement_top_n",
    "agreement_max_fused_rank",
    "rerank_margin",
    "cross_language_top_n",
    "min_cross_language_similarity",
    "cross_language_lead",
    "cross_language_keyword_top_n",
    "require_names",
    "reranker",
    "top_k",
)


def retrieval_record(result: RetrievalResult, seconds: float) -> RetrievalRecord:
    """One search as the Traces tab shows it: settings, each channel's hits, and every fused candidate with its
    rank in each channel, what each channel added to its fused score, its rerank score, and how it moved."""
    parts = result.contributions
    # The fused order, ties broken as fusion breaks them (best channel rank, then chunk id).
    by_fused = sorted(
        result.candidates,
        key=lambda c: (-c.fused_score, min(c.channel_ranks.values(), default=0), c.chunk.chunk_id),
    )
    fused_rank = {c.chunk.chunk_id: i for i, c in enumerate(by_fused, start=1)}
    in_prompt = {c.chunk.chunk_id for c in result.chunks}
    candidates = []
    for final, c in enumerate(result.candidates, start=1):
        cid = c.chunk.chunk_id
        ref = chunk_ref(c)
        candidates.append(
            CandidateRecord(
                ref.chunk_id,
                ref.doc_id,
                ref.source,
                ref.location,
                ref.text,
                fused_rank=fused_rank[cid],
                fused_score=round(c.fused_score, 6),
                channel_ranks=dict(c.channel_ranks),
                channel_scores={k: round(v, 6) for k, v in c.channel_scores.items()},
                contributions={k: round(v, 6) for k, v in parts.get(cid, {}).items()},
                rerank_score=None if c.rerank_score is None else round(c.rerank_score, 6),
                final_rank=final,
                in_prompt=cid in in_prompt,
                relevance=relevance_text(decision := result.decisions.get(cid)),
                said=None if decision is None else decision.said,
            )
        )
    return RetrievalRecord(
        query=result.query,
        kbs=list(result.kbs) if result.kbs is not None else None,
        cached=result.cached,
        seconds=round(seconds, 6),
        degraded=list(result.degraded),
        timings={k: round(v, 6) for k, v in result.timings.items()},
        settings=dump({k: result.settings.get(k) for k in SETTINGS_KEPT}),
        channels=[
            ChannelRecord(
                c.channel,
                round(c.duration_s, 6),
                [HitRecord(h.chunk_id, h.rank, round(h.score, 6), h.via) for h in c.hits],
            )
            for c in result.channel_results
        ],
        candidates=candidates,
    )


def relevance_text(decision: RelevanceDecision | None) -> str:
    """'kept: rerank score ≥ 0.2' / 'dropped: rerank score below 0.2' ("" when the search recorded none)."""
    return "" if decision is None else f"{'kept' if decision.kept else 'dropped'}: {decision.reason}"


def chunk_ref(c: RetrievedChunk, scored: bool = False) -> ChunkRef:
    """``c`` as a trace keeps it; ``scored``: with its scores (a passage of the answer's prompt)."""
    chunk = c.chunk
    scores = None
    if scored:  # unrounded: the calibrator read them so (a replay must read what it read)
        scores = PassageScores(c.fused_score, dict(c.channel_ranks), dict(c.channel_scores), c.rerank_score)
    return ChunkRef(chunk.chunk_id, chunk.doc_id, chunk.source, chunk.location, chunk.text[:PREVIEW_CHARS], scores)


def leaf_record(s: LeafScore) -> LeafRecord:
    return LeafRecord(s.code, s.path, s.kind, round(s.score, 4))
