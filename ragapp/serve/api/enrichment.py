"""A knowledge base's background indexing: ``/v1/knowledge-bases/{kb}/enrichment`` (docs/ingestion.md)."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from ragapp.engine.engine import Engine
from ragapp.engine.enrichment import Enrichment, KbProgress
from ragapp.serve.api.auth import Caller, KeyCheck
from ragapp.serve.api.errors import ApiError, ApiRoute


class LineOut(BaseModel):
    code: str = Field(description="enrich.progress, enrich.progress_starting, enrich.progress_paused, enrich.done.")
    values: dict[str, str | int | float] = Field(description="The values its words are filled with.")
    message: str = Field(description="The line in English.")


class StepOut(BaseModel):
    step: str = Field(description="The enrichment step, in the order they run: vectors, then questions.")
    done: int = Field(description="The base's passages this step has done.")
    total: int = Field(description="The base's passages.")
    per_minute: float = Field(description="Passages a minute over the last batches (0: not measured yet).")


class EnrichmentOut(BaseModel):
    kb: str
    background: bool = Field(description="Enriched in the background; false: uploads into it are indexed inline.")
    paused: bool
    indexing: bool = Field(description="Some step has passages left: part of the base is found by keywords only.")
    steps: list[StepOut]
    lines: list[LineOut] = Field(description="The progress line, one per step left (or one: fully indexed).")


def enrichment_out(progress: KbProgress) -> EnrichmentOut:
    return EnrichmentOut(
        kb=progress.kb,
        background=progress.background,
        paused=progress.paused,
        indexing=progress.indexing,
        steps=[
            StepOut(step=s.step, done=s.done, total=s.total, per_minute=round(s.per_minute, 1)) for s in progress.steps
        ],
        lines=[LineOut(code=s.code, values=s.values, message=s.english) for s in progress.said()],
    )


def router(engine: Engine, check: KeyCheck) -> APIRouter:
    api = APIRouter(prefix="/v1", route_class=ApiRoute, tags=["documents"])

    def facet() -> Enrichment:
        if engine.enrichment is None:
            raise ApiError(503, "This server was built without background enrichment.", "no_enrichment")
        return engine.enrichment

    @api.get(
        "/knowledge-bases/{kb}/enrichment",
        response_model=EnrichmentOut,
        summary="How far a knowledge base's background indexing has got, step by step",
    )
    def progress(kb: str, caller: Caller = Depends(check)) -> EnrichmentOut:
        return enrichment_out(facet().progress(kb, actor=caller.actor))

    @api.post(
        "/knowledge-bases/{kb}/enrichment/pause",
        response_model=EnrichmentOut,
        summary="Pause a knowledge base's background indexing (its editors; kept across restarts)",
    )
    def pause(kb: str, caller: Caller = Depends(check)) -> EnrichmentOut:
        return enrichment_out(facet().pause(kb, actor=caller.actor))

    @api.post(
        "/knowledge-bases/{kb}/enrichment/resume",
        response_model=EnrichmentOut,
        summary="Resume a knowledge base's background indexing (its editors)",
    )
    def resume(kb: str, caller: Caller = Depends(check)) -> EnrichmentOut:
        return enrichment_out(facet().resume(kb, actor=caller.actor))

    return api
