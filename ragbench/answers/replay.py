"""``python -m ragbench.answers.replay``: today's support check re-run on a finished run's stored replies.

    python -m ragbench.answers.replay --set data/eval/answers/debian-manuals.yaml [--state DIR] [--since ISO] \\
        [--split dev|test] [--rows RUN.json --output REPLAYED.json]

Each question of the set is looked up among the traces of the run's engine state (its newest trace, or the
newest since ``--since``, an ISO time such as 2026-12-01T14:15). The model's answering reply is checked again
by ``checked_answer`` (support, markers, abstention) over the passages that reached its prompt, read back from
the catalog, and scored as ``python -m ragbench.answers`` scores it. Prints the figures the run would show with
the check as the code has it now, their truthfulness side by side (as ``python -m ragbench.answers.truth``
compares two runs), and every question whose outcome changed. No model runs, so a change to the
check is judged in seconds rather than a run of tens of minutes; retrieval and the model's words stay as they
were, and time to first token is not replayed. The confidence is assessed again too (today's signals and
calibrator); ``--output`` writes the rows checked again, with their signals, for ``python -m
ragbench.answers.calibrate`` to fit the calibrator on (``--rows`` names the run's result file, for the signals
only the model gave: its tokens' log-probabilities and the selection's).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from ragapp.config import REPO_ROOT, Settings
from ragapp.core.errors import ConfigError
from ragapp.core.events import AnswerEvent, EvidenceEvent
from ragapp.core.types import Chunk, Citation, Confidence, RetrievedChunk
from ragapp.engine.build import load_builtins
from ragapp.qa.answer_check import SentenceScorer, checked_answer, composed, reranker_scorer, withheld
from ragapp.qa.calibrator import SHIPPED, Calibrator, load_calibrator
from ragapp.qa.confidence import DEFAULT_THRESHOLDS, Thresholds
from ragapp.qa.grounding import SupportRules
from ragapp.qa.prompts import PART_EN, PART_ZH
from ragapp.qa.select import SELECT_EN, SELECT_ZH
from ragapp.rerank.base import RERANKERS
from ragapp.store.catalog import Catalog
from ragapp.tracing.model import LLMCallRecord, Trace
from ragapp.tracing.store import TraceStore
from ragbench.answers.__main__ import render_table
from ragbench.answers.answer_set import SPLITS, TYPES, AnswerSet, Question, load_set
from ragbench.answers.scoring import Row, Seen, score, summarize
from ragbench.answers.state import OWNER, READY
from ragbench.answers.truth import comparison_text, load_rows, truth_table
from ragbench.cli import run_command

# Signals only the model gives: not in a trace, so a replay takes them from the run's rows (``--rows``).
MODEL_SIGNALS = frozenset(
    {"logprob_mean", "logprob_min", "logprob_missing", "selected", "picked", "quoted", "pick_probability",
     "pick_margin", "none_probability", "pick_scores_missing", "pick_on_topic", "pick_on_topic_missing",
     "pick_is_quote"}
)  # fmt: skip


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.answers.replay", description=__doc__.split("\n\n")[0])
    p.add_argument("--set", dest="set_file", type=Path, required=True, help="the answer set (YAML).")
    p.add_argument("--state", type=Path, help="the run's engine state (default: the newest one for the set).")
    p.add_argument("--cache", type=Path, default=REPO_ROOT / ".cache" / "answers", help="default: .cache/answers.")
    p.add_argument("--since", default="", help="only traces started at or after this ISO time.")
    p.add_argument("--split", choices=SPLITS, help="only this split of a split set (dev: tune; test: report).")
    p.add_argument(
        "--rows",
        type=Path,
        help="the run's result file: the signals only the model gives (its tokens' log-probabilities, the "
        "selection's) are taken from its rows, as the traces do not keep them.",
    )
    p.add_argument("--output", type=Path, help="write the rows checked again here (for ragbench.answers.calibrate).")
    return p


def main(argv: list[str] | None = None) -> int:
    return run_command(_run, _parser().parse_args(argv))


def newest_state(answer_set: AnswerSet, cache: Path) -> Path:
    """The most recently built engine state for the set under ``cache``."""
    built = [p.parent for p in cache.glob(f"{answer_set.name}-*/{READY}")]
    if not built:
        raise ConfigError(f"no finished state for {answer_set.name} under {cache}: run python -m ragbench.answers")
    return max(built, key=lambda p: (p / READY).stat().st_mtime)


def answering_calls(trace: Trace) -> list[tuple[str | None, LLMCallRecord]]:
    """The calls that wrote the answer, each with the part of the question it answered (None: the whole
    question): the last plain-text call (rewriting and routing come before it and ask for JSON; agent steps
    carry tools), and for a question answered part by part, the run of parts' calls it ends."""
    plain = [
        c
        for c in trace.llm_calls
        if not c.call.json and not c.call.tools and c.call.error is None and not _selection(c)
    ]
    if not plain or not trace.context:
        return []
    calls: list[tuple[str | None, LLMCallRecord]] = []
    for call in reversed(plain):
        part = _part_of(call)
        if part is None:
            return calls[::-1] or [(None, call)]
        calls.append((part, call))
    return calls[::-1]


