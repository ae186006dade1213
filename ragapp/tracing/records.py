"""What a trace keeps of a search, a chunk, an intent score: plain JSON-able records."""

from __future__ import annotations

from typing import Any

from ragapp.core.types import LeafScore, RetrievalResult, RetrievedChunk

PREVIEW_CHARS = 400


def retrieval_record(result: RetrievalResult, seconds: float) -> dict[str, Any]:
    """One search as the Traces tab shows it: settings, each channel's hits, and every fused candidate with its
    rank in each channel, what each channel added to its fused score, its rerank score, and how it moved."""
    s = result.settings
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
        candidates.append(
            chunk_ref(c)
            | {
                "fused_rank": fused_rank[cid],
                "fused_score": round(c.fused_score, 6),
                "channel_ranks": dict(c.channel_ranks),
                "channel_scores": {k: round(v, 6) for k, v in c.channel_scores.items()},
                "contributions": {k: round(v, 6) for k, v in parts.get(cid, {}).items()},
                "rerank_score": None if c.rerank_score is None else round(c.rerank_score, 6),
                "final_rank": final,
                "in_prompt": cid in in_prompt,
            }
        )
    return {
        "query": result.query,
        "kbs": list(result.kbs) if result.kbs is not None else None,
        "cached": result.cached,
        "seconds": round(seconds, 6),
        "degraded": list(result.degraded),
        "timings": {k: round(v, 6) for k, v in result.timings.items()},
        "settings": jsonable(
            {
                k: s.get(k)
                for k in (
                    "fusion",
                    "rrf_k",
                    "weights",
                    "recall_budget",
                    "candidate_limit",
                    "context_top_k",
                    "min_rerank_score",
                    "reranker",
                    "top_k",
                )
            }
        ),
        "channels": [
            {
                "channel": c.channel,
                "seconds": round(c.duration_s, 6),
                "hits": [{"chunk_id": h.chunk_id, "rank": h.rank, "score": round(h.score, 6)} for h in c.hits],
            }
            for c in result.channel_results
        ],
        "candidates": candidates,
    }


def chunk_ref(c: RetrievedChunk) -> dict[str, Any]:
    chunk = c.chunk
    return {
        "chunk_id": chunk.chunk_id,
        "doc_id": chunk.doc_id,
        "source": chunk.source,
        "location": chunk.location,
        "text": chunk.text[:PREVIEW_CHARS],
    }


def leaf_record(s: LeafScore) -> dict[str, Any]:
    return {"code": s.code, "path": s.path, "kind": s.kind, "score": round(s.score, 4)}


def jsonable(value: Any) -> Any:
    """Plain JSON types only (tuples to lists, anything else to its string)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)
