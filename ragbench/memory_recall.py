"""How well a similarity threshold recalls a user's memories for their questions (``memory.min_similarity``).

Reads a set of memories and questions, each question naming the memories it should recall
(data/eval/memory/recall.yaml), embeds both with the app's embedder (memories as passages, questions as queries,
as ``ragapp.engine.memories`` does) and, for each threshold, counts per question the memories recalled (at
most ``--top`` of the best above it, as the app keeps at most ``memory.max_recalled``): recall (of the memories
that should come), precision (of those that came) and how many questions that should recall nothing recalled
something. The threshold is chosen on dev (best F1, ties to the higher) and reported on test.

``--cost N`` measures instead what recalling costs a question (``Memories.recall`` on real stores and Chroma in
a temporary folder): N rounds, each timing a user with no memory, one with the set's eight, and the question's
embedding alone (what the vector search pays anyway), interleaved; on a busy machine read the ratio.

    .venv/bin/python -m ragbench.memory_recall [data/eval/memory/recall.yaml] [--top 3]
    .venv/bin/python -m ragbench.memory_recall --cost 30
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
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


def cost(data: dict[str, Any], rounds: int) -> dict[str, Any]:
    """Milliseconds ``Memories.recall`` takes for a user with none and one with the set's memories (medians)."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    from ragapp.engine.memories import Memories
    from ragapp.store.memories import MemoryStore
    from ragapp.store.memory_vectors import MemoryVectors

    settings = Settings()
    embedder = load_embedder(settings)
    with tempfile.TemporaryDirectory() as folder:
        client = chromadb.PersistentClient(path=folder, settings=ChromaSettings(anonymized_telemetry=False))
        store = MemoryStore(Path(folder) / "memories.sqlite3").start()
        memories = Memories(settings, store, MemoryVectors(client, embedder.name), embedder)
        for text in data["memories"].values():
            memories.add("user:many", text, "said")
        questions = [r["question"] for r in data["dev"] + data["test"]]
        memories.recall("user:many", "warm up")  # the model loaded, Chroma's first query paid
        timings: dict[str, list[float]] = {"user:none": [], "user:many": [], "embed:only": []}
        for n in range(rounds):
            question = questions[n % len(questions)]
            for owner in timings:
                start = time.perf_counter()
                if owner == "embed:only":
                    embedder.embed_queries([question])
                else:
                    memories.recall(owner, question)
                timings[owner].append((time.perf_counter() - start) * 1000)
        store.close()
    out: dict[str, Any] = {key.split(":")[1] + "_ms": round(statistics.median(t), 2) for key, t in timings.items()}
    out["many_over_embedding"] = round(out["many_ms"] / out["only_ms"], 2) if out["only_ms"] else None
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("set", nargs="?", type=Path, default=SET)
    parser.add_argument("--top", type=int, default=3, help="memories recalled at most (memory.max_recalled)")
    parser.add_argument("--cost", type=int, default=0, metavar="N", help="time recall instead, N rounds")
    args = parser.parse_args()
    data = yaml.safe_load(args.set.read_text("utf-8"))
    if args.cost:
        print(json.dumps({"rounds": args.cost, **cost(data, args.cost)}, indent=1))
        return
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
