"""What the workflow carries between its steps: a question's parts on their way to retrieval, the user's pick
after an ask-back, and how the parts' results are put together and described in the trace."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragapp.core.types import Docs, RetrievalResult, RetrievedChunk, Scope
from ragapp.retrieval.pipeline import RetrievalPipeline
from ragapp.router.decide import RoutingDecision

SEARCH_ALL = "*"  # the clarification choice "none of these: search everything"


@dataclass(frozen=True)
class Clarified:
    """The user's answer to a ``ClarifyEvent``: the parts asked about and the leaf picked (or ``SEARCH_ALL``)."""

    sub_questions: tuple[str, ...]
    ambiguous: str  # the part that was asked about: it takes the pick without another classification
    choice: str


@dataclass(frozen=True)
class Part:
    """One sub-question on its way to retrieval."""

    question: str  # what is searched
    decision: RoutingDecision
    kbs: Scope
    top_k: int | None
    docs: Docs = None  # the documents a filter admits (None: no filter), whatever knowledge bases are searched


def merge_results(results: Sequence[RetrievalResult]) -> list[RetrievedChunk]:
    """The chunks of every part, best first within each part and taken in turns across parts, each once."""
    merged: dict[str, RetrievedChunk] = {}
    lists = [list(r.chunks) for r in results]
    for rank in range(max((len(c) for c in lists), default=0)):
        for chunks in lists:
            if rank < len(chunks):
                merged.setdefault(chunks[rank].chunk.chunk_id, chunks[rank])
    return list(merged.values())


def retrieve_detail(
    retrieval: RetrievalPipeline,
    parts: Sequence[Part],
    results: Sequence[RetrievalResult],
    found: int,
    kept: int,
    fit: dict[str, object],
) -> dict[str, object]:
    """The retrieve stage's trace detail: hits per channel, what was kept, and the budget (``fit``)."""
    channels: dict[str, int] = {}
    for result in results:
        for r in result.channel_results:
            channels[r.channel] = channels.get(r.channel, 0) + len(r.hits)
    detail: dict[str, object] = {
        "channels": channels,
        "candidates": sum(len(r.candidates) for r in results),
        "relevant": found,
        "in prompt": kept,
        "fusion": retrieval.settings.fusion,
        "reranker": retrieval.reranker.name,
        "cached": all(r.cached for r in results),
        "queries": [p.question for p in parts],
        "kbs": [sorted(p.kbs) if p.kbs is not None else "all" for p in parts],
        **fit,  # the budget, each part's tokens and what was compressed to fit
    }
    if parts and parts[0].docs is not None:  # every part has the question's filter
        detail["filter documents"] = len(parts[0].docs)
    return detail


def scope_words(kbs: Scope) -> str:
    return "all knowledge bases" if kbs is None else "the chosen knowledge bases (" + ", ".join(sorted(kbs)) + ")"
