"""``python -m ragbench.answers``: answer quality on a real-document answer set.

    python -m ragbench.answers --set data/eval/answers/debian-manuals.yaml [--mode workflow|agent|auto] \\
        [--split dev|test] [--limit N] [--state DIR] [--output results/answers/NAME.json] [--compare OLD.json]

Ingests the set's documents into their knowledge bases once (an engine state under --cache keyed by the
documents' content, the chunking and the embedder; --state names the folder instead), then asks every question
with the app's defaults (the packaged local model unless RAGAPP_* says otherwise). A multi-turn question gets
the set's earlier turns, user and assistant as written there, as its history. Prints correct, abstained,
false abstentions, citation on evidence, evidence in prompt, time to first token and seconds per question type,
per language and overall, then accurate / missing / hallucinated and truthfulness as CRAG scores them
(``ragbench.answers.truth``); writes the rows, the summary, the settings and the model as JSON (after every
question, so an interrupted run keeps what it measured). ``--compare OLD.json`` puts an earlier result file's
truthfulness beside this run's and names the questions that got better and worse (kept in the JSON too).
``--split`` asks only that split of a split set (tune on dev; run test only to report).
``--resume`` continues an interrupted run: the rows already in ``--output`` are kept (when that file was written
with the same settings, model, set and split) and only the questions it lacks are asked.
``--missing-packages`` prints the Debian packages to install and exits.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragapp.config import REPO_ROOT, Settings
from ragapp.core.errors import ConfigError, LLMError
from ragapp.core.types import ChatTurn
from ragapp.models.llm import LLM, LLMS, stream_within
from ragbench.answers.answer_set import (
    SPLITS,
    TYPES,
    Question,
    install_command,
    load_set,
    missing_documents,
    pdfs_as,
)
from ragbench.answers.scoring import Row, score, summarize, watch
from ragbench.answers.state import OWNER, engine_over, prepare_state, set_doc_ids, state_folder
from ragbench.answers.truth import comparison_json, comparison_text, load_rows, truth_table
from ragbench.cli import parse_counts, run_command, settings_snapshot

if TYPE_CHECKING:
    from ragapp.engine.engine import Engine

MODES = ("workflow", "agent", "auto")
PREFLIGHT_TIMEOUT_S = 60.0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.answers", description=__doc__.split("\n\n")[0])
    p.add_argument("--set", dest="set_file", type=Path, required=True, help="the answer set (YAML).")
    p.add_argument("--mode", choices=MODES, help="answering mode (default: the configured one).")
    p.add_argument("--limit", type=int, help="ask only the first N questions.")
    p.add_argument(
        "--stride", type=int, default=1, help="ask every Nth question (a spread over all documents and types)."
    )
    p.add_argument("--lang", choices=("en", "zh"), help="ask only the questions in this language.")
    p.add_argument("--split", choices=SPLITS, help="ask only this split of a split set (dev: tune; test: report).")
    p.add_argument(
        "--pdfs",
        choices=("scan", "text"),
        help="ask only the answerable questions over the set's PDFs, each PDF as a scan of its pages (rendered at "
        "150 dpi with a slight skew and blur, read by OCR) or as text; compare the two runs.",
    )
    p.add_argument("--state", type=Path, help="engine state folder to build or reuse (default: under --cache).")
    p.add_argument("--cache", type=Path, default=REPO_ROOT / ".cache" / "answers", help="default: .cache/answers.")
    p.add_argument("--output", type=Path, help="write rows, summary, settings and model here as JSON.")
    p.add_argument("--quiet", action="store_true", help="no progress line per question.")
    p.add_argument("--compare", type=Path, help="an earlier result file: truthfulness side by side, and what changed.")
    p.add_argument(
        "--resume",
        action="store_true",
        help="--output exists from an interrupted run with the same settings: keep its rows, ask only the rest.",
    )
    p.add_argument("--missing-packages", action="store_true", help="print the packages to install, then exit.")
    return p


def main(argv: list[str] | None = None) -> int:
    return run_command(_run, parse_counts(_parser(), argv, "limit", "stride"))


def preflight(llm: LLM, timeout_s: float) -> float:
    """Load the model and ask for one token, so a model that cannot answer stops the run before its documents are
    indexed; the seconds it took. Raises ``LLMError`` saying nothing was measured (no server, no model file)."""
    start = time.perf_counter()
    try:
        load = getattr(llm, "load", None)
        if callable(load):
            load()
        messages = [ChatTurn("user", "Reply with the word OK.")]
        for _ in stream_within(lambda: llm.stream_chat(messages, max_tokens=1, temperature=0.0), timeout_s):
            pass
    except LLMError as exc:
        raise LLMError(f"the model ({llm.name}) failed a one-token test call, so nothing was measured: {exc}") from exc
    return time.perf_counter() - start


def ask(engine: Engine, question: Question, mode: str | None, set_doc_of: dict[str, str]) -> Row:
    """One question with its earlier turns (as written in the set) as the history, scored."""
    history: list[ChatTurn] = []
    for turn in question.turns:
        history += [ChatTurn("user", turn.user), ChatTurn("assistant", turn.assistant)]
    events = engine.chat.ask(question.question, history, None, mode=mode, owner=OWNER)  # type: ignore[arg-type]
    return score(question, watch(events), set_doc_of)


def _pct(value: float | None) -> str:
    return "   -" if value is None else f"{100 * value:3.0f}%"


def _sec(value: float | None) -> str:
    return "    -" if value is None else f"{value:5.1f}"


def render_table(label: str, summary: dict[str, Any]) -> str:
    head = f"{'':14s} {'n':>4s} {'correct':>7s} {'abstain':>7s} {'false-ab':>8s} {'unans-ab':>8s} {'cite-ev':>7s} "
    head += f"{'ev-prompt':>9s} {'quote p50':>9s} {'ttft p50':>8s} {'s p50':>6s}"
    lines = [label, head]
    groups = [*summary["by_type"].items(), *(("lang " + k, v) for k, v in summary["by_lang"].items())]
    groups += [*summary.get("by_tag", {}).items(), *summary.get("by_kind", {}).items()]
    for name, f in [*groups, ("overall", summary["overall"])]:
        lines.append(
            f"{name:14s} {f['questions']:4d} {_pct(f['correct']):>7s} {_pct(f['abstained']):>7s} "
            f"{_pct(f['false_abstention']):>8s} {_pct(f['unanswerable_abstained']):>8s} "
            f"{_pct(f['citation_on_evidence']):>7s} {_pct(f['evidence_in_prompt']):>9s} "
            f"{_sec(f.get('evidence_s_p50')):>9s} {_sec(f['ttft_s_p50']):>8s} {_sec(f['seconds_p50']):>6s}"
        )
    lines.append("correct, false-ab, cite-ev, ev-prompt: of answerable questions; unans-ab: of unanswerable ones.")
    lines.append("quote: seconds to the quoted evidence sentence; ttft: to the model's first token.")
    overall = summary["overall"]
    if overall.get("high_share") is not None:
        levels = [
            f"{level} {_pct(overall[f'{level}_share']).strip()} of answers, "
            f"{_pct(overall[f'{level}_right']).strip()} right"
            for level in ("high", "medium", "low")
        ]
        lines.append("confidence: " + "; ".join(levels))
    if (quote := summary["overall"].get("quote_correct")) is not None:
        lines.append(f"quoted evidence sentence holding the gold answer: {_pct(quote).strip()}")
    if (trap := summary["overall"].get("trap_stated")) is not None:
        lines.append(f"near-miss questions answered with the neighbouring (wrong) value: {_pct(trap).strip()}")
    return "\n".join(lines)


def by_split(rows: list[Row]) -> dict[str, dict[str, Any]]:
    """The summary of each split the rows hold ({} for a set that is not split, or a run of one split)."""
    splits = sorted({r.split for r in rows} - {""})
    if len(splits) < 2:
        return {}
    return {s: summarize([r for r in rows if r.split == s], TYPES) for s in splits}


def _write(path: Path, payload: dict[str, Any], rows: list[Row], earlier: tuple[Path, list[Row]] | None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {**payload, "summary": summarize(rows, TYPES), "rows": [r.as_json() for r in rows]}
    if splits := by_split(rows):
        payload["summary_by_split"] = splits
    if earlier is not None:
        payload["compared_with"] = comparison_json(earlier[0], earlier[1], rows)
    path.write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n", "utf-8")


def resumed_rows(path: Path, payload: dict[str, Any], questions: list[Question]) -> dict[str, Row]:
    """The rows of an interrupted run at ``path`` by question id, or a ConfigError where it was asked otherwise.

    A row is reused only if the file was written with the same settings, model, set, split and mode: mixing two
    configurations would make one result of two runs.
    """
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot resume from it ({exc})") from None
    for key in ("set", "model", "mode", "split", "pdfs", "settings"):
        if data.get(key) != payload[key]:
            raise ConfigError(f"{path}: cannot resume, it was run with another {key!r}; choose a new --output")
    asked = {q.id for q in questions}
    return {row.id: row for row in load_rows(path) if row.id in asked}


def _run(args: argparse.Namespace) -> int:
    from ragapp.engine.build import Parts, load_builtins

    answer_set = load_set(args.set_file)
    missing = missing_documents(answer_set)
    if args.pdfs and not missing:
        answer_set = pdfs_as(answer_set, args.pdfs)
    if args.missing_packages:
        print(" ".join(dict.fromkeys(d.package for d in missing)))
        return 0
    if missing:
        names = ", ".join(str(d.path) for d in missing)
        raise ConfigError(f"missing documents ({names}); install them with: {install_command(missing)}")
    if args.split and not any(q.split for q in answer_set.questions):
        raise ConfigError(f"{args.set_file}: this set is not split into dev and test")
    questions = [q for q in answer_set.questions if args.lang in (None, q.lang) and args.split in (None, q.split)]
    questions = questions[:: args.stride]
    questions = questions[: args.limit] if args.limit else questions
    earlier = (args.compare, load_rows(args.compare)) if args.compare else None  # a bad file fails before the run
    if args.resume and not args.output:
        raise ConfigError("--resume continues the run in --output: name that file")
    settings = Settings()
    load_builtins()
    inner = LLMS.get(settings.llm.backend)(settings)
    load_s = preflight(inner, min(settings.llm.timeout_s, PREFLIGHT_TIMEOUT_S))
    print(f"{inner.name}: answered a test call in {load_s:.1f} s", file=sys.stderr)

    folder = args.state or state_folder(answer_set, settings, args.cache)

    engine, how = prepare_state(answer_set, engine_over(settings, Parts(llm=inner)), folder)
    rows: list[Row] = []
    try:
        set_doc_of = set_doc_ids(engine.library.documents(), answer_set)
        print(f"{answer_set.name}: {len(questions)} questions over {folder} ({how})", file=sys.stderr)
        payload: dict[str, Any] = {
            "set": str(args.set_file),
            "name": answer_set.name,
            "model": inner.name,
            "mode": args.mode or settings.agent.mode,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "questions": len(questions),
            "split": args.split or "all",
            "pdfs": args.pdfs or "as the set gives them",
            "cpus": os.cpu_count(),
            "model_load_s": round(load_s, 2),
            "history": "the set's earlier turns (user and assistant as written there)",
            "documents": [
                {"id": d.id, "package": d.package, "version": d.version, "path": str(d.path), "kb": d.kb}
                for d in answer_set.documents
            ],
            "state": {"folder": str(folder), "how": how, "embedder": engine.status().embedder},
            "settings": settings_snapshot(settings),
            "complete": False,
        }
        done: dict[str, Row] = {}
        if args.resume and args.output.exists():
            done = resumed_rows(args.output, payload, questions)
            payload["resumed"] = len(done)
            print(f"{args.output}: {len(done)} rows kept, {len(questions) - len(done)} to ask", file=sys.stderr)
        try:
            for index, question in enumerate(questions, start=1):
                if (kept := done.get(question.id)) is not None:
                    rows.append(kept)
                    continue
                row = ask(engine, question, args.mode, set_doc_of)
                rows.append(row)
                if not args.quiet:
                    mark = {"accurate": "ok ", "missing": "?? ", "hallucinated": "-- "}[row.verdict]
                    print(f"[{index}/{len(questions)}] {mark}{row.id}: {row.answer[:80]!r}", file=sys.stderr)
                if args.output:
                    _write(args.output, payload, rows, earlier)
        except KeyboardInterrupt:
            payload["stopped"] = "interrupted"
    finally:
        engine.close()
    summary = summarize(rows, TYPES)
    print(render_table(f"{answer_set.name} · {inner.name} · {len(rows)} questions", summary))
    print("\n" + truth_table(answer_set.name, summary))
    for split, summary in by_split(rows).items():  # both splits asked: each alone, and the gap
        print("\n" + render_table(f"{split} split · {summary['overall']['questions']} questions", summary))
        print("\n" + truth_table(f"{split} split", summary))
    if earlier is not None:
        print("\n" + comparison_text(earlier[0].name, "this run", earlier[1], rows))
    if args.output:
        payload["complete"] = len(rows) == len(questions)
        _write(args.output, payload, rows, earlier)
        print(f"wrote {args.output}", file=sys.stderr)
    return 130 if payload.get("stopped") else 0


if __name__ == "__main__":
    raise SystemExit(main())
