"""Question -> the chunks that go into the prompt.

channels (concurrent, each within its time budget) -> weighted RRF by chunk id -> candidate cut
-> rerank -> relevance gate -> context_top_k. A channel that fails or runs out of time contributes
nothing and is named in ``degraded``; the other channels still answer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from ragapp.config import RetrievalSettings
from ragapp.rerank.base import Reranker
from ragapp.retrieval.channels import Channel, ChannelResult
from ragapp.retrieval.fusion import weighted_rrf
from ragapp.store.catalog import Catalog
from ragapp.types import RetrievedChunk

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetrievalResult:
    """Everything a trace needs to explain the chunks that were chosen."""

    query: str
    chunks: tuple[RetrievedChunk, ...]  # what reaches the prompt
    candidates: tuple[RetrievedChunk, ...]  # fused (and reranked) before the relevance gate
    channel_results: tuple[ChannelResult, ...]
    degraded: tuple[str, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)


class RetrievalPipeline:
    def __init__(
        self,
        channels: Sequence[Channel],
        catalog: Catalog,
        reranker: Reranker,
        settings: RetrievalSettings,
    ) -> None:
        self._channels = list(channels)
        self._catalog = catalog
        self._reranker = reranker
        self._settings = settings
        # A bounded pool shared by all requests; a hung channel occupies one worker, never the request.
        self._pool = ThreadPoolExecutor(max_workers=max(4, 2 * len(self._channels)), thread_name_prefix="channel")

    @property
    def reranker(self) -> Reranker:
        return self._reranker

    def retrieve(self, query: str) -> RetrievalResult:
        s = self._settings
        timings: dict[str, float] = {}
        results, degraded = self._run_channels(query)
        start = time.perf_counter()
        fused = weighted_rrf({r.channel: r.hits for r in results}, k=s.rrf_k, weights=s.weights)
        fused = fused[: s.candidate_limit]
        chunks = self._catalog.chunks(c.chunk_id for c in fused)
        candidates = [
            RetrievedChunk(chunks[c.chunk_id], c.fused_score, c.channel_ranks, c.channel_scores)
            for c in fused
            if c.chunk_id in chunks  # the catalog is the truth: an id it no longer has is dropped
        ]
        timings["fusion"] = time.perf_counter() - start

        start = time.perf_counter()
        try:
            ranked = self._reranker.rerank(query, candidates)
        except Exception as exc:  # a broken reranker must not cost the user an answer
            log.warning("reranker failed, keeping fused order: %r", exc)
            degraded.append(f"reranker failed ({type(exc).__name__}); using the fused order")
            ranked = candidates
        timings["rerank"] = time.perf_counter() - start

        relevant = [c for c in ranked if is_relevant(c, s)]
        return RetrievalResult(
            query=query,
            chunks=tuple(relevant[: s.context_top_k]),
            candidates=tuple(ranked),
            channel_results=tuple(results),
            degraded=tuple(degraded),
            timings=timings | {f"channel:{r.channel}": r.duration_s for r in results},
        )

    def _run_channels(self, query: str) -> tuple[list[ChannelResult], list[str]]:
        budget = self._settings.recall_budget
        futures: dict[Future[ChannelResult], Channel] = {
            self._pool.submit(channel.retrieve, query, budget): channel for channel in self._channels
        }
        done, pending = wait(futures, timeout=self._settings.channel_timeout_s)
        results: list[ChannelResult] = []
        degraded: list[str] = []
        for future in pending:
            future.cancel()
            name = futures[future].name
            degraded.append(f"{name} search timed out after {self._settings.channel_timeout_s:g} s")
        for future in done:
            name = futures[future].name
            try:
                results.append(future.result())
            except Exception as exc:
                log.warning("channel %s failed: %r", name, exc)
                degraded.append(f"{name} search failed ({type(exc).__name__})")
        order = {c.name: i for i, c in enumerate(self._channels)}
        results.sort(key=lambda r: order[r.channel])
        return results, degraded


def is_relevant(candidate: RetrievedChunk, settings: RetrievalSettings) -> bool:
    """The relevance gate. With a reranker its score decides. Without one: a strong vector match, a strong
    keyword match, or both channels agreeing on a fair vector match (see scripts/calibrate_gate.py)."""
    if candidate.rerank_score is not None:
        return candidate.rerank_score >= settings.min_rerank_score
    vector = candidate.channel_scores.get("vector", 0.0)
    keyword = candidate.channel_scores.get("keyword", 0.0)
    return (
        vector >= settings.min_vector_similarity
        or keyword >= settings.min_keyword_score
        or (keyword > 0 and vector >= settings.min_agreement_similarity)
    )
