"""``python -m ragbench.answers.retrieval``: the app's search alone over an answer set, and what one ingest
setting changes in it.

For each answerable question (the split asked, its PDFs as text or scans with ``--pdfs``), the question goes
through the app's retrieval as the chat sends it when it needs no rewrite (both channels, fusion, the shipped
reranker, the relevance gate; no model call), and counts as found when a passage on its evidence page or section
reaches the prompt. ``--off SETTING`` builds the set's state a second time with that ingest setting off and
reports both, question by question where they differ::

    python -m ragbench.answers.retrieval --set data/eval/answers/debian-blind.yaml --split dev --pdfs text \\
        --off join_broken_words
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragapp.config import Settings
from ragbench.answers.answer_set import AnswerSet, Question, load_set, pdfs_as
from ragbench.answers.scoring import on_evidence
from ragbench.answers.state import engine_over, prepare_state, set_doc_ids, state_folder
from ragbench.cli import run_command, write_json

if TYPE_CHECKING:
    from ragapp.engine.engine import Engine


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m ragbench.answers.retrieval", description=__doc__.split("\n")[0])
    parser.add_argument("--set", dest="set_file", type=Path, required=True)
    parser.add_argument("--split", choices=("dev", "test"))
    parser.add_argument("--pdfs", choices=("scan", "text"))
    parser.add_argument("--off", help="an ingest setting (bool) to turn off for the second run")
    parser.add_argument("--cache", type=Path, default=Path(".cache/answers"))
    parser.add_argument("--output", type=Path)
    return parser


def found(engine: Engine, question: Question, set_doc_of: dict[str, str]) -> bool:
    chunks = engine.chat.retrieve(question.question).chunks
    return any(on_evidence(c.chunk, set_doc_of.get(c.chunk.doc_id), question.evidence) for c in chunks)


def run(answer_set: AnswerSet, questions: list[Question], settings: Settings, cache: Path) -> dict[str, bool]:
    folder = state_folder(answer_set, settings, cache)
    engine, how = prepare_state(answer_set, engine_over(settings), folder)
    print(f"{answer_set.name}: {len(questions)} questions over {folder} ({how})", file=sys.stderr)
    try:
        set_doc_of = set_doc_ids(engine.library.documents(), answer_set)
        return {q.id: found(engine, q, set_doc_of) for q in questions}
    finally:
        engine.close()


def _run(args: argparse.Namespace) -> int:
    answer_set = load_set(args.set_file)
    if args.pdfs:
        answer_set = pdfs_as(answer_set, args.pdfs)
    questions = [q for q in answer_set.questions if q.answerable and args.split in (None, q.split)]
    base = Settings()
    runs = {"as configured": run(answer_set, questions, base, args.cache)}
    if args.off:
        off = base.model_copy(update={"ingest": base.ingest.model_copy(update={args.off: False})})
        runs[f"{args.off} off"] = run(answer_set, questions, off, args.cache)
    summary: dict[str, Any] = {name: f"{sum(hits.values())}/{len(hits)}" for name, hits in runs.items()}
    print(json.dumps(summary))
    if len(runs) == 2:
        (a, on), (b, off_hits) = runs.items()
        for qid in on:
            if on[qid] != off_hits[qid]:
                print(f"{qid}: found {'only ' + a if on[qid] else 'only ' + b}")
    if args.output:
        payload = {"set": str(args.set_file), "split": args.split or "all", "pdfs": args.pdfs, "runs": runs,
                   "summary": summary}  # fmt: skip
        write_json(args.output, payload)
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_command(_run, _parser().parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
