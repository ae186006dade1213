"""Timed ingestion and retrieval with the app's own parts, plus memory and disk figures.

Ingestion follows the upload path (``Ingestor``): each document is parsed from a .txt file, chunked, and
written on its own (one Chroma upsert, one catalog transaction, with the app's duplicate and same-name
lookups), and the BM25 index is rebuilt once at the end, as after a batch of uploads.
"""

from __future__ import annotations

import logging
import resource
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from ragapp.config import Settings
from ragapp.core.lang import language_of
from ragapp.core.types import DEFAULT_KB
from ragapp.engine.build import load_builtins
from ragapp.ingest.chunking import chunk_document
from ragapp.ingest.parsing import parse_file
from ragapp.ingest.pipeline import KnowledgeStore
from ragapp.models.embedders import Embedder
from ragapp.rerank.base import RERANKERS
from ragapp.retrieval.channels import CHANNELS, ChannelDeps
from ragapp.retrieval.pipeline import RetrievalPipeline
from ragbench.bench.corpus import BenchDoc, BenchError
from ragbench.eval.corpus import content_hash, passage_record
from ragbench.eval.runner import percentiles

log = logging.getLogger(__name__)

STAGES = ("parse", "chunk", "embed", "index")
INDEX_PARTS = ("chroma", "catalog", "bm25")


@dataclass
class IngestTimes:
    documents: int
    chunks: int
    seconds: dict[str, float] = field(default_factory=dict)  # parse, chunk, embed, chroma, catalog, bm25
    embed_measured: bool = False  # False: embed seconds extrapolated from the embed sample's rate

    @property
    def index(self) -> float:
        return sum(self.seconds[p] for p in INDEX_PARTS)

    def stage(self, name: str) -> float:
        return self.index if name == "index" else self.seconds[name]

    @property
    def total(self) -> float:
        return sum(self.stage(s) for s in STAGES)

    def as_json(self) -> dict[str, Any]:
        total = self.total
        stages = {s: round(self.stage(s), 4) for s in STAGES}
        without_embed = total - self.stage("embed")
        return {
            "documents": self.documents,
            "chunks": self.chunks,
            "seconds": stages | {"total": round(total, 4)},
            "share": {s: round(self.stage(s) / total, 4) if total else 0.0 for s in STAGES},
            "index_seconds": {p: round(self.seconds[p], 4) for p in INDEX_PARTS},
            "embed_measured": self.embed_measured,
            "chunks_per_s": round(self.chunks / total, 2) if total else 0.0,
            "chunks_per_s_without_embed": round(self.chunks / without_embed, 2) if without_embed else 0.0,
        }


def open_bench_store(folder: Path, embedder: Embedder) -> KnowledgeStore:
    """A fresh store under ``folder`` sharing the one loaded embedder (``open_store`` would load another)."""
    return KnowledgeStore.open(folder, embedder)


def ingest(
    store: KnowledgeStore, docs: Sequence[BenchDoc], vectors: np.ndarray, files: Path, settings: Settings
) -> IngestTimes:
    """Parse, chunk and index ``docs`` into ``store``; ``vectors`` stand in for the embedding (one row per
    chunk, in order), so the embed stage is left for the caller to fill in."""
    files.mkdir(parents=True, exist_ok=True)
    paths = [files / f"{i:07d}.txt" for i in range(len(docs))]
    for path, doc in zip(paths, docs, strict=True):
        path.write_text(doc.passage.text, "utf-8")
    names = [f"{d.passage.title or d.passage.doc_id}.txt" for d in docs]
    seconds: dict[str, float] = {}

    start = time.perf_counter()
    parsed = [
        parse_file(p, n) for p, n in tqdm(zip(paths, names, strict=True), desc="parse", total=len(docs), leave=False)
    ]
    seconds["parse"] = time.perf_counter() - start

    size, overlap = settings.ingest.chunk_size, settings.ingest.chunk_overlap
    start = time.perf_counter()
    chunked = [
        chunk_document(p, d.passage.doc_id, size, overlap)
        for p, d in tqdm(zip(parsed, docs, strict=True), desc="chunk", total=len(docs), leave=False)
    ]
    seconds["chunk"] = time.perf_counter() - start
    chunks = sum(len(c) for c in chunked)
    if chunks != len(vectors):
        raise BenchError(f"chunking gave {chunks} chunks where planning counted {len(vectors)}.")

    catalog, row = store.catalog, 0
    seconds["chroma"] = seconds["catalog"] = 0.0
    for doc, name, doc_chunks in tqdm(
        zip(docs, names, chunked, strict=True), desc="index", total=len(docs), leave=False
    ):
        n = len(doc_chunks)
        start = time.perf_counter()
        store.vectors.add(
            [c.chunk_id for c in doc_chunks],
            vectors[row : row + n],
            [doc.passage.doc_id] * n,
            [language_of(c.text) for c in doc_chunks],
            [DEFAULT_KB] * n,
        )
        written = time.perf_counter()
        seconds["chroma"] += written - start
        # The app hashes the file's bytes; copies share their bytes, so their id goes into the hash.
        if catalog.document_by_hash(content_hash(doc.passage)) is not None:
            raise BenchError(f"document {doc.passage.doc_id} is in the corpus twice.")
        catalog.documents_named(name, DEFAULT_KB)  # the upload path's same-name check
        with catalog.transaction() as conn:
            catalog.add_document(conn, passage_record(doc.passage, name, n), doc_chunks)
        seconds["catalog"] += time.perf_counter() - written
        row += n

    start = time.perf_counter()
    store.refresh_keywords()
    seconds["bm25"] = time.perf_counter() - start
    return IngestTimes(documents=len(docs), chunks=chunks, seconds=seconds)


