"""``python -m ragbench.bench answer``: where the seconds of an answer go, stage by stage.

    python -m ragbench.bench answer [--set data/eval/answers/debian-manuals.yaml --stride 8] \\
        [--output results/bench/answer.json]

Asks the demo questions (assets/examples.json, over the demo knowledge base in a fresh state) and a spread of
an answer set's questions (over its cached state, see ``ragbench.answers``) through the engine, as the app
does after its warm-up, and prints per set the p50 and p95 of each stage: rewrite, routing, retrieval (with
translation), the quoted evidence on screen, the prompt read (from asking the model to its first token),
generation, the first token and the whole answer; with the answer prompt's size, the prefill speed inside the
app (llama.cpp's own counters: prompt tokens actually read ÷ the time reading them) and, at the end, the same
model reading the same prompt with nothing else running. JSON rows and summary go to ``--output``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ragapp.config import REPO_ROOT, Settings
from ragapp.core.events import EngineEvent, StageEvent
from ragapp.core.turn import Turn
from ragapp.core.types import ChatTurn
from ragapp.models.llm import LLM, LLMS
from ragbench.cli import parse_counts, run_command, settings_snapshot, write_json

DEMO_QUESTIONS = REPO_ROOT / "assets" / "examples.json"
DEFAULT_SET = REPO_ROOT / "data" / "eval" / "answers" / "debian-manuals.yaml"
STAGES = ("rewrite", "route", "retrieve", "translate", "rephrase", "evidence", "prompt_read", "generation", "ttft",
          "total")  # fmt: skip

# Stages that call no model: the search quoted while routing's classifier call runs starts after that call,
# which is still routing's.
NO_MODEL_CALLS = frozenset({"early search"})


@dataclass
class CallFigures:
    """One model call: the stage it served, and what llama.cpp counted for it (when the backend counts)."""

    stage: str
    prompt_tokens_read: int | None = None
    prompt_s: float | None = None
    generated_tokens: int | None = None
    generated_s: float | None = None


class MeasuringLLM:
    """The model, with each call's prefill and generation counted (llama.cpp's counters, read before and after
    the call). ``stage`` is set by the reader of the events: the stage a call starts in is the one it serves."""

    def __init__(self, inner: LLM) -> None:
        self.inner = inner
        self.stage = ""
        self.calls: list[CallFigures] = []
        self.last_messages: list[ChatTurn] = []

    @property
    def name(self) -> str:
        return self.inner.name

    def __getattr__(self, attr: str) -> Any:  # warm_up, close: whatever the backend offers
        return getattr(self.inner, attr)

    def stream_chat(self, messages: list[ChatTurn], **kwargs: Any) -> Iterator[str]:
        figures = CallFigures(self.stage)
        self.calls.append(figures)
        if self.stage == "generate":
            self.last_messages = list(messages)
        counters = getattr(self.inner, "counters", None)
        before = counters() if counters is not None else None
        try:
            yield from self.inner.stream_chat(messages, **kwargs)
        finally:
            if counters is not None and before is not None:
                after = counters()
                figures.prompt_tokens_read = after.prompt_tokens - before.prompt_tokens
                figures.prompt_s = round(after.prompt_s - before.prompt_s, 3)
                figures.generated_tokens = after.generated_tokens - before.generated_tokens
                figures.generated_s = round(after.generated_s - before.generated_s, 3)


@dataclass
class Timing:
    """One question's seconds per stage (None: the stage did not run), counted from Send."""

    set: str
    id: str
    question: str
    seconds: dict[str, float | None] = field(default_factory=dict)
    prompt_tokens: int | None = None  # the answer prompt, estimated as the app budgets it
    passages: int | None = None
    calls: list[CallFigures] = field(default_factory=list)
    answer: str = ""


