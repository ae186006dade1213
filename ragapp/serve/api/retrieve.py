"""``POST /v1/retrieve``: the search alone, as the Traces tab shows it (every channel's rank and score, fused
and rerank scores, the relevance gate's decision, the knobs), with each chunk's whole text (RAGAS-style
evaluations read the contexts)."""

from __future__ import annotations

import time

from fastapi import APIRouter, Depends

from ragapp.core.serial import dump
from ragapp.core.types import RetrievalResult, Scope
from ragapp.engine import retrieval_record
from ragapp.engine.chat import question_refusal
from ragapp.engine.engine import Engine
from ragapp.serve.api.auth import Caller, KeyCheck
from ragapp.serve.api.errors import ApiError, ApiRoute
from ragapp.serve.api.schemas import CandidateOut, ChannelOut, HitOut, RelevanceOut, RetrieveRequest, RetrieveResponse
from ragapp.serve.api.scope import scope_of


def retrieve_response(result: RetrievalResult, seconds: float, indexing: list[str] | None = None) -> RetrieveResponse:
    record = retrieval_record(result, seconds)  # the trace's view: fused ranks and each channel's share
    ranked = {c.chunk_id: c for c in record.candidates}
    candidates = []
    for c in result.candidates:
        row = ranked[c.chunk.chunk_id]
        decision = result.decisions.get(c.chunk.chunk_id)
        candidates.append(
            CandidateOut(
                chunk_id=row.chunk_id, doc_id=row.doc_id, document=row.source, location=row.location,
                text=c.chunk.text, in_prompt=row.in_prompt, final_rank=row.final_rank, fused_rank=row.fused_rank,
                fused_score=row.fused_score, rerank_score=row.rerank_score, channel_ranks=row.channel_ranks,
                channel_scores=row.channel_scores, contributions=row.contributions,
                relevance=None if decision is None else RelevanceOut(
                    kept=decision.kept, reason=decision.reason, score=round(decision.score, 6)
                ),
            )
        )  # fmt: skip
    by_id = {c.chunk_id: c for c in candidates}
    return RetrieveResponse(
        query=record.query, kbs=record.kbs, cached=record.cached, seconds=record.seconds, degraded=record.degraded,
        filtered=result.filtered, indexing=indexing or [], timings=record.timings, knobs=dump(result.settings),
        chunks=[by_id[c.chunk.chunk_id] for c in result.chunks if c.chunk.chunk_id in by_id], candidates=candidates,
        channels=[
            ChannelOut(channel=ch.channel, seconds=ch.seconds,
                       hits=[HitOut(chunk_id=h.chunk_id, rank=h.rank, score=h.score) for h in ch.hits])
            for ch in record.channels
        ],
    )  # fmt: skip


def router(engine: Engine, check: KeyCheck) -> APIRouter:
    api = APIRouter(prefix="/v1", route_class=ApiRoute, tags=["retrieval"])

    @api.post("/retrieve", response_model=RetrieveResponse, summary="Search the knowledge bases, no answer")
    def retrieve(body: RetrieveRequest, caller: Caller = Depends(check)) -> RetrieveResponse:
        refusal = question_refusal(body.query, engine.settings.workflow.max_question_chars)
        if refusal is not None:
            raise ApiError(400, refusal, "invalid_query")
        kbs = scope_of(engine, body.kbs, caller.actor)
        started = time.perf_counter()
        result = engine.chat.retrieve(body.query, kbs, actor=caller.actor, where=body.filter)
        seconds = time.perf_counter() - started
        return retrieve_response(result, seconds, _still_indexing(engine, kbs, caller))

    return api


def _still_indexing(engine: Engine, kbs: Scope, caller: Caller) -> list[str]:
    """The bases of ``kbs`` (None: all the caller may read) that the background worker is still indexing."""
    if engine.enrichment is None:
        return []
    readable = (
        kbs if kbs is not None else frozenset(kb.name for kb in engine.library.knowledge_bases(actor=caller.actor))
    )
    return engine.enrichment.indexing(readable)
