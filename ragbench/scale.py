"""How retrieval scales with the corpus: synthetic chunks, no embedding, embedded vs server Chroma and bm25s.

    .venv/bin/python -m ragbench.scale                      # 10k and 100k chunks
    .venv/bin/python -m ragbench.scale --sizes 10000,100000,1000000 --output results/scale.json

Each chunk is a random unit vector of the embedder's dimension and generated text (words drawn from a Zipf
law over a made-up vocabulary, so BM25 sees realistic term frequencies). Every measurement runs in a fresh
process: the vector index is the app's ``ChromaVectorIndex`` (embedded in that process, or on a ``chroma run``
server started for the run, on loopback), the keyword index is the app's ``Bm25Index``. Reported: load time,
query p50/p95 (top 20, unscoped, after a warm-up) and resident memory: the measuring process's growth for the
embedded store and bm25s, the server's own resident memory for the server (plus the client's growth).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

from ragapp.config import REPO_ROOT, Settings, StoreSettings
from ragapp.core.types import Chunk
from ragapp.store.bm25 import Bm25Index
from ragapp.store.vectors import ChromaVectorIndex
from ragcluster.services import ChromaServer

BATCH = 10_000  # chunks generated and written per step (the data never sits in memory all at once)
TOP_K = 20
WARMUP = 10
VOCABULARY = 50_000
WORDS_PER_CHUNK = 80
BACKENDS = ("chroma-embedded", "chroma-server", "bm25s")


def rss_mb(pid: int | None = None) -> float:
    """Resident memory now (MiB), of this process or ``pid``, from /proc."""
    status = Path(f"/proc/{pid or 'self'}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def unit_vectors(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def words(rng: np.random.Generator, n: int) -> list[str]:
    ranks = np.minimum(rng.zipf(1.2, n), VOCABULARY)
    return [_word(int(r)) for r in ranks]


def _word(rank: int) -> str:
    """A pronounceable made-up word, unique per rank (the tokenizer keeps it whole)."""
    syllables = ("ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po")
    out = ""
    while True:
        out += syllables[rank % 10]
        rank //= 10
        if rank == 0:
            return out + "x"


def batches(n: int, dim: int, seed: int = 0) -> Iterator[tuple[list[str], np.ndarray]]:
    """(chunk ids, unit vectors) in steps of ``BATCH``."""
    rng = np.random.default_rng(seed)
    for start in range(0, n, BATCH):
        size = min(BATCH, n - start)
        yield [f"{i // 100:016x}-{i % 100:04d}" for i in range(start, start + size)], unit_vectors(rng, size, dim)


def timed_queries(search: Callable[[int], object], count: int) -> list[float]:
    times = []
    for i in range(count + WARMUP):
        start = time.perf_counter()
        search(i)
        if i >= WARMUP:
            times.append((time.perf_counter() - start) * 1000)
    return times


def percentiles(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "p50_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2),
    }


def measure_vectors(kind: str, n: int, dim: int, queries: int) -> dict[str, Any]:
    """Load ``n`` vectors into embedded or server Chroma and time ``queries`` searches (in a worker process)."""
    folder = Path(tempfile.mkdtemp(prefix="ragapp-scale-"))
    server: ChromaServer | None = None
    try:
        before = rss_mb()
        if kind == "chroma-server":
            server = ChromaServer(folder / "server")
            index = ChromaVectorIndex.remote(StoreSettings(chroma_url=server.url), "synthetic")
        else:
            index = ChromaVectorIndex.embedded(folder / "chroma", "synthetic")
        start = time.perf_counter()
        for ids, vectors in batches(n, dim):
            index.add(ids, vectors, [cid.rsplit("-", 1)[0] for cid in ids], ["en"] * len(ids))
        load_s = time.perf_counter() - start
        probes = unit_vectors(np.random.default_rng(1), 64, dim)
        times = timed_queries(lambda i: index.search(probes[i % len(probes)], TOP_K), queries)
        row: dict[str, Any] = {"backend": kind, "chunks": index.count(), "load_s": round(load_s, 1)}
        row |= percentiles(times)
        row["client_rss_growth_mb"] = round(rss_mb() - before, 1)
        row["server_rss_mb"] = round(rss_mb(server.process.pid), 1) if server is not None else None
        return row
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def measure_keywords(n: int, queries: int) -> dict[str, Any]:
    """Build the app's bm25s index over ``n`` generated chunks and time ``queries`` searches (in a worker)."""
    folder = Path(tempfile.mkdtemp(prefix="ragapp-scale-"))
    try:
        rng = np.random.default_rng(2)
        vocabulary = words(rng, n * WORDS_PER_CHUNK)
        texts = (" ".join(vocabulary[j : j + WORDS_PER_CHUNK]) for j in range(0, len(vocabulary), WORDS_PER_CHUNK))
        chunks = [
            Chunk(f"{i // 100:016x}-{i % 100:04d}", f"{i // 100:016x}", i % 100, text, "synthetic.txt")
            for i, text in enumerate(texts)
        ]
        del vocabulary
        before = rss_mb()
        index = Bm25Index(folder / "bm25").start()
        start = time.perf_counter()
        index.rebuild(chunks, version=1)
        load_s = time.perf_counter() - start
        del chunks
        asked = [" ".join(words(rng, 4)) for _ in range(64)]
        times = timed_queries(lambda i: index.search(asked[i % len(asked)], TOP_K), queries)
        row: dict[str, Any] = {"backend": "bm25s", "chunks": n, "load_s": round(load_s, 1)}
        row |= percentiles(times)
        row["client_rss_growth_mb"] = round(rss_mb() - before, 1)
        row["server_rss_mb"] = None
        return row
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def embedder_dimension() -> int:
    from ragapp.models.embedders import load_embedder

    return int(load_embedder(Settings()).embed_passages(["dimension probe"]).shape[1])