def time_events(events: Iterable[EngineEvent], llm: MeasuringLLM, set_name: str, qid: str, question: str) -> Timing:
    """Read one question's events and time its stages (see the module docstring)."""
    row = Timing(set_name, qid, question, dict.fromkeys(STAGES))
    llm.calls = []
    turn = Turn()
    for event in events:
        turn.apply(event)
        if isinstance(event, StageEvent) and event.status == "started" and event.stage not in NO_MODEL_CALLS:
            llm.stage = event.stage  # the model calls that follow are this stage's
    row.seconds["total"] = turn.now()
    row.answer = turn.text if turn.answer is not None else ""
    row.seconds["evidence"] = turn.evidence_s
    row.seconds["ttft"] = first_token = turn.first_token_s
    generate = [s for s in turn.stages if s.stage == "generate"]
    if generate:  # a question of parts: its first part
        row.prompt_tokens = generate[0].started_detail.get("prompt tokens")
        row.passages = generate[0].started_detail.get("passages")
        if first_token is not None:
            row.seconds["prompt_read"] = first_token - generate[0].started_s
            ended = [s.ended_s for s in generate if s.status != "started" and s.ended_s is not None]
            if ended:
                row.seconds["generation"] = ended[-1] - first_token
    for stage in ("rewrite", "route", "translate", "rephrase"):
        durations = [s.duration_s for s in turn.stages if s.stage == stage and s.duration_s is not None]
        if durations:
            row.seconds[stage] = sum(durations)
    retrieved = [s.duration_s for s in turn.stages if s.stage == "retrieve" and s.duration_s is not None]
    if retrieved:
        row.seconds["retrieve"] = retrieved[-1]
    row.calls = list(llm.calls)
    return row


def percentile(values: list[float], q: float) -> float | None:
    """The ``q`` quantile (0..1), interpolated as numpy does; None without values."""
    return float(np.percentile(values, 100 * q)) if values else None


def summarize(rows: list[Timing]) -> dict[str, Any]:
    """p50/p95 per stage over the questions where it ran (and how many), prompt sizes, and the speeds."""
    out: dict[str, Any] = {"questions": len(rows), "stages": {}}
    for stage in STAGES:
        values = [v for r in rows if (v := r.seconds.get(stage)) is not None]
        out["stages"][stage] = {"n": len(values), "p50": percentile(values, 0.5), "p95": percentile(values, 0.95)}
    answer_calls = [c for r in rows for c in r.calls if c.stage == "generate" and c.prompt_s]
    prefill = [c.prompt_tokens_read / c.prompt_s for c in answer_calls if c.prompt_tokens_read and c.prompt_s]
    generation = [c.generated_tokens / c.generated_s for c in answer_calls if c.generated_tokens and c.generated_s]
    read = [float(c.prompt_tokens_read) for c in answer_calls if c.prompt_tokens_read is not None]
    out["prompt_tokens_p50"] = percentile([float(r.prompt_tokens) for r in rows if r.prompt_tokens], 0.5)
    out["prompt_tokens_read_p50"] = percentile(read, 0.5)
    out["passages_p50"] = percentile([float(r.passages) for r in rows if r.passages is not None], 0.5)
    out["prefill_tokens_per_s_p50"] = percentile(prefill, 0.5)
    out["generation_tokens_per_s_p50"] = percentile(generation, 0.5)
    model_calls = [sum(1 for c in r.calls if c.stage != "generate") for r in rows]
    out["model_calls_before_answer_p50"] = percentile([float(n) for n in model_calls], 0.5)
    return out


def floor_ratios(rows: list[Timing], tokens_per_s: float) -> dict[str, Any]:
    """First token ÷ its floor, p50/p95 over the questions that got one: a question's floor is the prompt tokens
    its answer call read ÷ ``tokens_per_s`` (the same model reading a prompt alone), the first token's time if
    nothing came before the answer's reading (no rewrite, no routing call, no wait)."""
    ratios = []
    for row in rows:
        read = next((c.prompt_tokens_read for c in row.calls if c.stage == "generate" and c.prompt_tokens_read), None)
        ttft = row.seconds.get("ttft")
        if read and ttft is not None and tokens_per_s > 0:
            ratios.append(ttft / (read / tokens_per_s))
    return {"n": len(ratios), "p50": percentile(ratios, 0.5), "p95": percentile(ratios, 0.95)}


def fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def render(label: str, summary: dict[str, Any]) -> str:
    names = {"prompt_read": "prompt read", "ttft": "first token", "total": "full answer", "evidence": "evidence"}
    lines = [f"{label} · {summary['questions']} questions", f"  {'stage':14s} {'n':>3s} {'p50 s':>7s} {'p95 s':>7s}"]
    for stage, f in summary["stages"].items():
        lines.append(f"  {names.get(stage, stage):14s} {f['n']:3d} {fmt(f['p50'], 2):>7s} {fmt(f['p95'], 2):>7s}")
    lines.append(
        f"  answer prompt p50: {fmt(summary['prompt_tokens_p50'], 0)} tokens "
        f"({fmt(summary['prompt_tokens_read_p50'], 0)} read, the rest a kept prefix), "
        f"{fmt(summary['passages_p50'], 0)} passages; prefill {fmt(summary['prefill_tokens_per_s_p50'])} tokens/s, "
        f"generation {fmt(summary['generation_tokens_per_s_p50'])} tokens/s; "
        f"model calls before the answer p50 {fmt(summary['model_calls_before_answer_p50'], 0)}"
    )
    ratio = summary.get("first_token_to_floor")
    if ratio is not None:
        lines.append(
            f"  first token ÷ floor (tokens read ÷ standalone prefill): p50 {fmt(ratio['p50'], 2)}, "
            f"p95 {fmt(ratio['p95'], 2)} over {ratio['n']} questions"
        )
    return "\n".join(lines)


def standalone_prefill(llm: LLM, messages: list[ChatTurn]) -> dict[str, float] | None:
    """The local model reading ``messages`` afresh (its kept prefix dropped) with nothing else running."""
    inner: Any = getattr(llm, "inner", llm)
    counters = getattr(inner, "counters", None)
    if counters is None or not messages:
        return None
    inner.load().reset()  # forget the kept prefix, so every prompt token is read
    before = counters()
    "".join(inner.stream_chat(messages, max_tokens=1))
    after = counters()
    tokens, seconds = after.prompt_tokens - before.prompt_tokens, after.prompt_s - before.prompt_s
    return {"prompt_tokens": tokens, "seconds": round(seconds, 3), "tokens_per_s": round(tokens / seconds, 1)}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.bench answer", description=__doc__.split("\n\n")[0])
    p.add_argument("--set", dest="set_file", type=Path, default=DEFAULT_SET, help="answer set (default: %(default)s).")
    p.add_argument("--no-set", action="store_true", help="skip the answer set.")
    p.add_argument("--stride", type=int, default=8, help="ask every Nth question of the set (default: %(default)s).")
    p.add_argument("--limit", type=int, help="ask at most N questions per set.")
    p.add_argument("--cache", type=Path, default=REPO_ROOT / ".cache" / "answers", help="answer-set states.")
    p.add_argument("--output", type=Path, help="write rows and summaries here as JSON.")
    p.add_argument(
        "--while-enriching",
        type=Path,
        help="after the demo questions, upload this document into a base indexed in the background and ask them "
        "again while it is indexed (answer and search caches off in both rounds; the model still keeps the last prompt "
        "of each language, so with one question the second asking reads nothing: compare the tokens read).",
    )
    p.epilog = "App settings come from RAGAPP_* variables as usual (e.g. RAGAPP_WORKFLOW__FAST_ROUTE=false)."
    return p


def _demo_questions(limit: int | None) -> list[tuple[str, str, list[ChatTurn]]]:
    examples = json.loads(DEMO_QUESTIONS.read_text("utf-8"))
    out: list[tuple[str, str, list[ChatTurn]]] = [
        (f"demo-{i:02d}", str(e["question"]), []) for i, e in enumerate(examples, start=1)
    ]
    return out[:limit] if limit else out


def _ask_all(
    engine: Any, llm: MeasuringLLM, name: str, questions: list[tuple[str, str, list[ChatTurn]]]
) -> list[Timing]:
    rows = []
    for index, (qid, question, history) in enumerate(questions, start=1):
        events = engine.chat.ask(question, history, None, owner="ragbench")
        row = time_events(events, llm, name, qid, question)
        rows.append(row)
        ttft, total = row.seconds["ttft"], row.seconds["total"]
        print(f"[{name} {index}/{len(questions)}] ttft {fmt(ttft)} s, full {fmt(total)} s: {question[:60]}",
              file=sys.stderr)  # fmt: skip
    return rows


