"""Rerankers reorder fused candidates by reading question and passage together."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from ragapp.config import Settings
from ragapp.core.types import Chunk, RetrievedChunk
from ragapp.registry import Registry


class Reranker(Protocol):
    name: str
    enabled: bool

    def rerank(self, query: str, candidates: Sequence[RetrievedChunk]) -> list[RetrievedChunk]:
        """Candidates with ``rerank_score`` set, best first (a pass-through keeps the fused order)."""
        ...


def passage_text(chunk: Chunk) -> str:
    """What a reranker reads: the chunk under its heading path, as the answering model sees it. A list item
    cut from its section ("- New: pet mode") only answers "which version added pet mode?" together with the
    heading it sits under ("Version 2.5.0")."""
    return f"{chunk.heading}\n{chunk.text}" if chunk.heading else chunk.text


RerankerFactory = Callable[[Settings], Reranker]
RERANKERS: Registry[RerankerFactory] = Registry("reranker")


class PassthroughReranker:
    """Reranking off: the fused order stands and no score is invented."""

    name = "off"
    enabled = False

    def rerank(self, query: str, candidates: Sequence[RetrievedChunk]) -> list[RetrievedChunk]:
        return list(candidates)


RERANKERS.register("none")(lambda settings: PassthroughReranker())
