"""Answer the demo questions (assets/examples.json) with the configured LLM and score them.

A question counts as correct when every one of its ``expected_answer_contains`` strings is in the answer;
also reported: answers with at least one valid [n] citation, and time to first token.

    .venv/bin/python -m ragbench.answer_quality [--state /tmp/ragapp-quality-state] [--top-k 5]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
from pathlib import Path

from ragapp.config import REPO_ROOT, Settings
from ragapp.core.turn import Turn
from ragapp.engine.build import build_engine


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state", type=Path, default=Path("/tmp/ragapp-quality-state"))
    parser.add_argument("--top-k", type=int, default=None, help="override RAGAPP_RETRIEVAL__CONTEXT_TOP_K")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    retrieval = {"context_top_k": args.top_k} if args.top_k else {}
    engine = build_engine(Settings(paths={"state_dir": args.state}, retrieval=retrieval))
    engine.warm_up()
    examples = list(json.loads((REPO_ROOT / "assets" / "examples.json").read_text("utf-8")))
    correct = cited = 0
    first_tokens: list[float] = []
    for example in examples:
        turn = Turn.of(engine.chat.ask(example["question"]))
        first, answer = turn.first_token_s, turn.answer
        assert answer is not None
        if example["kind"] == "off-topic":
            ok = not answer.grounded
        else:
            ok = all(s.lower() in answer.text.lower() for s in example["expected_answer_contains"])
            cited += bool(answer.citations)
            first_tokens.append(first or 0.0)
        correct += ok
        sys.stdout.write(
            f"{'ok ' if ok else 'BAD'} {example['kind']:13s} {example['question'][:50]} -> {answer.text[:90]!r}\n"
        )
    on_topic = sum(1 for x in examples if x["kind"] != "off-topic")
    sys.stdout.write(
        f"\n{engine.status().llm}: correct {correct}/{len(examples)}, cited {cited}/{on_topic} answered questions, "
        f"time to first token median {statistics.median(first_tokens):.1f} s (max {max(first_tokens):.1f} s)\n"
    )


if __name__ == "__main__":
    main()
