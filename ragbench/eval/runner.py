"""Run retrieval configurations over a BEIR dataset and score them.

A configuration is a named variant of the app's retrieval settings (which channels, which fusion, with or
without the reranker). Each runs through the real ``RetrievalPipeline`` over the same indexes, so the
figures are the app's, and per-query latency includes everything a user's question pays for.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from tqdm import tqdm

from ragapp.config import RetrievalSettings, Settings
from ragapp.core.chunks import doc_of_chunk_id
from ragapp.core.errors import RagAppError
from ragapp.engine.build import load_builtins
from ragapp.ingest.pipeline import KnowledgeStore
from ragapp.models.embedders import Embedder
from ragapp.rerank.base import RERANKERS, PassthroughReranker, Reranker
from ragapp.retrieval.channels import CHANNELS, ChannelDeps
from ragapp.retrieval.fusion import FUSIONS
from ragapp.retrieval.pipeline import RetrievalPipeline
from ragapp.testcases.metrics import all_found_at_k, mrr_at_k, ndcg_at_k, recall_at_k
from ragbench.eval.beir import BeirDataset


class EvalError(RagAppError):
    """A configuration that cannot run as asked."""


@dataclass(frozen=True)
class EvalConfig:
    name: str
    channels: tuple[str, ...]
    fusion: str | None = None  # None: the settings' default
    rerank: bool = False


def parse_config(name: str) -> EvalConfig:
    """``bm25`` | ``keyword`` | ``vector`` | ``hybrid`` | ``hybrid-<fusion>``, each optionally ``+rerank``."""
    base, plus, extra = name.partition("+")
    if plus and extra != "rerank":
        raise EvalError(f"unknown configuration {name!r}: only '+rerank' may follow a name.")
    rerank = bool(plus)
    if base in ("bm25", "keyword"):
        return EvalConfig(name, ("keyword",), rerank=rerank)
    if base == "vector":
        return EvalConfig(name, ("vector",), rerank=rerank)
    if base == "hybrid":
        return EvalConfig(name, ("vector", "keyword"), rerank=rerank)
    if base.startswith("hybrid-") and base[7:] in FUSIONS:
        return EvalConfig(name, ("vector", "keyword"), fusion=base[7:], rerank=rerank)
    known = ", ".join(["bm25", "vector", "hybrid"] + [f"hybrid-{f}" for f in FUSIONS.names()])
    raise EvalError(f"unknown configuration {name!r}. Known: {known} (each may end in +rerank).")


@dataclass
class ConfigResult:
    name: str
    metrics: dict[str, float]
    latency_ms: dict[str, float]
    stage_ms: dict[str, dict[str, float]]
    settings: dict[str, Any]
    per_query: dict[str, list[str]] = field(default_factory=dict)  # query id -> top doc ids

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k not in ("name", "per_query")}


# A ranker: question -> (doc ids best first, stage timings in seconds)
Ranker = Callable[[str], tuple[list[str], dict[str, float]]]


def retrieval_settings(settings: Settings, config: EvalConfig, depth: int, rerank_depth: int) -> RetrievalSettings:
    """The app's settings with the configuration applied and the budgets widened to ``depth`` chunks. A
    ``+rerank`` configuration orders candidates as the app does (``rerank_weight``; set
    RAGAPP_RETRIEVAL__RERANK_WEIGHT=1 to measure the reranker's own order)."""
    return settings.retrieval.model_copy(
        update={
            "channels": list(config.channels),
            "fusion": config.fusion or settings.retrieval.fusion,
            "recall_budget": depth,
            "candidate_limit": rerank_depth if config.rerank else depth,
            "cache_size": 0,  # every query is timed for real
        }
    )


def pipeline_ranker(
    store: KnowledgeStore, settings: Settings, config: EvalConfig, depth: int, rerank_depth: int, reranker: Reranker
) -> tuple[Ranker, dict[str, Any]]:
    knobs = retrieval_settings(settings, config, depth, rerank_depth)
    deps = ChannelDeps(embedder=store.embedder, vectors=store.vectors, keywords=store.keywords)
    channels = [CHANNELS.get(name)(deps) for name in knobs.channels]
    pipeline = RetrievalPipeline(channels, store.catalog, reranker if config.rerank else PassthroughReranker(), knobs)
    fuse = FUSIONS.get(knobs.fusion)

    def rank(query: str) -> tuple[list[str], dict[str, float]]:
        result = pipeline.retrieve(query)
        if result.degraded:
            raise EvalError(f"{config.name}: degraded retrieval for {query!r}: {'; '.join(result.degraded)}")
        docs = [c.chunk.doc_id for c in result.candidates]
        if config.rerank:  # below the reranked head, the fused order continues (recall@100 needs depth)
            docs += [
                doc_of_chunk_id(c.chunk_id) for c in fuse({r.channel: r.hits for r in result.channel_results}, knobs)
            ]
        return docs, result.timings

    used = knobs.model_dump() | {"reranker": reranker.name if config.rerank else "none"}
    return rank, used


def make_reranker(settings: Settings) -> Reranker:
    if settings.rerank.backend == "none":
        raise EvalError(
            "a +rerank configuration needs a reranker: set RAGAPP_RERANK__BACKEND (and RAGAPP_RERANK__MODEL)."
        )
    load_builtins()
    return RERANKERS.get(settings.rerank.backend)(settings)


class MemoEmbedder:
    """Embeds each distinct question once per run. The quality pass runs every configuration over every query,
    and the query embedding does not change between configurations; latency is timed without it."""

    def __init__(self, embedder: Embedder) -> None:
        self.name = embedder.name
        self._embedder = embedder
        self._memo: dict[str, np.ndarray] = {}

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            self._memo.update(zip(missing, self._embedder.embed_queries(missing), strict=True))
        return np.stack([self._memo[t] for t in texts])

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embedder.embed_passages(texts)


def run_config(
    name: str,
    ranker: Ranker,
    dataset: BeirDataset,
    settings_used: dict[str, Any],
    timed_ranker: Ranker | None = None,
    timed_queries: int | None = None,
) -> ConfigResult:
    """Score ``ranker`` on every query; time ``timed_ranker`` (default: the same) on the first ``timed_queries``."""
    per_query: dict[str, list[str]] = {}
    for query in tqdm(dataset.queries, desc=name, unit="q", leave=False):
        ranked, _ = ranker(query.text)
        per_query[query.query_id] = list(dict.fromkeys(ranked))[:100]
    latency, stage_ms = time_ranker(timed_ranker or ranker, [q.text for q in dataset.queries[:timed_queries]])
    return ConfigResult(name, score(per_query, dataset), latency, stage_ms, settings_used, per_query)


def time_ranker(ranker: Ranker, queries: Sequence[str]) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """Latency percentiles per query and per stage, in milliseconds."""
    ranker(queries[0] if queries else "warm up")  # load models outside the timing
    latencies: list[float] = []
    stages: dict[str, list[float]] = {}
    for text in queries:
        start = time.perf_counter()
        _, timings = ranker(text)
        latencies.append(time.perf_counter() - start)
        for stage, seconds in timings.items():
            stages.setdefault(stage, []).append(seconds)
    return percentiles(latencies), {stage: percentiles(values) for stage, values in sorted(stages.items())}


def score(per_query: dict[str, list[str]], dataset: BeirDataset) -> dict[str, float]:
    """Mean metrics over the queries; multi-hop sets (some query with 2+ relevant docs) also get all-found@k."""
    rows: dict[str, list[float]] = {"ndcg@10": [], "recall@10": [], "recall@100": [], "mrr@10": []}
    multi_hop = any(sum(1 for g in q.values() if g > 0) >= 2 for q in dataset.qrels.values())
    if multi_hop:
        rows |= {"all_found@5": [], "all_found@10": []}
    for query in dataset.queries:
        ranked, qrels = per_query.get(query.query_id, []), dataset.qrels[query.query_id]
        rows["ndcg@10"].append(ndcg_at_k(ranked, qrels, 10))
        rows["recall@10"].append(recall_at_k(ranked, qrels, 10))
        rows["recall@100"].append(recall_at_k(ranked, qrels, 100))
        rows["mrr@10"].append(mrr_at_k(ranked, qrels, 10))
        if multi_hop:
            rows["all_found@5"].append(float(all_found_at_k(ranked, qrels, 5)))
            rows["all_found@10"].append(float(all_found_at_k(ranked, qrels, 10)))
    return {name: round(statistics.fmean(values), 4) if values else 0.0 for name, values in rows.items()}


def percentiles(seconds: Sequence[float]) -> dict[str, float]:
    if not seconds:
        return {"p50": 0.0, "p95": 0.0}
    ordered = sorted(seconds)

    def pick(q: float) -> float:  # nearest rank
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000

    return {"p50": round(pick(0.50), 2), "p95": round(pick(0.95), 2)}
