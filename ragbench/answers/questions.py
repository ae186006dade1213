"""``python -m ragbench.answers.questions``: does searching the questions the model wrote for each chunk bring the
evidence of paraphrased questions into the prompt?

Over an answer set's state (every document loaded, as ``ragbench.answers.retrieval`` builds it), for the
paraphrased questions of one split (never run on test until a change is done): the evidence-in-prompt count as
configured (written questions off), then the model writes questions for a budget-bounded subset of chunks, and
the same questions are searched again with the written questions on: every written question kept, then only the
grounded ones (reranker score of (question, chunk) at least the relevance gate's ``min_rerank_score``). The model
writes seconds per chunk, so what is enriched is, question by question in the set's order until ``--minutes`` of
model time is spent: the chunks on its evidence (at most ``--per-question``) and, as distractors that compete for
the prompt, the chunks the search put in the prompt that are not evidence. Only the questions whose chunks were
all enriched are compared (the others would measure nothing). Written questions stay in the state folder's
catalog (a later run with the same budget reuses them and writes more)::

    nice python -m ragbench.answers.questions --set data/eval/answers/debian-blind.yaml --split dev --minutes 45
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import replace
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
    parser = argparse.ArgumentParser(prog="python -m ragbench.answers.questions", description=__doc__.split("\n")[0])
    parser.add_argument("--set", dest="set_file", type=Path, required=True)
    parser.add_argument("--split", choices=("dev",), default="dev", help="dev only: test is run once, at the end")
    parser.add_argument("--pdfs", choices=("scan", "text"), help="the set's PDFs alone (ragbench.answers.retrieval)")
    parser.add_argument("--minutes", type=float, default=45.0, help="model time to spend writing questions")
    parser.add_argument("--per-question", type=int, default=3, help="evidence chunks enriched per question")
    parser.add_argument("--cache", type=Path, default=Path(".cache/answers"))
    parser.add_argument("--output", type=Path)
    return parser


def _searched(engine: Engine, questions: list[Question], doc_of: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Question id -> whether its evidence reached the prompt, the prompt's chunk ids, and which of them a
    written question found."""
    out: dict[str, dict[str, Any]] = {}
    for q in questions:
        result = engine.chat.retrieve(q.question)
        via = {h.chunk_id for r in result.channel_results for h in r.hits if h.via}
        prompt = [c.chunk for c in result.chunks]
        out[q.id] = {
            "found": any(on_evidence(c, doc_of.get(c.doc_id), q.evidence) for c in prompt),
            "prompt": [c.chunk_id for c in prompt],
            "via_question": sorted(via & {c.chunk_id for c in prompt}),
        }
    return out


