"""``python -m ragbench.eval``: retrieval quality and latency of the app's configurations on a BEIR folder.

    python -m ragbench.eval --dataset ../shared/data/scifact --split test \\
        --config bm25,vector,hybrid --baseline llamaindex --cache .cache/eval --output results/scifact.json

Prints a table, writes JSON (per configuration: ndcg@10, recall@10, recall@100, mrr@10, latency p50/p95,
per-stage timings and the settings used) and a plotly HTML chart next to it.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from ragapp.config import Settings
from ragapp.rerank.base import PassthroughReranker
from ragbench.cli import run_command, write_json
from ragbench.eval.beir import load_beir
from ragbench.eval.corpus import build_index
from ragbench.eval.report import render_chart, render_table
from ragbench.eval.runner import ConfigResult, MemoEmbedder, make_reranker, parse_config, pipeline_ranker, run_config


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.eval", description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", type=Path, required=True, help="BEIR folder (queries.jsonl, qrels/<split>.tsv).")
    p.add_argument("--split", default="test", help="qrels split to score (default: test).")
    p.add_argument("--config", default="bm25,vector,hybrid", help="comma-separated configurations (see below).")
    p.add_argument("--output", type=Path, help="write results JSON here (and a .html chart next to it).")
    p.add_argument("--cache", type=Path, help="keep the indexed corpus in this folder and reuse it next time.")
    p.add_argument(
        "--baseline", choices=["llamaindex"], help="add LlamaIndex QueryFusionRetriever over the same indexes."
    )
    p.add_argument("--corpus", type=Path, help="take corpus.jsonl from this folder (e.g. zh questions, en corpus).")
    p.add_argument(
        "--query-field", default="text", help="queries.jsonl field (or metadata field) holding the question."
    )
    p.add_argument("--limit", type=int, help="score only the first N queries (quick checks).")
    p.add_argument("--depth", type=int, default=300, help="chunks each channel returns (default 300, for recall@100).")
    p.add_argument(
        "--rerank-depth", type=int, default=50, help="fused candidates the reranker sees in +rerank configs."
    )
    p.add_argument(
        "--latency-queries", type=int, default=200, help="time each configuration on the first N queries (default 200)."
    )
    p.add_argument("--name", help="dataset label in the output (default: folder name, plus the corpus's).")
    p.epilog = (
        "configurations: bm25 (alias keyword), vector, hybrid (the app's fusion), hybrid-rrf, hybrid-minmax, "
        "hybrid-zscore; any of them + '+rerank'. App settings come from RAGAPP_* variables as usual (another "
        "reranker: RAGAPP_RERANK__BACKEND=cross_encoder RAGAPP_RERANK__MODEL=<path or hub id>)."
    )
    return p


def main(argv: list[str] | None = None) -> int:
    return run_command(_run, _parser().parse_args(argv))


def _run(args: argparse.Namespace) -> int:
    settings = Settings()
    configs = [parse_config(name.strip()) for name in args.config.split(",") if name.strip()]
    # Before indexing, which can take minutes: a +rerank config without a reranker fails at once.
    reranker = make_reranker(settings) if any(c.rerank for c in configs) else PassthroughReranker()
    dataset = load_beir(args.dataset, args.split, args.corpus, args.query_field)
    if args.limit:
        dataset = type(dataset)(dataset.name, dataset.corpus, dataset.queries[: args.limit], dataset.qrels)
    corpus_dir = args.corpus or args.dataset
    label = args.name or (args.dataset.name if args.corpus is None else f"{args.dataset.name}->{corpus_dir.name}")
    print(f"{label}: {len(dataset.queries)} queries, {len(dataset.corpus)} documents", file=sys.stderr)
    # Embedding a corpus takes minutes to hours: only when a configuration (or the baseline) searches vectors.
    embed = args.baseline is not None or any("vector" in c.channels for c in configs)
    name = corpus_dir.name.replace("/", "-")
    store, index = build_index(dataset.corpus, corpus_dir / "corpus.jsonl", settings, args.cache, name, embed=embed)
    print(f"index: {index.chunks} chunks in {index.folder} ({'reused' if index.reused else 'built'})", file=sys.stderr)
    # Quality: each question embedded once for all configurations. Latency: timed with the real embedder.
    memo_store = dataclasses.replace(store, embedder=MemoEmbedder(store.embedder))
    results: list[ConfigResult] = []
    for config in configs:
        ranker, used = pipeline_ranker(memo_store, settings, config, args.depth, args.rerank_depth, reranker)
        timed, _ = pipeline_ranker(store, settings, config, args.depth, args.rerank_depth, reranker)
        results.append(run_config(config.name, ranker, dataset, used, timed, args.latency_queries))
    if args.baseline == "llamaindex":
        from ragbench.eval.llamaindex_baseline import llamaindex_rankers

        timed_baselines = llamaindex_rankers(store, settings, args.depth)
        for name, (ranker, used) in llamaindex_rankers(memo_store, settings, args.depth).items():
            results.append(run_config(name, ranker, dataset, used, timed_baselines[name][0], args.latency_queries))
    store.catalog.close()

    print(render_table(label, results))
    if args.output:
        payload: dict[str, Any] = {
            "dataset": label,
            "split": args.split,
            "queries": len(dataset.queries),
            "documents": len(dataset.corpus),
            "chunks": index.chunks,
            "embedder": store.embedder.name,
            "index_seconds": index.seconds,
            "configs": {r.name: r.as_json() for r in results},
        }
        write_json(args.output, payload)
        render_chart(label, results, args.output.with_suffix(".html"))
        print(f"wrote {args.output.with_suffix('.html')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
