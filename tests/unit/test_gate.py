"""The relevance gate on hand-built candidates: which evidence makes a chunk count as relevant."""

from __future__ import annotations

import threading
import time

import pytest

from ragapp.config import RetrievalSettings
from ragapp.core.types import Chunk, RetrievedChunk
from ragapp.models.lazy import LazyModel
from ragapp.retrieval.pipeline import is_relevant

SETTINGS = RetrievalSettings(min_vector_similarity=0.875, min_agreement_similarity=0.80, min_keyword_score=6.0)
CHUNK = Chunk("d-0000", "d", 0, "text", "doc.md")


def _candidate(
    vector: float | None = None, keyword: float | None = None, rerank: float | None = None
) -> RetrievedChunk:
    scores = {k: v for k, v in (("vector", vector), ("keyword", keyword)) if v is not None}
    return RetrievedChunk(CHUNK, 0.01, dict.fromkeys(scores, 1), scores, rerank_score=rerank)


@pytest.mark.parametrize(
    ("vector", "keyword", "expected"),
    [
        (0.875, None, True),  # strong vector match alone
        (0.874, None, False),  # Chinese off-topic questions reach ~0.87 with multilingual-e5
        (None, 6.0, True),  # strong keyword match alone
        (None, 5.9, False),
        (0.80, 0.1, True),  # both channels agree on a fair match
        (0.799, 5.0, False),
        (0.85, 0.0, False),  # a zero BM25 score is no keyword evidence
    ],
)
def test_gate_without_reranker(vector: float | None, keyword: float | None, expected: bool) -> None:
    assert is_relevant(_candidate(vector, keyword), SETTINGS) is expected


def test_reranker_score_overrides_channel_evidence() -> None:
    settings = SETTINGS.model_copy(update={"min_rerank_score": 0.5})
    assert is_relevant(_candidate(vector=0.95, keyword=9.0, rerank=0.2), settings) is False
    assert is_relevant(_candidate(vector=0.1, rerank=0.7), settings) is True


def test_lazy_model_loads_once_under_concurrent_first_use() -> None:
    calls: list[int] = []

    def load() -> object:
        calls.append(1)
        time.sleep(0.05)  # widen the window in which a second loader could slip in
        return object()

    lazy = LazyModel(load)
    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(lazy.get())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert len({id(r) for r in results}) == 1
