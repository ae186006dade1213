"""Show the evidence the relevance gate sees, for the demo questions and for off-topic probes.

Used to pick the defaults of RAGAPP_RETRIEVAL__MIN_VECTOR_SIMILARITY / MIN_AGREEMENT_SIMILARITY /
MIN_KEYWORD_SCORE (no reranker). For every question: the best vector cosine, the best BM25 score, how many
chunks pass the gate, and whether an expected source is among the chunks that reach the prompt.

    .venv/bin/python -m ragbench.calibrate_gate [--state /tmp/gate-state]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

from ragapp.config import REPO_ROOT, Settings
from ragapp.engine.build import build_engine

OFF_TOPIC_PROBES = [
    "今天天气怎么样？",
    "帮我写一首关于春天的诗",
    "什么是量子计算？",
    "北京到上海的高铁票多少钱？",
    "你是谁？",
    "推荐一部好看的电影",
    "Who won the World Cup in 2018?",
    "How do I bake sourdough bread?",
    "What is the meaning of life?",
    "Translate 'hello' into French.",
]


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state", type=Path, default=Path("/tmp/ragapp-gate-state"))
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    # Nothing here generates text: the default local LLM is built but never loaded.
    engine = build_engine(Settings(paths={"state_dir": args.state}))
    examples = json.loads((REPO_ROOT / "assets" / "examples.json").read_text("utf-8"))
    rows = [(x["question"], x["kind"], x["expected_sources"]) for x in examples]
    rows += [(q, "off-probe", []) for q in OFF_TOPIC_PROBES]
    sys.stdout.write("| kind | best cosine | best BM25 | chunks kept | expected source kept | question |\n")
    sys.stdout.write("|---|---|---|---|---|---|\n")
    for question, kind, sources in rows:
        result = engine.chat.retrieve(question)
        best = {r.channel: max((h.score for h in r.hits), default=0.0) for r in result.channel_results}
        kept = {c.chunk.source for c in result.chunks}
        found = "n/a" if not sources else str(bool(kept & set(sources)))
        sys.stdout.write(
            f"| {kind} | {best.get('vector', 0):.3f} | {best.get('keyword', 0):.2f} | {len(result.chunks)} | "
            f"{found} | {question} |\n"
        )


if __name__ == "__main__":
    main()
