"""``python -m ragbench.routing``: how well the intent router routes a labelled question set.

    python -m ragbench.routing --questions tests/data/intents/demo_questions.yaml \\
        --tree data/intents/demo.yaml --output results/routing/local-qwen2.5-coder-1.5b.json

Builds the chat model from the usual RAGAPP_* settings (RAGAPP_LLM__BACKEND=openai with RAGAPP_LLM__BASE_URL
and RAGAPP_LLM__MODEL measures a server model), reads the intent tree from its file (no engine, no
documents), classifies and decides every question, prints accuracy (overall, per expected kind, per
language), clarification and fallback precision/recall, the calibration of its scores on each half of the file
(``ragbench.routing.calibration``), errors, latency and the misrouted questions, and
writes the per-question rows, the summary, the model and the settings used as JSON. With --documents, the
questions go through the whole router over a temporary index of those documents: like the app, it then
searches the knowledge bases before asking back, and falls back when nothing there is relevant.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragapp.config import REPO_ROOT, Settings
from ragapp.core.errors import ConfigError
from ragbench.cli import grid, parse_counts, run_command, write_json
from ragbench.routing.evaluate import (
    ACTIONS,
    EXPECTED_KINDS,
    RoutingRow,
    RoutingSetError,
    classify_and_decide,
    label_problems,
    load_questions,
    misrouted,
    run_routing,
    summarize,
)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.routing", description=__doc__.split("\n\n")[0])
    p.add_argument("--questions", type=Path, required=True, help="labelled questions (YAML or JSON).")
    p.add_argument(
        "--tree",
        type=Path,
        help="intent tree file (YAML or JSON; default: RAGAPP_PATHS__DEMO_INTENTS, data/intents/demo.yaml).",
    )
    p.add_argument("--output", type=Path, help="write the rows, the summary and the settings here as JSON.")
    p.add_argument("--limit", type=int, help="score only the first N questions (quick checks).")
    p.add_argument("--name", help="label of this run in the output (default: the model's name).")
    p.add_argument(
        "--documents",
        type=Path,
        nargs="?",
        const=False,
        help="index this folder (default: the demo documents) into a temporary store and route through the "
        "whole router, which also checks the knowledge bases before asking back (as the app does); without "
        "it: the classifier and the decision rules only.",
    )
    p.add_argument("--quiet", action="store_true", help="no progress line per question.")
    p.epilog = "The model comes from RAGAPP_LLM__* and the decision rules from RAGAPP_WORKFLOW__*, as in the app."
    return p


def main(argv: list[str] | None = None) -> int:
    return run_command(_run, parse_counts(_parser(), argv, "limit"))


def _run(args: argparse.Namespace) -> int:
    from ragapp.engine.build import load_builtins
    from ragapp.models.llm import LLMS
    from ragapp.router.classifier import IntentClassifier
    from ragapp.router.tree import IntentTreeError, parse_tree

    settings = Settings()
    tree_path: Path = args.tree or settings.paths.demo_intents
    try:
        tree = parse_tree(tree_path.read_text("utf-8")).validated()  # knowledge bases unchecked: no store here
    except OSError as exc:
        raise ConfigError(f"cannot read the intent tree {tree_path}: {exc.strerror or exc}") from None
    except IntentTreeError as exc:
        raise ConfigError(f"the intent tree {tree_path} cannot be used: {'; '.join(exc.problems)}") from None
    questions = load_questions(args.questions)
    problems = label_problems(questions, tree)
    if problems:
        raise RoutingSetError(problems)
    if args.limit is not None:
        questions = questions[: args.limit]

    def progress(index: int, row: RoutingRow) -> None:
        if args.quiet:
            return
        mark = "ok  " if row.correct else "MISS"
        got = row.action + (f" {row.codes[0]}" if row.codes and row.action != "clarify" else "")
        print(
            f"[{index + 1:>3}/{len(questions)}] {row.seconds:6.2f}s {mark} {got:<30} {row.question}",
            file=sys.stderr,
            flush=True,
        )

    load_s = None
    documents: dict[str, Any] | None = None
    if args.documents is None:
        load_builtins()
        llm = LLMS.get(settings.llm.backend)(settings)
        model = llm.name
        name = args.name or model
        print(
            f"{name}: {len(questions)} questions, {len(tree.leaves())} leaves in {_shown(tree_path)}", file=sys.stderr
        )
        load = getattr(llm, "load", None)  # the local model: load it now, so the first question does not pay
        if callable(load):
            start = time.perf_counter()
            load()
            load_s = time.perf_counter() - start
            print(f"model loaded in {load_s:.1f} s", file=sys.stderr)
        route = classify_and_decide(IntentClassifier(llm, settings.workflow.step_timeout_s), tree, settings.workflow)
        rows = run_routing(questions, tree, route, on_row=progress)
    else:
        from ragapp.engine.build import build_engine

        folder: Path = args.documents or settings.paths.demo_dir
        if not folder.is_dir():
            raise ConfigError(f"--documents: {folder} is not a folder")
        state = Path(tempfile.mkdtemp(prefix="ragapp-routing-"))
        try:
            # A throw-away state: the documents go into the "demo" knowledge base and the tree is seeded from
            # --tree, exactly as the app does on first start.
            paths = settings.paths.model_copy(
                update={"state_dir": state, "demo_dir": folder, "demo_intents": tree_path, "load_demo": True}
            )
            start = time.perf_counter()
            engine = build_engine(settings.model_copy(update={"paths": paths}))
            try:
                status = engine.status()
                documents = {
                    "folder": _shown(folder),
                    "documents": status.documents,
                    "chunks": status.chunks,
                    "embedder": status.embedder,
                    "index_s": round(time.perf_counter() - start, 2),
                }
                if engine.intents.tree().to_data() != tree.to_data():
                    raise ConfigError(f"the intent tree {tree_path} could not be written to the temporary store")
                model = status.llm
                name = args.name or model
                print(
                    f"{name}: {len(questions)} questions, {len(tree.leaves())} leaves in {_shown(tree_path)}; "
                    f"{status.documents} documents ({status.chunks} chunks) from {_shown(folder)} indexed in "
                    f"{documents['index_s']:.0f} s; the first question also loads the model",
                    file=sys.stderr,
                )
                rows = run_routing(questions, tree, engine.intents.test, on_row=progress)
            finally:
                engine.close()
        finally:
            shutil.rmtree(state, ignore_errors=True)

    mode = "classifier + decision rules" if documents is None else "router with the knowledge-base check"
    summary = summarize(rows)
    print(render_summary(f"{name} · {args.questions.name} · {mode}", summary))
    print(render_misrouted(rows))
    if args.output:
        payload: dict[str, Any] = {
            "name": name,
            "model": model,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "mode": mode,
            "questions_file": _shown(args.questions),
            "tree_file": _shown(tree_path),
            "model_load_s": round(load_s, 2) if load_s is not None else None,
            "documents": documents,  # --documents: what the router's ask-back check searched; None without
            "cpus": os.cpu_count(),  # latency context: the local model uses every core unless told otherwise
            "settings": {
                "llm": settings.llm.model_dump(mode="json", exclude={"api_key"}),
                "workflow": settings.workflow.model_dump(mode="json"),
            },
            "summary": summary,
            "rows": [row.as_json() for row in rows],
        }
        write_json(args.output, payload)
    return 0


def _shown(path: Path) -> str:
    resolved = path.resolve()
    return str(resolved.relative_to(REPO_ROOT)) if resolved.is_relative_to(REPO_ROOT) else str(path)


# -- rendering -----------------------------------------------------------------------------------


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _seconds(ms: float | None) -> str:
    return "n/a" if ms is None else f"{ms / 1000:.2f} s"


def render_summary(label: str, summary: dict[str, Any]) -> str:
    groups: list[tuple[str, dict[str, Any]]] = [
        ("all", {"n": summary["questions"], "accuracy": summary["accuracy"], "accuracy_any": summary["accuracy_any"]}),
        *((f"expect {kind}", summary["by_kind"][kind]) for kind in EXPECTED_KINDS),
        *((f"lang {lang}", group) for lang, group in summary["by_lang"].items()),
    ]
    lines = [label, ""]
    lines += grid(
        ["questions", "n", "accuracy", "any code"],
        [[name, str(g["n"]), _ratio(g["accuracy"]), _ratio(g["accuracy_any"])] for name, g in groups if g["n"]],
    )
    lines.append("")
    lines += grid(
        ["expected \\ got", *ACTIONS],
        [
            [kind, *(str(summary["confusion"][kind][action]) for action in ACTIONS)]
            for kind in EXPECTED_KINDS
            if summary["by_kind"][kind]["n"]
        ],
    )
    lines.append("")
    for action in ("clarify", "fallback"):
        pr = summary[action]
        lines.append(
            f"{action:<9} precision {_ratio(pr['precision'])} ({pr['hits']}/{pr['taken']} taken)   "
            f"recall {_ratio(pr['recall'])} ({pr['hits']}/{pr['labelled']} labelled)"
        )
    errors, ignored, lat = summary["errors"], summary["ignored"], summary["latency_ms"]
    lines.append(
        f"errors    {errors['total']} (model failures {errors['llm']}, unparseable replies {errors['unparseable']})"
        f"   ignored ids {ignored['ids']} in {ignored['questions']} question(s)"
    )
    lines.append(
        f"latency   first {_seconds(lat['first_ms'])}   then p50 {_seconds(lat['p50'])}  p95 {_seconds(lat['p95'])}  "
        f"mean {_seconds(lat['mean'])} (n={lat['n']})"
    )
    calibrated = summary.get("calibration")
    if calibrated:
        lines += ["", *render_calibration(calibrated)]
    fast = summary.get("without_model")
    if fast:
        lines.append(
            f"no model call: {fast['n']} of {summary['questions']} questions, accuracy {_ratio(fast['accuracy'])}, "
            f"p50 {_seconds(fast['latency_ms']['p50'])}; the others: accuracy {_ratio(fast['others_accuracy'])}, "
            f"p50 {_seconds(fast['others_latency_ms']['p50'])}"
        )
    return "\n".join(lines)


def render_calibration(calibrated: dict[str, Any]) -> list[str]:
    """The reliability table of both halves and their Brier score and ECE (``ragbench.routing.calibration``)."""
    dev, test = calibrated["dev"], calibrated["test"]
    lines = [
        f"calibration of the score given to the leaf ranked first ({calibrated['left_out']} questions left out: "
        "labelled clarify, or no leaf named)"
    ]
    rows = []
    for d, t in zip(dev["bins"], test["bins"], strict=True):
        rows.append(
            [
                f"{d['low']:.1f}-{d['high']:.1f}",
                str(d["n"]), _ratio(d["mean_score"]), _ratio(d["share_right"]),
                str(t["n"]), _ratio(t["mean_score"]), _ratio(t["share_right"]),
            ]
        )  # fmt: skip
    lines += grid(["score", "dev n", "mean score", "right", "test n", "mean score", "right"], rows)
    for name, half in (("dev", dev), ("test", test), ("all", calibrated["all"])):
        figures = f"Brier {_ratio(half['brier'])}  ECE {_ratio(half['ece'])}"
        lines.append(f"{name:<5} n={half['n']:<3} right {half['right']:<3} {figures}")
    return lines


def render_misrouted(rows: Sequence[RoutingRow]) -> str:
    wrong = misrouted(rows)
    if not wrong:
        return "\nmisrouted: none"
    lines = [f"\nmisrouted ({len(wrong)}):"]
    for row in wrong:
        got = row.action + (f" {', '.join(row.codes)}" if row.codes else "")
        lines.append(f"- {row.question}  [{row.lang}]")
        lines.append(f"    expected {row.expected}   got {got}")
        lines.append(f"    reason   {row.reason}")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