def in_worker(fn: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    """Run one measurement in a fresh process, so its memory is its own."""
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        return pool.submit(fn, *args).result()


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| backend | chunks | load s | p50 ms | p95 ms | client RSS growth MiB | server RSS MiB |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        server = "" if r["server_rss_mb"] is None else f"{r['server_rss_mb']:.0f}"
        lines.append(
            f"| {r['backend']} | {r['chunks']:,} | {r['load_s']} | {r['p50_ms']} | {r['p95_ms']} | "
            f"{r['client_rss_growth_mb']:.0f} | {server} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated chunk counts (1000000 is slow)")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per backend and size")
    parser.add_argument("--dim", type=int, default=0, help="vector dimension (0: the configured embedder's)")
    parser.add_argument("--backends", default=",".join(BACKENDS), help=f"any of {', '.join(BACKENDS)}")
    parser.add_argument("--output", type=Path, default=REPO_ROOT / "results" / "scale.json", help="JSON results")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = sorted(set(backends) - set(BACKENDS))
    if unknown:
        parser.error(f"unknown backends {unknown}: choose from {', '.join(BACKENDS)}")
    dim = args.dim or embedder_dimension()
    rows: list[dict[str, Any]] = []
    for n in sizes:
        for kind in backends:
            if kind == "bm25s":
                row = in_worker(measure_keywords, n, args.queries)
            else:
                row = in_worker(measure_vectors, kind, n, dim, args.queries)
            rows.append(row)
            print(f"{kind} at {n:,}: p50 {row['p50_ms']} ms, p95 {row['p95_ms']} ms", flush=True)
    load = os.getloadavg()
    report = {
        "dim": dim,
        "top_k": TOP_K,
        "queries": args.queries,
        "cpus": os.cpu_count(),
        "load_average_at_end": [round(x, 2) for x in load],
        "peak_rss_mb_of_this_process": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "rows": rows,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n", "utf-8")
    print(table(rows))
    print(f"dimension {dim}, top {TOP_K}, {args.queries} queries each; load average {load[0]:.2f}; wrote {args.output}")


if __name__ == "__main__":
    main()