@dataclass(frozen=True)
class QueryTimes:
    queries: int
    reranker: str  # "off" when none is configured
    stage_ms: dict[str, dict[str, float]]  # the pipeline's timing keys, plus "total"
    degraded: int  # queries where a channel failed or timed out

    def as_json(self) -> dict[str, Any]:
        return {"queries": self.queries, "reranker": self.reranker, "degraded": self.degraded, "ms": self.stage_ms}


def time_queries(store: KnowledgeStore, settings: Settings, questions: Sequence[str], n: int) -> QueryTimes:
    """Run ``n`` questions (cycling through ``questions``) through the real ``RetrievalPipeline``, uncached."""
    knobs = settings.retrieval.model_copy(update={"cache_size": 0})  # every query is timed for real
    deps = ChannelDeps(embedder=store.embedder, vectors=store.vectors, keywords=store.keywords)
    load_builtins()  # the rerankers register themselves on import, as the engine's build does
    reranker = RERANKERS.get(settings.rerank.backend)(settings)
    pipeline = RetrievalPipeline([CHANNELS.get(c)(deps) for c in knobs.channels], store.catalog, reranker, knobs)
    pipeline.retrieve(questions[0])  # warm up: models and indexes load outside the timing
    stages: dict[str, list[float]] = {}
    degraded = 0
    for i in tqdm(range(n), desc="queries", unit="q", leave=False):
        start = time.perf_counter()
        result = pipeline.retrieve(questions[i % len(questions)])
        total = time.perf_counter() - start
        degraded += bool(result.degraded)
        for stage, value in result.timings.items():
            if stage != "rerank" or reranker.enabled:  # a pass-through "rerank" costs nothing worth a row
                stages.setdefault(stage, []).append(value)
        stages.setdefault("total", []).append(total)
    if degraded:
        log.warning("%d of %d queries ran degraded (a channel failed or timed out)", degraded, n)
    return QueryTimes(
        n, reranker.name if reranker.enabled else "off", {k: percentiles(v) for k, v in stages.items()}, degraded
    )


def reset_peak_rss() -> bool:
    """Start a new peak-RSS window (Linux: ``clear_refs`` 5 resets the high-water mark getrusage reports)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def peak_rss_mb() -> float:
    """Peak resident memory of this process (since the last reset), from ``getrusage``'s ``ru_maxrss``."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)  # bytes on macOS, KiB on Linux


def rss_mb() -> float | None:
    """Current resident memory (Linux only; None elsewhere)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


def disk_mb(store_dir: Path) -> dict[str, float]:
    """Size on disk of the store's parts: Chroma, BM25 and the SQLite catalog (with its journal files)."""

    def size(paths: Sequence[Path]) -> float:
        files = [f for p in paths for f in ([p] if p.is_file() else p.rglob("*")) if f.is_file()]
        return sum(f.stat().st_size for f in files) / 1e6

    parts = {
        "chroma": size([store_dir / "chroma"]),
        "bm25": size([store_dir / "bm25"]),
        "catalog": size(sorted(store_dir.glob("catalog.sqlite3*"))),
    }
    return {k: round(v, 2) for k, v in parts.items()} | {"total": round(sum(parts.values()), 2)}