def _while_enriching(
    engine: Any,
    llm: MeasuringLLM,
    document: Path,
    questions: list[tuple[str, str, list[ChatTurn]]],
) -> list[Timing]:
    """The demo questions asked again while ``document`` is indexed in the background (its upload returns once
    it is searchable by keywords), each only if its indexing has not ended yet."""
    kb = "enriching"
    (result,) = engine.library.ingest([(document, document.name)], kb=kb)
    print(f"{result.message} Asking while it is indexed.", file=sys.stderr)
    rows: list[Timing] = []
    for qid, question, history in questions:
        if kb not in engine.enrichment.indexing():
            break
        rows += _ask_all(engine, llm, "demo while enriching", [(qid, question, history)])
    progress = engine.enrichment.progress(kb)
    print(f"{len(rows)} asked while indexing; then: {progress}", file=sys.stderr)
    return rows


def _run(args: argparse.Namespace) -> int:
    from ragapp.engine.build import Parts, build_engine, load_builtins
    from ragbench.answers.answer_set import load_set
    from ragbench.answers.state import engine_over, prepare_state, state_folder

    settings = Settings()
    if args.while_enriching is not None:  # a question asked again must run again, its search too
        settings = settings.model_copy(update={
            "answer_cache": settings.answer_cache.model_copy(update={"enabled": False}),
            "retrieval": settings.retrieval.model_copy(update={"cache_size": 0}),
        })  # fmt: skip
    load_builtins()
    llm = MeasuringLLM(LLMS.get(settings.llm.backend)(settings))
    sets: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="ragbench-answer-") as state:
        paths = settings.paths.model_copy(update={"state_dir": Path(state)})
        engine = build_engine(settings.model_copy(update={"paths": paths}), Parts(llm=llm))
        try:
            engine.warm_up()  # as the app does at start, before anyone asks
            rows = _ask_all(engine, llm, "demo", _demo_questions(args.limit))
            sets["demo"] = summarize(rows)
            if args.while_enriching is not None:
                busy = _while_enriching(engine, llm, args.while_enriching, _demo_questions(args.limit))
                sets["demo while enriching"] = summarize(busy)
                rows += busy
        finally:
            engine.close()
    last_messages = llm.last_messages
    if not args.no_set:
        answer_set = load_set(args.set_file)
        folder = state_folder(answer_set, settings, args.cache)

        engine, _ = prepare_state(answer_set, engine_over(settings, Parts(llm=llm)), folder)
        try:
            engine.warm_up()
            chosen = list(answer_set.questions[:: args.stride])[: args.limit or None]
            questions = []
            for q in chosen:
                history = [
                    t for turn in q.turns for t in (ChatTurn("user", turn.user), ChatTurn("assistant", turn.assistant))
                ]
                questions.append((q.id, q.question, history))
            answered = _ask_all(engine, llm, answer_set.name, questions)
        finally:
            engine.close()
        rows += answered
        sets[answer_set.name] = summarize(answered)
        last_messages = llm.last_messages or last_messages
    alone = standalone_prefill(llm, last_messages)
    for name, summary in sets.items():
        if alone is not None:
            summary["first_token_to_floor"] = floor_ratios([r for r in rows if r.set == name], alone["tokens_per_s"])
        print(render(f"{name} · {llm.name}", summary))
    if alone is not None:
        print(
            f"standalone: the last answer prompt read afresh, nothing else running: {alone['prompt_tokens']} tokens "
            f"in {alone['seconds']:.2f} s = {alone['tokens_per_s']:.0f} tokens/s"
        )
    if args.output:
        payload = {
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "model": llm.name,
            "cpus": os.cpu_count(),
            "machine": platform.processor() or platform.machine(),
            "sets": sets,
            "standalone_prefill": alone,
            "settings": settings_snapshot(settings),
            "rows": [asdict(r) for r in rows],
        }
        write_json(args.output, payload)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_counts(_parser(), argv, "stride", "limit")
    return run_command(_run, args)
