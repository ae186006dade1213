"""How well the recall rule finds a user's memories for their questions (``memory.min_similarity``,
``memory.min_question_words``: ``ragapp.qa.memory_recall``).

Reads a set of memories and questions, each question naming the memories it should recall
(data/eval/memory/recall.yaml), embeds both with the app's embedder (memories as passages, questions as queries,
as ``ragapp.engine.memories`` does) and, for each rule, counts per question the memories recalled (at most
``--top`` of the best, as the app keeps at most ``memory.max_recalled``): recall (of the memories that should
come), precision (of those that came) and how many questions that should recall nothing recalled something. The
rule is chosen on dev (best F1; ties to the higher threshold, then more words) and reported on test, beside the
best threshold alone for comparison; ``small_talk_with_memory`` counts the messages of ``SMALL_TALK`` (greetings,
thanks: they name nothing) that recall one of the set's memories under each.

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
from ragapp.qa.memory_recall import RecallRule, recalled

SET = REPO_ROOT / "data" / "eval" / "memory" / "recall.yaml"
THRESHOLDS = [round(0.70 + 0.01 * n, 2) for n in range(21)]
WORDS = [0, 1, 2, 3]
# Messages that name nothing a memory could matter to (none is in the recall set, which holds questions only).
SMALL_TALK = ["hello", "thanks!", "good morning", "Who are you?", "What can you do?", "Tell me a joke", "你好",
              "谢谢", "你是谁？"]  # fmt: skip


def score(
    similarity: np.ndarray, wanted: list[set[int]], rule: RecallRule, top: int, questions: list[str]
) -> dict[str, Any]:
    """The figures of one rule over ``questions`` whose similarity rows are ``similarity``."""
    hits = wanted_total = recalled_total = stray = 0
    for row, want, question in zip(similarity, wanted, questions, strict=True):
        best = [int(i) for i in np.argsort(-row)[:top]]
        kept = {int(i) for i, _s in recalled(question, [(str(i), float(row[i])) for i in best], rule)}
        hits += len(want & kept)
        wanted_total += len(want)
        recalled_total += len(kept)
        stray += int(not want and bool(kept))
    recall = hits / wanted_total if wanted_total else 0.0
    precision = hits / recalled_total if recalled_total else 1.0
    f1 = 2 * recall * precision / (recall + precision) if recall + precision else 0.0
    return {"threshold": rule.min_similarity, "min_words": rule.min_words, "recall": round(recall, 3),
            "precision": round(precision, 3), "f1": round(f1, 3), "unrelated_with_memory": stray,
            "unrelated": sum(not w for w in wanted)}  # fmt: skip


def _chosen(sweep: list[dict[str, Any]]) -> dict[str, Any]:
    return max(sweep, key=lambda s: (s["f1"], s["threshold"], s["min_words"]))


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
    splits: dict[str, tuple[np.ndarray, list[set[int]], list[str]]] = {}
    for split in ("dev", "test"):
        rows = data[split]
        questions = [r["question"] for r in rows]
        wanted = [{names.index(n) for n in r["recall"]} for r in rows]
        splits[split] = (embedder.embed_queries(questions) @ memories.T, wanted, questions)
    talk = embedder.embed_queries(SMALL_TALK) @ memories.T

    def run(split: str, rule: RecallRule) -> dict[str, Any]:
        similarity, wanted, questions = splits[split]
        return score(similarity, wanted, rule, args.top, questions)

    def small_talk(rule: RecallRule) -> int:
        rows = [[(str(i), float(row[i])) for i in np.argsort(-row)[: args.top]] for row in talk]
        return sum(bool(recalled(message, hits, rule)) for message, hits in zip(SMALL_TALK, rows, strict=True))

    sweep = [run("dev", RecallRule(t, words)) for t in THRESHOLDS for words in WORDS]
    alone = _chosen([s for s in sweep if s["min_words"] == 0])
    chosen = _chosen(sweep)
    before, after = RecallRule(alone["threshold"]), RecallRule(chosen["threshold"], chosen["min_words"])
    report = {
        "embedder": embedder.name,
        "top": args.top,
        "dev_sweep": [s for s in sweep if s["min_words"] in (0, chosen["min_words"])],
        "threshold_alone_on_dev": alone,
        "threshold_alone_on_test": run("test", before),
        "chosen_on_dev": chosen,
        "test_at_chosen": run("test", after),
        "small_talk": len(SMALL_TALK),
        "small_talk_with_memory": {"threshold_alone": small_talk(before), "chosen": small_talk(after)},
    }
    print(json.dumps(report, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
