"""``python -m ragbench.bench [scale]``: ingestion throughput, query latency, memory and disk at growing corpus
sizes. ``python -m ragbench.bench answer`` times an answer's stages; ``... load`` several users at once.

    python -m ragbench.bench --dataset ../shared/data/scifact --sizes 1000,5000,25000 --queries 200 \\
        --cache .cache/bench --compare-llamaindex --output results/bench.json

Prints a table and writes JSON. Each size is indexed from scratch into a fresh temporary store with the
app's parts (parser, chunker, Chroma, catalog, BM25) and then queried through the real retrieval pipeline.
Embedding is measured once, on the first size's unique chunks; larger sizes reuse perturbed copies of
those vectors and extrapolate the embedding time (see ``ragbench/bench/corpus.py``).
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import platform
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragapp.config import REPO_ROOT, Settings
from ragapp.core.types import Chunk
from ragapp.models.embedders import Embedder, load_embedder
from ragbench.bench.corpus import BenchCorpus, BenchError, EmbedSample, embed_sample, plan_corpus, sample_chunks
from ragbench.bench.corpus import vectors_for as corpus_vectors
from ragbench.bench.measure import (
    IngestTimes,
    disk_mb,
    ingest,
    open_bench_store,
    peak_rss_mb,
    reset_peak_rss,
    rss_mb,
    time_queries,
)
from ragbench.bench.report import render_table
from ragbench.cli import run_command, write_json
from ragbench.eval.beir import load_beir

log = logging.getLogger("ragbench.bench")

DEFAULT_DATASET = REPO_ROOT.parent / "shared" / "data" / "scifact"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", type=Path, default=DEFAULT_DATASET, help="BEIR folder (default: %(default)s).")
    p.add_argument("--split", default="test", help="qrels split whose queries are asked (default: test).")
    p.add_argument("--sizes", default="1000,5000,25000", help="corpus sizes in chunks (default: %(default)s).")
    p.add_argument("--queries", type=int, default=200, help="queries timed per size (default: %(default)s).")
    p.add_argument(
        "--embed-sample", type=int, help="chunks whose embedding is measured (default: all of the first size)."
    )
    p.add_argument("--cache", type=Path, help="keep the embed sample's vectors here and reuse them next time.")
    p.add_argument("--output", type=Path, help="write the results as JSON here.")
    p.add_argument(
        "--compare-llamaindex",
        action="store_true",
        help="also time LlamaIndex's default VectorStoreIndex build over the embed sample.",
    )
    p.epilog = "App settings (embedder, chunking, retrieval, reranker) come from RAGAPP_* variables as usual."
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["answer"]:  # where an answer's seconds go (ragbench/bench/answer.py)
        from ragbench.bench import answer

        return answer.main(argv[1:])
    if argv[:1] == ["load"]:  # several people asking the running app at once (ragbench/bench/load.py)
        import ragbench.bench.load as load_bench

        return load_bench.main(argv[1:])
    args = _parser().parse_args(argv)

    def measure(args: argparse.Namespace) -> int:
        logging.getLogger("ragbench.bench").setLevel(logging.INFO)
        payload = run(args) | {"command": " ".join(["python -m ragbench.bench", *argv])}
        sys.stdout.write(render_table(payload) + "\n")
        if args.output:
            write_json(args.output, payload)
        return 0

    return run_command(measure, args)


def _sizes(text: str) -> list[int]:
    try:
        sizes = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise BenchError(f"--sizes {text!r}: give chunk counts separated by commas, e.g. 1000,5000,25000.") from None
    if not sizes or sizes[0] < 1:
        raise BenchError(f"--sizes {text!r}: give at least one chunk count of 1 or more.")
    return sizes


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Measure every size; returns the JSON payload."""
    settings = Settings()
    sizes = _sizes(args.sizes)
    if args.queries < 1:
        raise BenchError("--queries must be 1 or more.")
    load_average = os.getloadavg()
    dataset = load_beir(args.dataset, args.split)
    questions = [q.text for q in dataset.queries]
    if not questions:
        raise BenchError(f"{args.dataset} has no queries judged in the {args.split!r} split.")
    corpus = plan_corpus(dataset.corpus, settings, sizes[-1])
    embedder = load_embedder(settings)
    documents, chunks = sample_chunks(corpus, settings, args.embed_sample or sizes[0])
    sample = embed_sample(documents, chunks, embedder, settings, args.cache)
    log.info("embed sample: %d chunks, %.1f chunks/s", sample.chunks, sample.chunks_per_s)

    bench = _Bench(corpus, sample, embedder, settings, questions, Path(tempfile.mkdtemp(prefix="ragapp-bench-")))
    try:
        bench.warm_up()
        results = []
        for target in sizes:
            log.info("size %d: indexing and querying", target)
            results.append(bench.measure_size(target, args.queries))
        compare = bench.compare(chunks, results[0]) if args.compare_llamaindex else None
    finally:
        shutil.rmtree(bench.work, ignore_errors=True)

    cached = ", cached from an earlier run" if sample.cached else ""
    return {
        "dataset": args.dataset.name,
        "dataset_documents": len(dataset.corpus),
        "dataset_chunks": corpus.unique_chunks,
        "embedder": embedder.name,
        "machine": _machine(load_average),
        "settings": {
            "chunk_size": settings.ingest.chunk_size,
            "chunk_overlap": settings.ingest.chunk_overlap,
            "embedding_batch_size": settings.embedding.batch_size,
            "embedding_threads": settings.embedding.threads,
            "retrieval": settings.retrieval.model_dump() | {"cache_size": 0},
            "reranker": settings.rerank.backend,
        },
        "embed_sample": {
            "documents": sample.documents,
            "chunks": sample.chunks,
            "seconds": round(sample.seconds, 3),
            "chunks_per_s": round(sample.chunks_per_s, 2),
            "batch_size": sample.batch_size,
            "cached": sample.cached,
        },
        "note": f"embed throughput measured on {sample.chunks:,} unique chunks ({sample.chunks_per_s:.1f} chunks/s"
        f"{cached}); larger sizes reuse perturbed vectors and extrapolate embed time at that rate. Parse times "
        "parse_file on .txt files; each document is written on its own, as an upload is.",
        "sizes": results,
        "llamaindex": compare,
    }