def _run(args: argparse.Namespace) -> int:
    from ragapp.engine.build import load_builtins
    from ragapp.enrich.question_writer import overlap_score, rerank_score
    from ragapp.enrich.questions import QuestionsStep, question_index
    from ragapp.store.written_questions import WrittenQuestion

    load_builtins()
    answer_set: AnswerSet = load_set(args.set_file)
    if args.pdfs:
        answer_set = pdfs_as(answer_set, args.pdfs)
    questions = [q for q in answer_set.questions if q.answerable and q.split == args.split and "paraphrased" in q.tags]
    base = Settings()
    folder = state_folder(answer_set, base, args.cache)

    def engine_of(on: bool) -> Callable[[Path], Engine]:
        # Written with every question kept and scored by the reranker; the grounded run drops them after.
        qs = base.questions.model_copy(update={"enabled": on, "grounding": "rerank", "min_rerank": -1e9})
        return engine_over(base.model_copy(update={"questions": qs}))

    engine, how = prepare_state(answer_set, engine_of(False), folder)
    print(
        f"{answer_set.name}: {len(questions)} paraphrased {args.split} questions over {folder} ({how})", file=sys.stderr
    )
    doc_of = set_doc_ids(engine.library.documents(), answer_set)
    store, llm, reranker = engine._store, engine._llm, engine._retrieval.reranker
    before = _searched(engine, questions, doc_of)
    step = QuestionsStep(llm, reranker, engine.settings.questions.model_copy(update={"min_rerank": -1e9}))
    index = question_index(store)
    chunks = store.catalog.all_chunks()
    done = index.questions.written_ids()
    budget = args.minutes * 60
    spent, enriched_questions, written_now = 0.0, [], 0
    for q in questions:
        evidence = [c.chunk_id for c in chunks if on_evidence(c, doc_of.get(c.doc_id), q.evidence)]
        wanted = evidence[: args.per_question] + [cid for cid in before[q.id]["prompt"] if cid not in evidence]
        todo = [cid for cid in wanted if cid not in done]
        for cid in todo:
            if spent >= budget:
                break
            started = time.monotonic()
            if step.run(store, [cid]):
                done.add(cid)
            spent += time.monotonic() - started
            written_now += 1
            print(f"{written_now} chunks tried, {spent / 60:.1f} of {args.minutes:g} min", file=sys.stderr)
        if all(cid in done for cid in wanted):
            enriched_questions.append(q)
    engine.close()

    measured = enriched_questions
    runs: dict[str, dict[str, dict[str, Any]]] = {"off": {q.id: before[q.id] for q in measured}}
    engine = engine_of(True)(folder)
    store, index = engine._store, question_index(engine._store)
    least = engine.settings.retrieval.min_rerank_score
    ground = rerank_score(engine._retrieval.reranker)
    by_chunk: dict[str, list[WrittenQuestion]] = {}
    for w in index.questions.all_written():
        by_chunk.setdefault(w.chunk_id, []).append(w)
    found_chunks = store.catalog.chunks(by_chunk)
    rows = []
    scored: dict[str, list[WrittenQuestion]] = {}
    for cid, qs in by_chunk.items():
        chunk = found_chunks.get(cid)
        if chunk is None:
            continue
        scored[cid] = [replace(w, score=w.score if w.score is not None else ground(w.text, chunk)) for w in qs]
        rows += [
            {
                "chunk": cid,
                "question": w.text,
                "lang": w.lang,
                "rerank": round(w.score or 0.0, 4),
                "overlap": round(overlap_score(w.text, chunk), 3),
                "chunk_text": chunk.text[:400],
            }
            for w in scored[cid]
        ]

    def keep(rule: Callable[[WrittenQuestion], bool]) -> None:
        """Index each written chunk's questions that ``rule`` keeps (a translation follows the first question)."""
        for cid, qs in scored.items():
            chunk = found_chunks[cid]
            document = store.catalog.document(chunk.doc_id)
            first = next((rule(w) for w in qs if w.lang == qs[0].lang), False)
            kept = [replace(w, kept=rule(w) if w.lang == qs[0].lang else first) for w in qs]
            if document is not None:
                index.add(cid, chunk.doc_id, document.kb, kept)
                index.questions.write(cid, kept, "ragbench")

    keep(lambda w: True)
    runs["all written"] = _searched(engine, measured, doc_of)
    keep(lambda w: (w.score or 0.0) >= least)  # the relevance gate would keep the chunk for this question
    runs["grounded"] = _searched(engine, measured, doc_of)
    engine.close()
    summary: dict[str, object] = {
        name: f"{sum(r['found'] for r in hits.values())}/{len(hits)}" for name, hits in runs.items()
    }
    summary |= {"chunks written": len(scored), "model minutes this run": round(spent / 60, 1)}
    print(json.dumps(summary))
    for q in measured:
        marks = {name: hits[q.id]["found"] for name, hits in runs.items()}
        if len(set(marks.values())) > 1:
            print(f"{q.id}: {marks}")
    if args.output:
        payload = {"set": str(args.set_file), "split": args.split, "summary": summary, "runs": runs,
                   "questions_written": rows}  # fmt: skip
        write_json(args.output, payload)
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_command(_run, _parser().parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