def prompt_passages(trace: Trace, chunks: dict[str, Chunk]) -> list[RetrievedChunk]:
    """The passages that reached the answer's prompt, in order, with the scores their search gave them (the
    calibrator reads them)."""
    found = {c.chunk_id: c for r in trace.retrievals for c in r.candidates}
    kept = []
    for ref in trace.context:
        if ref.chunk_id not in chunks:
            continue
        c = found.get(ref.chunk_id)
        scores = (c.fused_score, dict(c.channel_ranks), dict(c.channel_scores), c.rerank_score) if c else (0.0, {}, {})
        kept.append(RetrievedChunk(chunks[ref.chunk_id], *scores))  # type: ignore[arg-type]
    return kept


def _selection(call: LLMCallRecord) -> bool:
    """The selection's call (``ragapp.qa.select``): its reply is a copied sentence, not an answer."""
    system = str(call.call.messages[0].get("content", "")) if call.call.messages else ""
    return system in (SELECT_EN, SELECT_ZH)


def _part_of(call: LLMCallRecord) -> str | None:
    last = str(call.call.messages[-1].get("content", "")) if call.call.messages else ""
    line = last.rsplit("\n", 1)[-1]
    for label in (PART_EN, PART_ZH):
        if line.startswith(label):
            return line[len(label) :]
    return None


def replayed(
    question: Question,
    trace: Trace,
    chunks: dict[str, Chunk],
    rules: SupportRules,
    scorer: SentenceScorer | None = None,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    calibrator: Calibrator | None = None,
) -> AnswerEvent | None:
    """The answer today's check makes of the trace's reply (or its parts' replies, put together), or None when
    no reply was checked (nothing reached the prompt, a clarifying question)."""
    calls = answering_calls(trace)
    if not calls or trace.answer is None:
        return None
    kept = prompt_passages(trace, chunks)
    evidence = None
    quoted = trace.evidence
    if quoted is not None and quoted.chunk_id in chunks:  # the quote shown before the answer, as it was
        citation = Citation(quoted.number, chunks[quoted.chunk_id], None, (quoted.quote,))
        evidence = EvidenceEvent(quoted.quote, citation)
    part, call = calls[0]
    if part is None:
        reply = call.call.completion
        return checked_answer(question.question, reply, kept, rules, scorer, evidence, thresholds, calibrator)
    parts = [p or "" for p, _ in calls]
    answers = [
        checked_answer(p or "", c.call.completion, kept, rules, scorer, None, thresholds, calibrator) for p, c in calls
    ]
    return composed(question.question, parts, answers)


def _scored(
    question: Question,
    event: AnswerEvent,
    cited: list[Chunk],
    trace: Trace,
    chunks: dict[str, Chunk],
    doc_of: dict[str, str],
) -> Row:
    confidence = event.confidence
    seen = Seen(
        answer=event.guess if event.not_sure else event.text,
        grounded=event.grounded,
        answered=True,
        refused=event.abstained,
        cited=cited,
        prompt=[chunks[ref.chunk_id] for ref in trace.context if ref.chunk_id in chunks],
        seconds=trace.total_s or 0.0,
        quote=trace.evidence.quote if trace.evidence else "",
        confidence=confidence.level if confidence else "",
        not_sure=event.not_sure,
        probability=confidence.probability if confidence else None,
        signals=dict(confidence.signals) if confidence else {},
    )
    return score(question, seen, doc_of)