@dataclass(frozen=True)
class _Bench:
    """What every size of a run shares: the corpus, the embed sample, the embedder, the settings, the questions
    and the work folder."""

    corpus: BenchCorpus
    sample: EmbedSample
    embedder: Embedder
    settings: Settings
    questions: list[str]
    work: Path

    def measure_size(self, target: int, queries: int) -> dict[str, Any]:
        docs = self.corpus.take(target)
        vectors = corpus_vectors(docs, self.corpus, self.sample, seed=target)
        folder = self.work / f"size-{target}"
        gc.collect()
        rss_before = rss_mb()
        per_size = reset_peak_rss()
        store = open_bench_store(folder / "store", self.embedder)
        try:
            times = ingest(store, docs, vectors, folder / "files", self.settings)
            _fill_embed(times, self.sample, exact=times.chunks == self.sample.chunks and all(d.copy == 0 for d in docs))
            timed = time_queries(store, self.settings, self.questions, queries)
            peak = peak_rss_mb()
        finally:
            store.catalog.close()
        disk = disk_mb(folder / "store")
        shutil.rmtree(folder / "files", ignore_errors=True)
        memory = {"peak_rss": peak, "rss_before": rss_before, "rss_after": rss_mb(), "peak_is_per_size": per_size}
        return {
            "target": target,
            "copied_documents": sum(1 for d in docs if d.copy > 0),
            "ingest": times.as_json(),
            "query": timed.as_json(),
            "memory_mb": memory,
            "disk_mb": disk,
        }

    def warm_up(self) -> None:
        """Index one document and ask one question, untimed: imports and first-use costs (bm25s, the tokenizer,
        Chroma's client) would otherwise land in the first size's figures."""
        docs, folder = self.corpus.docs[:1], self.work / "warm-up"
        store = open_bench_store(folder / "store", self.embedder)
        try:
            vectors = corpus_vectors(docs, self.corpus, self.sample, seed=0)
            ingest(store, docs, vectors, folder / "files", self.settings)
            time_queries(store, self.settings, self.questions, 1)
        finally:
            store.catalog.close()
        shutil.rmtree(folder, ignore_errors=True)

    def compare(self, chunks: list[Chunk], first: dict[str, Any]) -> dict[str, Any]:
        """Our embed + index of the embed sample against LlamaIndex's default in-memory build of the same chunks."""
        from ragbench.bench.llamaindex_compare import time_llamaindex_build

        sample = self.sample
        if first["ingest"]["embed_measured"]:  # the first size is the sample: its index time is ours
            index_s = first["ingest"]["seconds"]["index"]
        else:
            docs = self.corpus.docs[: sample.documents]  # the sample: the first unique documents, in order
            store = open_bench_store(self.work / "sample" / "store", self.embedder)
            try:
                times = ingest(store, docs, sample.vectors, self.work / "sample" / "files", self.settings)
            finally:
                store.catalog.close()
            index_s = times.index
        ours_s = sample.seconds + index_s
        ours = {
            "chunks": sample.chunks,
            "seconds": round(ours_s, 3),
            "embed_seconds": round(sample.seconds, 3),
            "index_seconds": round(index_s, 3),
            "embed_batch_size": sample.batch_size,
            "embed_cached": sample.cached,
            "chunks_per_s": round(sample.chunks / ours_s, 2),
        }
        theirs = time_llamaindex_build(chunks, self.embedder)
        return {"ragapp": ours, "llamaindex": theirs, "ratio": round(theirs["seconds"] / ours_s, 3)}


def _fill_embed(times: IngestTimes, sample: EmbedSample, exact: bool) -> None:
    """The embed stage: the sample's measured seconds, scaled to this size's chunks when it is not the sample."""
    times.seconds["embed"] = sample.seconds * times.chunks / sample.chunks
    times.embed_measured = exact


def _machine(load_start: tuple[float, float, float]) -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024**3, 1),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "accelerator": "none (the embedder and every index run on the CPU)",
        "load_average_start": [round(x, 2) for x in load_start],
        "load_average_end": [round(x, 2) for x in os.getloadavg()],
    }


if __name__ == "__main__":
    raise SystemExit(main())
