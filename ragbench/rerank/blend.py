"""How much to trust the reranker: nDCG@10 of blends of the fused and the reranker's scores.

    .venv/bin/python -m ragbench.rerank.blend --cache /work/evalcache --limit 200

For each set, each question's top-20 fused candidates (the app's hybrid retrieval) are scored once by the
shipped reranker; then, for each weight w, candidates are ordered as the app orders them with
``RAGAPP_RETRIEVAL__RERANK_WEIGHT=w`` ((1 - w) x fused score + w x rerank score, both standardised over the
question's candidates: ``blend_order``). Prints nDCG@10 and the share of questions with every relevant
document in the top 5 / top 10 (HotpotQA's "both supports"), per set and weight. HotpotQA and xquad-zh chose the
default; SciFact is reported, never tuned on (it stays a zero-shot test).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ragapp.config import Settings
from ragapp.engine.build import load_builtins
from ragapp.rerank.base import RERANKERS, PassthroughReranker
from ragapp.retrieval.channels import CHANNELS, ChannelDeps
from ragapp.retrieval.pipeline import RetrievalPipeline, blend_order
from ragapp.testcases.metrics import all_found_at_k, ndcg_at_k
from ragbench.eval.beir import load_beir
from ragbench.eval.corpus import build_index

WEIGHTS = [0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--data", type=Path, default=Path("../shared/data"))
    p.add_argument("--cache", type=Path, default=Path(".cache/eval"))
    p.add_argument("--limit", type=int, default=200)
    p.add_argument("--output", type=Path, default=Path("results/rerank/blend.json"))
    args = p.parse_args()
    settings = Settings()
    load_builtins()
    reranker = RERANKERS.get("builtin")(settings)
    sets = [
        ("hotpotqa-dev200", args.data / "hotpotqa-dev200", None),
        ("xquad-zh", args.data / "xquad/zh", None),
        ("scifact", args.data / "scifact", None),
    ]
    out = {}
    for label, folder, corpus in sets:
        data = load_beir(folder, "test", corpus)
        queries = data.queries[: args.limit]
        store, _ = build_index(data.corpus, folder / "corpus.jsonl", settings, args.cache, folder.name)
        deps = ChannelDeps(embedder=store.embedder, vectors=store.vectors, keywords=store.keywords)
        knobs = settings.retrieval.model_copy(update={"recall_budget": 100, "candidate_limit": 20, "cache_size": 0})
        pipeline = RetrievalPipeline(
            [CHANNELS.get(n)(deps) for n in knobs.channels], store.catalog, PassthroughReranker(), knobs
        )
        rows = []
        for i, q in enumerate(queries):
            result = pipeline.retrieve(q.text)
            fused = list(result.candidates)
            ranked = reranker.rerank(q.text, fused)
            rows.append((q.query_id, fused, ranked))
            if i % 50 == 0:
                print(label, i, file=sys.stderr)
        scores: dict[str, dict[str, float]] = {}
        for w in WEIGHTS:
            figures = {"ndcg@10": 0.0, "all_found@5": 0.0, "all_found@10": 0.0}
            for qid, fused, ranked in rows:
                docs = list(dict.fromkeys(c.chunk.doc_id for c in blend_order(fused, ranked, w)))
                figures["ndcg@10"] += ndcg_at_k(docs, data.qrels[qid], 10)
                figures["all_found@5"] += all_found_at_k(docs, data.qrels[qid], 5)
                figures["all_found@10"] += all_found_at_k(docs, data.qrels[qid], 10)
            scores[str(w)] = {k: round(v / len(rows), 4) for k, v in figures.items()}
        out[label] = {"queries": len(rows), "top20": scores}
        print(label, json.dumps(scores), flush=True)
        pipeline.close()
        store.catalog.close()
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
