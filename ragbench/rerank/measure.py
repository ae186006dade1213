"""``python -m ragbench.rerank.measure``: the shipped reranker's speed and score calibration.

    python -m ragbench.rerank.measure --output results/rerank/measure.json

- Latency: p50/p95 of reranking 10, 20 and 50 candidates (chunks of the demo documents, the app's chunk size)
  for English and Chinese questions, with the int8 model the app runs and the fp32 one it is rebuilt from.
- Calibration: scores of the positives and hard negatives of the training file's held-out slice (the same
  seeded split the training command used, never trained on), and for each threshold the share of relevant
  passages kept and of hard negatives dropped. ``--keep`` (default 0.9) picks the default ``min_rerank_score``:
  the highest threshold on a 0.05 grid that keeps that share of relevant passages. Off-topic questions over the
  demo documents show what the threshold does when nothing is relevant.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from ragapp.config import REPO_ROOT, Settings
from ragapp.rerank.builtin import CompactReranker
from ragapp.rerank.compact import SHIPPED_DIR
from ragbench.cli import run_command
from ragbench.rerank.train import GROUP, groups, load_rows, split_rows

QUESTIONS = {
    "en": ["How do I clean the cliff sensors?", "What does the warranty cover?", "Which firmware added pet mode?"],
    "zh": ["如何清洁悬崖传感器？", "保修范围包括哪些？", "退货需要几天？"],
}
OFF_TOPIC = ["What is the capital of France?", "Who wrote Hamlet?", "法国的首都是哪里？", "今天股市怎么样？"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.rerank.measure", description=__doc__.split("\n\n")[0])
    p.add_argument("--model", type=Path, default=SHIPPED_DIR, help="folder of compact weights")
    p.add_argument("--data", type=Path, default=Path("../shared/data/train/reranker-pairs.jsonl.gz"))
    p.add_argument("--repeats", type=int, default=20, help="timed runs per candidate count and language")
    p.add_argument("--keep", type=float, default=0.9, help="share of relevant passages the threshold must keep")
    p.add_argument("--max-length", type=int, help="tokens per pair (default: the app's setting)")
    p.add_argument("--output", type=Path)
    return p


def demo_chunks(size: int) -> dict[str, list[str]]:
    """Passages of the demo documents, about ``size`` characters each, by language."""
    from ragapp.core.lang import language_of

    out: dict[str, list[str]] = {"en": [], "zh": []}
    for path in sorted((REPO_ROOT / "data" / "demo").glob("*")):
        if path.suffix not in {".md", ".txt"}:
            continue
        text = " ".join(path.read_text("utf-8").split())
        for start in range(0, len(text), size):
            piece = text[start : start + size]
            if len(piece) > size // 2:
                out[language_of(piece)].append(piece)
    return out


def latency(reranker: CompactReranker, chunks: dict[str, list[str]], repeats: int) -> dict[str, Any]:
    reranker.load()
    out: dict[str, Any] = {}
    for n in (10, 20, 50):
        for lang, questions in QUESTIONS.items():
            pool = (chunks[lang] * (1 + n // max(1, len(chunks[lang]))))[:n]
            times = []
            for i in range(repeats + 1):
                start = time.perf_counter()
                reranker.score(questions[i % len(questions)], pool)
                if i:  # the first run warms caches
                    times.append((time.perf_counter() - start) * 1000)
            times.sort()
            out[f"{n} {lang}"] = {
                "p50_ms": round(statistics.median(times), 1),
                "p95_ms": round(times[min(len(times) - 1, int(0.95 * len(times)))], 1),
            }
    return out


def calibration(reranker: CompactReranker, data: Path, keep: float) -> dict[str, Any]:
    summary = json.loads((reranker.folder / "training.json").read_text("utf-8"))
    s = summary["settings"]
    rows = load_rows(data)
    _, held = split_rows(rows, s["holdout"], s["queries"], s["seed"])
    triples = groups(held, random.Random(s["seed"] + 1), held)  # the groups training evaluated on
    positives, negatives = [], []
    for start in range(0, len(triples), GROUP):
        query = triples[start][0]
        scores = reranker.score(query, [p for _, p, _ in triples[start : start + GROUP]])
        positives.append(scores[0])
        negatives.extend(scores[1:])
    grid = [round(0.05 * i, 2) for i in range(1, 20)]
    table = [
        {
            "threshold": t,
            "relevant_kept": round(sum(p >= t for p in positives) / len(positives), 4),
            "hard_negatives_dropped": round(sum(n < t for n in negatives) / len(negatives), 4),
        }
        for t in grid
    ]
    chosen = max((r["threshold"] for r in table if r["relevant_kept"] >= keep), default=grid[0])
    return {
        "held_out_questions": len(positives),
        "keep_target": keep,
        "chosen_min_rerank_score": chosen,
        "positive_median": round(statistics.median(positives), 4),
        "hard_negative_median": round(statistics.median(negatives), 4),
        "table": table,
    }


def off_topic(reranker: CompactReranker, chunks: dict[str, list[str]]) -> dict[str, float]:
    """The best score any demo passage in the question's language gets for an off-topic question."""
    from ragapp.core.lang import language_of

    return {q: round(max(reranker.score(q, chunks[language_of(q)])), 4) for q in OFF_TOPIC}


def main(argv: list[str] | None = None) -> int:
    return run_command(_run, _parser().parse_args(argv))


def _run(args: argparse.Namespace) -> int:
    settings = Settings()
    max_length = args.max_length or settings.rerank.max_length
    chunks = demo_chunks(settings.ingest.chunk_size)
    int8 = CompactReranker(args.model, max_length, settings.rerank.batch_size, quantize=True)
    fp32 = CompactReranker(args.model, max_length, settings.rerank.batch_size, quantize=False)
    print("timing the int8 model…", file=sys.stderr)
    result: dict[str, Any] = {"model": str(args.model), "max_length": max_length}
    result["latency_int8"] = latency(int8, chunks, args.repeats)
    print("timing the fp32 model…", file=sys.stderr)
    result["latency_fp32"] = latency(fp32, chunks, args.repeats)
    print("calibrating on the held-out slice…", file=sys.stderr)
    result["calibration_int8"] = calibration(int8, args.data, args.keep)
    result["off_topic_best_score"] = off_topic(int8, chunks)
    text = json.dumps(result, indent=2, ensure_ascii=False)
    print(text)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
