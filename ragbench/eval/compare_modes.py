"""``python -m ragbench.eval.compare_modes``: Workflow against Agent answering on a HotpotQA-style BEIR folder.

    python -m ragbench.eval.compare_modes --dataset ../shared/data/hotpotqa-dev200 --modes workflow,agent \\
        --limit 30 --cache .cache/eval --output results/agent/hotpotqa-local-qwen2.5-coder-1.5b.json

Indexes the corpus once into an engine state under --cache (each paragraph one document named after its
title, with the BEIR id as its document id; a store that ``python -m ragbench.eval`` already embedded is
copied from --index-from instead of embedding again), then asks every question in each mode with a fresh
conversation and records: both supporting paragraphs retrieved, EM / F1 / contains of the answer against
``metadata.answers``, model calls and tokens (from each request's trace), seconds, agent steps and workflow
fallbacks. Prints a table and writes the rows, the summary, the model and the settings as JSON (rewritten after
every question, so an interrupted run keeps what it measured; --max-minutes stops asking after a time budget).

The model comes from the usual RAGAPP_* settings: the packaged local model by default;
RAGAPP_LLM__BACKEND=openai with RAGAPP_LLM__BASE_URL and RAGAPP_LLM__MODEL measures a server model. A model
that cannot answer a one-token test call stops the command before anything is indexed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragapp.config import REPO_ROOT, Settings
from ragapp.core.errors import ConfigError
from ragapp.models.llm import LLMS
from ragbench.cli import parse_counts, run_command, settings_snapshot
from ragbench.eval.answers import AnswerRow, summarize
from ragbench.eval.beir import load_beir
from ragbench.eval.mode_asking import ask_once, gold_answers, preflight
from ragbench.eval.mode_index import prepare_state
from ragbench.eval.mode_report import progress_line, render_table, write_json

MODES = ("workflow", "agent", "auto")
PREFLIGHT_TIMEOUT_S = 60.0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.eval.compare_modes", description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", type=Path, required=True, help="BEIR folder whose queries carry metadata.answers.")
    p.add_argument("--split", default="test", help="qrels split holding the supporting paragraphs (default: test).")
    p.add_argument("--modes", default="workflow,agent", help="comma-separated: workflow, agent, auto.")
    p.add_argument("--limit", type=int, help="ask only the first N questions.")
    p.add_argument(
        "--max-minutes",
        type=float,
        help="start no new question after this many minutes of asking (the table and JSON then hold the "
        "questions answered so far; Ctrl-C does the same at once).",
    )
    p.add_argument(
        "--cache", type=Path, default=REPO_ROOT / ".cache" / "eval", help="keep the indexed corpus here (default: "
        ".cache/eval); a second run reuses it."
    )  # fmt: skip
    p.add_argument(
        "--index-from",
        type=Path,
        action="append",
        default=[],
        help="a `python -m ragbench.eval --cache` folder whose store of this corpus may be copied instead of "
        "embedding again (repeatable; --cache itself is always looked at).",
    )
    p.add_argument("--output", type=Path, help="write the rows, the summary, the model and the settings here.")
    p.add_argument("--name", help="label of this run in the output (default: the model's name).")
    p.add_argument("--quiet", action="store_true", help="no progress line per answer.")
    p.epilog = "The model, retrieval, workflow and agent settings come from RAGAPP_* variables, as in the app."
    return p


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parse_counts(parser, argv, "limit")
    if args.max_minutes is not None and args.max_minutes <= 0:
        parser.error("--max-minutes must be positive")
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if not modes or unknown:
        parser.error(f"--modes: unknown {', '.join(unknown) or '(none given)'}; choose from {', '.join(MODES)}")
    args.modes = list(dict.fromkeys(modes))
    return run_command(_run, args)


def _run(args: argparse.Namespace) -> int:
    from ragapp.engine.build import Parts, build_engine, load_builtins

    dataset = load_beir(args.dataset, args.split)
    queries = list(dataset.queries[: args.limit] if args.limit else dataset.queries)
    missing = [q.query_id for q in queries if not gold_answers(q)]
    if missing:
        raise ConfigError(
            f"{len(missing)} of {len(queries)} questions have no metadata.answers (e.g. {missing[0]}): "
            "this command needs gold answers"
        )
    corpus_file = args.dataset / "corpus.jsonl"
    settings = Settings()

    # The model first: a server that is not there is reported before minutes of indexing.
    load_builtins()
    inner = LLMS.get(settings.llm.backend)(settings)
    load_s = preflight(inner, min(settings.llm.timeout_s, PREFLIGHT_TIMEOUT_S))
    model = inner.name
    name = args.name or model
    print(f"{name}: answered a test call in {load_s:.1f} s", file=sys.stderr)

    start = time.perf_counter()
    report, how = prepare_state(dataset, corpus_file, settings, args.cache, args.index_from)
    index_s = time.perf_counter() - start
    print(
        f"{dataset.name}: {len(queries)} questions, {report.documents} documents ({report.chunks} chunks) in "
        f"{report.folder} ({how}, {index_s:.0f} s)",
        file=sys.stderr,
    )
    # The engine over that state (never the demo), with the model that passed the test call; traces on, since
    # each question's model calls and tokens are read from its trace.
    paths = settings.paths.model_copy(update={"state_dir": report.folder, "load_demo": False})
    traces = settings.traces.model_copy(update={"enabled": True})
    engine = build_engine(settings.model_copy(update={"paths": paths, "traces": traces}), Parts(llm=inner))
    rows: list[AnswerRow] = []
    stopped = ""
    try:
        doc_of_source = {d.name: d.doc_id for d in engine.library.documents()}
        payload: dict[str, Any] = {
            "name": name,
            "model": model,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "dataset": dataset.name,
            "split": args.split,
            "modes": args.modes,
            "questions": len(queries),
            "complete": False,
            "stopped": None,
            "cpus": os.cpu_count(),
            "model_load_s": round(load_s, 2),
            "index": {
                "folder": str(report.folder),
                "documents": report.documents,
                "chunks": report.chunks,
                "how": how,
                "seconds": {k: round(v, 1) for k, v in report.seconds.items()},
                "embedder": engine.status().embedder,
            },
            "settings": settings_snapshot(settings),
        }
        started = time.monotonic()
        try:
            for index, query in enumerate(queries):
                if index and args.max_minutes is not None and time.monotonic() - started > 60 * args.max_minutes:
                    stopped = f"the {args.max_minutes:g}-minute budget ran out"
                    break
                answered: list[AnswerRow] = []  # kept only once every mode has answered, so modes stay paired
                for mode in args.modes:
                    row = ask_once(engine, dataset, query, mode, doc_of_source)
                    answered.append(row)
                    if not args.quiet:
                        print(progress_line(index, len(queries), row), file=sys.stderr, flush=True)
                rows.extend(answered)
                if args.output:
                    write_json(args.output, payload, rows)
        except KeyboardInterrupt:
            stopped = "interrupted"
    finally:
        engine.close()
    count = len({r.query_id for r in rows})
    label = f"{dataset.name} · {name} · {count} questions"
    if stopped:
        label += f" (stopped after {count} of {len(queries)}: {stopped})"
    print(render_table(label, summarize(rows, args.modes)))
    if args.output:
        payload["complete"], payload["stopped"] = not stopped, stopped or None
        write_json(args.output, payload, rows)
        print(f"wrote {args.output}", file=sys.stderr)
    return 130 if stopped == "interrupted" else 0


if __name__ == "__main__":
    raise SystemExit(main())
