"""Split a new answer set once into dev and test, writing ``split:`` into the file (run once, when the set is written;
it refuses a set that already has a split, so a split is never redrawn).

    PYTHONPATH=. .venv/bin/python scripts/split_answer_set.py data/eval/answers/debian-fresh.yaml --seed 50

Stratified: the questions are grouped by type (unanswerable is a type) and language; within a group they are ordered
by document (the first evidence's document; an unanswerable question's id prefix) and, inside one document, in a
seeded random order, then dealt alternately to dev and test. One running alternation carries across the groups
(taken in sorted order), so every type and language group splits within one question and so does the whole set
(a document only roughly: its share of each group is small). Each question's one-line flow mapping gets
``, split: dev}`` or ``, split: test}`` appended; nothing else in the file changes.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections import defaultdict
from pathlib import Path

from ragbench.answers.answer_set import Question, load_set


def _doc(q: Question) -> str:
    return q.evidence[0].doc if q.evidence else q.id.split("-")[0]


def draw(questions: list[Question], seed: int) -> dict[str, str]:
    """Each question id's split, dealt alternately within shuffled, sorted groups."""
    rng = random.Random(seed)
    rank = {q.id: rng.random() for q in sorted(questions, key=lambda q: q.id)}
    groups: dict[tuple[str, str], list[Question]] = defaultdict(list)
    for q in questions:
        groups[(q.type, q.lang)].append(q)
    split: dict[str, str] = {}
    turn = 0
    for key in sorted(groups):
        for q in sorted(groups[key], key=lambda q: (_doc(q), rank[q.id])):
            split[q.id] = ("dev", "test")[turn % 2]
            turn += 1
    return split


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("set_file", type=Path)
    parser.add_argument("--seed", type=int, required=True)
    args = parser.parse_args(argv)
    answer_set = load_set(args.set_file)
    if any(q.split for q in answer_set.questions):
        print(f"{args.set_file} is already split; a split is drawn once and never redrawn", file=sys.stderr)
        return 1
    split = draw(list(answer_set.questions), args.seed)
    lines = args.set_file.read_text("utf-8").splitlines(keepends=True)
    done = set()
    for i, line in enumerate(lines):
        found = re.match(r"\s*- \{id: ([\w.-]+),", line)
        if found and found.group(1) in split:
            if not line.rstrip().endswith("}"):
                print(f"question {found.group(1)} is not a one-line flow mapping", file=sys.stderr)
                return 1
            lines[i] = line.rstrip()[:-1] + f", split: {split[found.group(1)]}}}\n"
            done.add(found.group(1))
    if done != set(split):
        print(f"questions not found as one-line mappings: {sorted(set(split) - done)}", file=sys.stderr)
        return 1
    args.set_file.write_text("".join(lines), "utf-8")
    dev = sum(s == "dev" for s in split.values())
    print(f"{args.set_file}: {dev} dev, {len(split) - dev} test (seed {args.seed})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
