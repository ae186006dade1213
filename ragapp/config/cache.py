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
    paraphrase_min_similarity: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Also answer a differently worded question from a kept answer when the embedder scores the two "
        "questions at least this similar (same mode, scope, filter and documents); 0: exact questions only. Off by "
        "default: a question about a neighbouring fact scores as high as a true paraphrase (battery life vs charging "
        "time: 0.976 vs 0.977), so no threshold is safe (docs/workflow.md).",
    )
    max_entries: int = Field(
        2000, ge=1, description="Answers kept (all users together); the least recently used go first."
    )
    max_age_days: float = Field(
        30.0, gt=0, description="An answer older than this is answered again (and the stored one deleted)."
    )
