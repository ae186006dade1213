"""The answer cache's settings (``Settings.answer_cache``, env ``RAGAPP_ANSWER_CACHE__ENABLED`` etc.).

Apart from the other answering settings so that turning the cache off or sizing it reads as one group.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class AnswerCacheSettings(BaseModel):
    enabled: bool = Field(
        True,
        description="Answer a question asked again (same words up to case and spacing, same mode, same readable "
        "knowledge bases and document filter, no change to any document or intent since) with the stored checked "
        "answer and its citations, marked as answered before. Off: every question runs the whole pipeline.",
    )
    max_entries: int = Field(
        2000, ge=1, description="Answers kept (all users together); the least recently used go first."
    )
    max_age_days: float = Field(
        30.0, gt=0, description="An answer older than this is answered again (and the stored one deleted)."
    )
