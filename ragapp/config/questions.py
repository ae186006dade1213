"""The written questions' settings (``Settings.questions``, env ``RAGAPP_QUESTIONS__ENABLED`` etc.): the model
writes, for each chunk, questions the chunk answers, and searches find the chunk through them
(``ragapp.enrich.questions``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class QuestionSettings(BaseModel):
    enabled: bool = Field(
        False,
        description="Search the questions the model wrote for each chunk too (both channels; a chunk found "
        "through one counts once) and let the enrichment write them. Off by default: on the blind set's dev "
        "paraphrased questions over R-lang it brought the evidence into the prompt for 9 of 12 against 8 of 12, "
        "losing one (docs/benchmarks.md): not enough to turn it on.",
    )
    per_chunk: int = Field(
        3,
        ge=1,
        le=6,
        description="Questions the model writes per chunk: in the chunk's language, and one in the other.",
    )
    grounding: Literal["rerank", "overlap", "none"] = Field(
        "rerank",
        description="How a written question is checked against its chunk before it is kept: the reranker's score "
        "of (question, chunk), the share of the question's content words found in the chunk, or not at all.",
    )
    min_rerank: float = Field(
        0.2,
        description="With grounding=rerank: the least reranker score a kept question has (the shipped reranker's "
        "scores are probabilities; 0.2 is the relevance gate's min_rerank_score: a question whose chunk the gate "
        "would drop for it cannot bring the chunk into the prompt).",
    )
    min_overlap: float = Field(
        0.5,
        ge=0,
        le=1,
        description="With grounding=overlap: the least share of a question's content words in its chunk.",
    )
    timeout_s: float = Field(120.0, gt=0, description="How long the model may take to write one chunk's questions.")