def outcome(row: Row) -> str:
    if not row.answerable:
        return "refused" if row.abstained else "answered"
    return "abstained" if row.abstained else "not sure" if row.not_sure else "correct" if row.correct else "wrong"


def _run(args: argparse.Namespace) -> int:
    answer_set = load_set(args.set_file)
    state = args.state or newest_state(answer_set, args.cache)
    settings = Settings()
    rules = SupportRules(settings.workflow.support_overlap)
    thresholds = Thresholds(settings.workflow.confidence_high_from, settings.workflow.confidence_low_below)
    calibrator = load_calibrator(settings.workflow.calibrator or SHIPPED)
    load_builtins()
    scorer = reranker_scorer(RERANKERS.get(settings.rerank.backend)(settings))  # as the app picks quotes
    catalog = Catalog(state / "catalog.sqlite3").start()
    traces = TraceStore(state / "traces.sqlite3").start()
    stored_rows = {r.id: r.signals for r in load_rows(args.rows)} if args.rows else {}
    try:
        doc_of = {d.doc_id: doc.id for d in catalog.documents() for doc in answer_set.documents if d.name == doc.name}
        before: list[Row] = []
        after: list[Row] = []
        changed: list[str] = []
        for question in answer_set.questions:
            if args.split and question.split != args.split:
                continue
            trace = _newest(traces, question, args.since)
            if trace is None or trace.answer is None:  # no trace, or it ended in a clarifying question
                continue
            stored = trace.answer
            chunks = catalog.chunks([r.chunk_id for r in trace.context] + [c.chunk_id for c in stored.citations])
            level = stored.confidence
            confidence = Confidence(level) if level in ("high", "medium", "low") else None  # type: ignore[arg-type]
            as_stored = AnswerEvent(
                stored.text, (), grounded=stored.grounded, abstained=stored.abstained, confidence=confidence,
                not_sure=stored.not_sure, guess=stored.guess,
            )  # fmt: skip
            cited = [chunks[c.chunk_id] for c in stored.citations if c.chunk_id in chunks]
            old = _scored(question, as_stored, cited, trace, chunks, doc_of)
            event = replayed(question, trace, chunks, rules, scorer, thresholds, calibrator)
            if event is not None and settings.workflow.not_sure:
                kept = prompt_passages(trace, chunks)
                event = withheld(question.question, event, kept, None) if kept else event
            new = (
                old
                if event is None
                else _scored(question, event, [c.chunk for c in event.citations], trace, chunks, doc_of)
            )
            if stored_rows:  # what only the model gave, as the run logged it
                kept_signals = {k: v for k, v in stored_rows.get(question.id, {}).items() if k in MODEL_SIGNALS}
                new = replace(new, signals={**new.signals, **kept_signals})
            before.append(old)
            after.append(new)
            if outcome(old) != outcome(new) or old.citation_on_evidence != new.citation_on_evidence:
                changed.append(f"{question.id}: {outcome(old)} → {outcome(new)}  {new.answer[:90]!r}")
    finally:
        traces.close()
        catalog.close()
    print(f"{len(after)} of {len(answer_set.questions)} questions have a trace in {state}", file=sys.stderr)
    print(render_table("as stored", summarize(before, TYPES)))
    print(render_table("checked again", summarize(after, TYPES)))
    print("\n" + truth_table("checked again", summarize(after, TYPES)))
    print("\n" + comparison_text("as stored", "checked again", before, after))
    print("\n".join(["changed:", *changed] if changed else ["no outcome changed"]))
    if args.output:
        payload = {"set": str(args.set_file), "replayed_from": str(state), "split": args.split or "all"}
        payload |= {"summary": summarize(after, TYPES), "rows": [r.as_json() for r in after]}
        args.output.write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n", "utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    return 0


def _newest(traces: TraceStore, question: Question, since: str) -> Trace | None:
    for summary in traces.list(OWNER, text=question.question, kind="chat", limit=50):
        if summary.started_at < since:
            break
        trace = traces.get(summary.id, OWNER)
        if trace is not None and trace.question == question.question:
            return trace
    return None


if __name__ == "__main__":
    raise SystemExit(main())
