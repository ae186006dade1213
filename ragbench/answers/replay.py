"""``python -m ragbench.answers.replay``: today's support check re-run on a finished run's stored replies.

    python -m ragbench.answers.replay --set data/eval/answers/debian-manuals.yaml [--state DIR] [--since ISO] \\
        [--split dev|test] [--rows RUN.json --output REPLAYED.json] [--verify]

Each question of the set is looked up among the traces of the run's engine state (its newest trace, or the
newest since ``--since``, an ISO time such as 2026-12-01T14:15). The model's answering replies go through the
answer writer's own last steps (``ragapp.qa.writer``: screened, checked by ``checked_answer``, assessed by
today's calibrator, put together part by part, withheld as "not sure" when low, renumbered) over the passages
that reached its prompt (read back from the catalog, with the scores they had there), for the question as the
writer got it (the rewrite of a follow-up), and scored as ``python -m ragbench.answers`` scores it. Prints the
figures the run would show with the code as it is now, their truthfulness side by side (as ``python -m
ragbench.answers.truth`` compares two runs), and every question whose outcome changed. No model runs (but with
``--verify``: the model's check of each whole answer that the run did not make, ``workflow.verify``), so a
change to the check or the confidence is judged in seconds rather than a run of tens of minutes; retrieval and
the model's words stay as they were, and time to first token is not replayed.

Replaying an unchanged build reproduces each answer's confidence and outcome (tests/ragbench/
test_replay_faithful.py). Traces keep what that needs since model calls kept their tokens' log-probabilities
and the prompt's passages their scores. For a run traced before, the row of the same answer in its result file
(``--rows``, by default those under results/answers made over the state) gives the log-probabilities (a
question of several parts logged its lowest part's only), and a passage takes the scores of the first search
that passed it on. A run made with the selection step (``workflow.select``) is
replayed as if its answers were written without it. ``--output`` writes the rows checked again, with their
signals, for ``python -m ragbench.answers.calibrate`` to fit the calibrator on.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ragapp.config import REPO_ROOT, Settings
from ragapp.core.errors import ConfigError, LLMError
from ragapp.core.events import AnswerEvent, EvidenceEvent
from ragapp.core.stages import VERIFIED_YES
from ragapp.core.types import Chunk, Citation, Confidence, RetrievedChunk
from ragapp.engine.build import load_builtins
from ragapp.models.llm import LLMS, stream_within
from ragapp.qa.answer_check import evidence_for, reranker_scorer
from ragapp.qa.calibrator import SHIPPED, Calibrator, load_calibrator
from ragapp.qa.confidence import Clues, SentenceScorer
from ragapp.qa.injection import screen_passages
from ragapp.qa.prompts import PART_EN, PART_ZH
from ragapp.qa.select import SELECT_EN, SELECT_ZH
from ragapp.qa.verify import is_verify_call, read_verdict, verify_call
from ragapp.qa.writer import checked_reply, final_answer
from ragapp.rerank.base import RERANKERS
from ragapp.store.catalog import Catalog
from ragapp.tracing.model import LLMCallRecord, Trace
from ragapp.tracing.records import CandidateRecord
from ragapp.tracing.store import TraceStore
from ragbench.answers.__main__ import render_table
from ragbench.answers.answer_set import SPLITS, TYPES, AnswerSet, Question, load_set
from ragbench.answers.scoring import Row, Seen, score, summarize
from ragbench.answers.state import OWNER, READY, set_doc_ids
from ragbench.answers.truth import comparison_text, load_rows, truth_table
from ragbench.cli import run_command

RESULTS = REPO_ROOT / "results" / "answers"  # where ``python -m ragbench.answers`` writes its runs
# The selection's signals: not replayed (a selection run's replay writes from its reply as if none was made), so
# a replay's rows take them from the run's rows (``--rows``), for the calibrator's fit only.
MODEL_SIGNALS = frozenset(
    {"selected", "picked", "quoted", "pick_probability", "pick_margin", "none_probability", "pick_scores_missing",
     "pick_on_topic", "pick_on_topic_missing", "pick_is_quote"}
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
        help="the run's result file (default: those under results/answers made over the state): for traces "
        "written before model calls kept their tokens' log-probabilities, the ones the row of the same answer "
        "logged are checked with; and the selection's signals are copied into the rows written.",
    )
    p.add_argument(
        "--verify", action="store_true",
        help="check each whole answer by the model as workflow.verify does, where the run did not (a model call "
        "each: a few seconds on 2 cores); the rows then carry the signal for ragbench.answers.calibrate.",
    )  # fmt: skip
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
        if not c.call.json
        and not c.call.tools
        and c.call.error is None
        and not _selection(c)
        and not is_verify_call(c.call.messages)
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
    """The passages that reached the answer's prompt, in order, with the scores they had there (the calibrator
    reads them): as the trace kept them with its context, or in a trace written before it did, the first
    search's that passed the chunk on (a translated or rephrased search's passages keep the scores of the
    question's own search when both found them, the first part's when parts share one; a widened search asks
    the same question, which scores a chunk as before)."""
    passed: dict[str, CandidateRecord] = {}  # the first search that passed the chunk on
    seen: dict[str, CandidateRecord] = {}  # else the first that found it at all
    for retrieval in trace.retrievals:
        for c in retrieval.candidates:
            (passed if c.in_prompt else seen).setdefault(c.chunk_id, c)
    found = seen | passed
    kept = []
    for ref in trace.context:
        if ref.chunk_id not in chunks:
            continue
        had = ref.scores or found.get(ref.chunk_id)
        if had is None:
            kept.append(RetrievedChunk(chunks[ref.chunk_id], 0.0, {}, {}, None))
            continue
        ranks, channels = dict(had.channel_ranks), dict(had.channel_scores)
        kept.append(RetrievedChunk(chunks[ref.chunk_id], had.fused_score, ranks, channels, had.rerank_score))
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


Check = Callable[[str, str, list[RetrievedChunk]], float | None]  # (question, reply, passages) -> P(yes)


def model_check(settings: Settings) -> Check:
    """The check the writer makes with ``workflow.verify`` (``ragapp.qa.verify``), by the settings' model: for a
    run made without it (``--verify``)."""
    llm = LLMS.get(settings.llm.backend)(settings)

    def check(question: str, reply: str, kept: list[RetrievedChunk]) -> float | None:
        try:
            return read_verdict(list(stream_within(verify_call(llm, question, reply, kept), settings.llm.timeout_s)))
        except LLMError as exc:
            print(f"the check failed ({exc}): read as none", file=sys.stderr)
            return None

    return check


def verdict(trace: Trace) -> float | None:
    """The model's check of the answer as the run made it (``workflow.verify``: its span's P(yes)), or None."""
    checks = [s.attributes[VERIFIED_YES] for s in trace.spans if s.name == "verify" and VERIFIED_YES in s.attributes]
    return float(checks[0]) if checks else None


def asked(trace: Trace) -> str:
    """The question as the answer's writer got it: the standalone rewrite (a follow-up read with its history)
    when the run rewrote it, else as asked."""
    return trace.rewrite.standalone if trace.rewrite is not None else trace.question


def replayed(
    trace: Trace,
    chunks: dict[str, Chunk],
    settings: Settings,
    scorer: SentenceScorer | None = None,
    calibrator: Calibrator | None = None,
    logprobs: tuple[float, ...] | None = None,
    check: Check | None = None,
) -> AnswerEvent | None:
    """The answer the writer (``ragapp.qa.writer``) makes today of the trace's reply (or its parts' replies, put
    together), through the same steps (``checked_reply``, ``final_answer``), or None when no reply was checked
    (nothing reached the prompt, a clarifying question). Each reply's tokens' log-probabilities are the ones
    its call kept; ``logprobs`` stands in for a trace written before calls kept them. With ``workflow.verify``
    on, a whole answer reads the model's check the run made, or where it made none, ``check``'s (None: none)."""
    calls = answering_calls(trace)
    if not calls or trace.answer is None:
        return None
    question = asked(trace)
    kept, _warnings = screen_passages(question, prompt_passages(trace, chunks))
    evidence = _evidence(trace, question, kept, chunks, scorer)
    calibrator = calibrator or load_calibrator(settings.workflow.calibrator or SHIPPED)
    answers = []
    for part, record in calls:
        scores = tuple(record.call.logprobs) or logprobs or ()
        shown_first = evidence if part is None else None  # the quote shown first was chosen for the whole
        reply = record.call.completion.strip()
        verified = None
        if part is None and settings.workflow.verify and scores:  # as the writer checks a whole answer
            verified = verdict(trace)
            if verified is None and check is not None:
                verified = check(question, reply, kept)
        clues = Clues(part=part is not None, logprobs=scores, verified=verified)
        answer, _warnings = checked_reply(
            part or question, reply, kept, scorer, shown_first, clues, settings, calibrator
        )
        answers.append(answer)
    parts = [p or "" for p, _ in calls]
    return final_answer(question, parts, answers, kept, [None] * len(answers), settings.workflow.not_sure)


def _evidence(
    trace: Trace, question: str, kept: list[RetrievedChunk], chunks: dict[str, Chunk], scorer: SentenceScorer | None
) -> EvidenceEvent | None:
    """The quote shown before the answer, as the writer chose it (the same choice made again gives the passage
    sentence it highlights), or as the trace kept it where today's choice differs."""
    quoted = trace.evidence
    if quoted is None or quoted.chunk_id not in chunks:
        return None
    again = evidence_for(question, kept, scorer)
    if again is not None and again.quote == quoted.quote and again.citation.number == quoted.number:
        return again
    return EvidenceEvent(quoted.quote, Citation(quoted.number, chunks[quoted.chunk_id], None, (quoted.quote,)))


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
    if args.verify:
        settings = settings.model_copy(update={"workflow": settings.workflow.model_copy(update={"verify": True})})
    calibrator = load_calibrator(settings.workflow.calibrator or SHIPPED)
    load_builtins()
    check = model_check(settings) if args.verify else None
    scorer = reranker_scorer(RERANKERS.get(settings.rerank.backend)(settings))  # as the app picks quotes
    catalog = Catalog(state / "catalog.sqlite3").start()
    traces = TraceStore(state / "traces.sqlite3").start()
    run_rows = _run_rows(state, args.rows)
    try:
        doc_of = set_doc_ids(catalog.documents(), answer_set)
        before: list[Row] = []
        after: list[Row] = []
        changed: list[str] = []
        unscored = 0  # replies checked without the log-probabilities the run may have read
        selected = 0  # answers the run wrote after a selection step, which the replay does not make
        unchecked = 0  # whole answers the run did not have the model check (``workflow.verify`` off then)
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
            # the run's row of this very answer (the same words), for what an older trace lacks
            row = next((r for r in run_rows.get(question.id, []) if r.answer == old.answer), None)
            logprobs = _logprobs_of(row.signals if row is not None else {})
            calls = answering_calls(trace)
            if row is None and not any(c.call.logprobs for _, c in calls):
                unscored += 1  # neither the trace nor a row of the run says what the check read
            selected += any(_selection(c) for c in trace.llm_calls)
            whole = [part for part, _ in calls] == [None]
            unchecked += settings.workflow.verify and check is None and whole and verdict(trace) is None
            event = replayed(trace, chunks, settings, scorer, calibrator, logprobs, check)
            new = (
                old
                if event is None
                else _scored(question, event, [c.chunk for c in event.citations], trace, chunks, doc_of)
            )
            if row is not None:  # what only the model gave, as the run logged it
                kept_signals = {k: v for k, v in row.signals.items() if k in MODEL_SIGNALS}
                new = replace(new, signals={**new.signals, **kept_signals})
            before.append(old)
            after.append(new)
            if outcome(old) != outcome(new) or old.citation_on_evidence != new.citation_on_evidence:
                changed.append(f"{question.id}: {outcome(old)} → {outcome(new)}  {new.answer[:90]!r}")
    finally:
        traces.close()
        catalog.close()
    print(f"{len(after)} of {len(answer_set.questions)} questions have a trace in {state}", file=sys.stderr)
    if selected:
        print(f"{selected} were answered after a selection step: replayed as if written without it", file=sys.stderr)
    if unchecked:
        print(
            f"{unchecked} whole answers have no check by the model in their trace (a run made with workflow.verify "
            "off): their confidence reads it as missing; --verify asks the model for it",
            file=sys.stderr,
        )
    if unscored:
        print(
            f"{unscored} have no log-probabilities in their trace nor a row of the same answer in a result file of "
            "the run (a model that gives none; or a run traced before calls kept them: name its result file with "
            "--rows, or their confidence may differ from the run's)",
            file=sys.stderr,
        )
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


