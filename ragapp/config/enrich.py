"""The background enrichment's settings (``Settings.enrich``, env ``RAGAPP_ENRICH__BACKGROUND`` etc.).

Apart from ingest's settings: they say what happens after an upload has returned (``ragapp.enrich``).
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class EnrichSettings(BaseModel):
    background: bool = Field(
        True,
        description="An upload is searchable by keywords as soon as its catalog rows are stored; its vectors (and "
        "the other enrichment steps) follow in the background, a batch at a time, yielding to questions being "
        "answered. Off: every step is done inline at upload, as before, and the upload returns fully indexed.",
    )
    kbs: list[str] = Field(
        default_factory=list,
        description="Only these knowledge bases are enriched in the background; an upload into another one is "
        'indexed inline. Empty: all of them. JSON list, e.g. ["manuals"].',
    )
    batch: int = Field(
        32, ge=1, le=1024, description="Chunks per background batch; progress, pauses and answers are looked at "
        "between batches."
    )  # fmt: skip
    tick_s: float = Field(
        2.0, gt=0, description="How often the background worker looks for work when it has none (seconds)."
    )
    lease_s: float = Field(
        120.0,
        gt=0,
        description="How long a replica's hold on a knowledge base's enrichment lasts without news (renewed after "
        "every batch): one replica at a time enriches a base, and one that dies leaves it to another after this.",
    )
    answer_wait_s: float = Field(
        30.0,
        ge=0,
        description="While a question is being answered the background worker waits before its next batch, for at "
        "most this long at a time (answers first); 0: it does not wait.",
    )
