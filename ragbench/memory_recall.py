"""How well a similarity threshold recalls a user's memories for their questions (``memory.min_similarity``).

Reads a set of memories and questions, each question naming the memories it should recall
(data/eval/memory/recall.yaml), embeds both with the app's embedder (memories as passages, questions as queries,
as ``ragapp.engine.memories`` does) and, for each threshold, counts per question the memories recalled (at
most ``--top`` of the best above it, as the app keeps at most ``memory.max_recalled``): recall (of the memories
that should come), precision (of those that came) and how many questions that should recall nothing recalled
something. The threshold is chosen on dev (best F1, ties to the higher) and reported on test.

    .venv/bin/python -m ragbench.memory_recall [data/eval/memory/recall.yaml] [--top 3]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ragapp.config import REPO_ROOT, Settings
from ragapp.models.embedders import load_embedder

SET = REPO_ROOT / "data" / "eval" / "memory" / "recall.yaml"
THRESHOLDS = [round(0.70 + 0.01 * n, 2) for n in range(21)]


def score(similarity: np.ndarray, wanted: list[set[int]], threshold: float, top: int) -> dict[str, Any]:
    """The figures of one threshold over questions whose similarity rows are ``similarity``."""
    hits = wanted_total = recalled_total = stray = 0
    for row, want in zip(similarity, wanted, strict=True):
        best = [int(i) for i in np.argsort(-row)[:top] if row[i] >= threshold]
        hits += len(want & set(best))
        wanted_total += len(want)
        recalled_total += len(best)
        stray += int(not want and bool(best))
    recall = hits / wanted_total if wanted_total else 0.0
    precision = hits / recalled_total if recalled_total else 1.0
    f1 = 2 * recall * precision / (recall + precision) if recall + precision else 0.0
    return {"threshold": threshold, "recall": round(recall, 3), "precision": round(precision, 3),
            "f1": round(f1, 3), "unrelated_with_memory": stray,
            "unrelated": sum(not w for w in wanted)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("set", nargs="?", type=Path, default=SET)
    parser.add_argument("--top", type=int, default=3, help="memories recalled at most (memory.max_recalled)")
    args = parser.parse_args()
    data = yaml.safe_load(args.set.read_text("utf-8"))
    names = list(data["memories"])
    embedder = load_embedder(Settings())
    memories = embedder.embed_passages([data["memories"][n] for n in names])
    splits: dict[str, tuple[np.ndarray, list[set[int]]]] = {}
    for split in ("dev", "test"):
        rows = data[split]
        questions = embedder.embed_queries([r["question"] for r in rows])
        splits[split] = (questions @ memories.T, [{names.index(n) for n in r["recall"]} for r in rows])
    sweep = [score(*splits["dev"], t, args.top) for t in THRESHOLDS]
    chosen = max(sweep, key=lambda s: (s["f1"], s["threshold"]))
    report = {
        "embedder": embedder.name,
        "top": args.top,
        "dev_sweep": sweep,
        "chosen_on_dev": chosen,
        "test_at_chosen": score(*splits["test"], chosen["threshold"], args.top),
    }
    print(json.dumps(report, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