def _run_rows(state: Path, named: Path | None) -> dict[str, list[Row]]:
    """The rows of the run's result file (``named``), else of every result file under results/answers made over
    ``state`` (its folder's name: a copy of the state elsewhere still finds them), by question id."""
    files = [named] if named is not None else [p for p in sorted(RESULTS.glob("*.json")) if _made_over(p, state)]
    rows: dict[str, list[Row]] = {}
    for path in files:
        for row in load_rows(path):
            rows.setdefault(row.id, []).append(row)
    return rows


def _made_over(path: Path, state: Path) -> bool:
    try:
        folder = json.loads(path.read_text("utf-8")).get("state", {}).get("folder", "")
    except (OSError, ValueError, AttributeError):
        return False
    return isinstance(folder, str) and Path(folder).name == state.name


def _logprobs_of(signals: dict[str, float]) -> tuple[float, ...] | None:
    """Log-probabilities with the mean and minimum the run logged (``logprob_mean``, ``logprob_min``: all the
    calibrator reads of them), for a trace written before model calls kept theirs; None when the run had none.
    A question of several parts logged its lowest part's only, which then stands for every part."""
    if not signals or signals.get("logprob_missing", 1.0):
        return None
    mean, low = signals["logprob_mean"], signals["logprob_min"]
    return (low, 2 * mean - low)  # two values: their mean is ``mean``, their minimum ``low``


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
