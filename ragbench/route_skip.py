"""``python -m ragbench.route_skip``: the margin of ``route_same_search``, chosen on the labelled routing questions.

    python -m ragbench.route_skip --results results/routing/local-qwen2.5-coder-1.5b.json \\
        --tree data/intents/demo.yaml [--output results/model_calls/route-skip.json]

Reads a ``make routing-eval`` result (every labelled question routed by the whole router, the model's decision
and its seconds for each question the embedder left to the model), and for each of those questions asks what
the rule would do: it skips the model when every leaf within the margin of the embedder's best one searches
the same (``search_of``), and then routes to that best leaf through the same decision rules. The **outcome**
is what the answer would be written from: searched (a route or "search everything": over the demo tree every
knowledge leaf searches the one demo knowledge base, so both search the same passages), asked back, or
answered directly as a message to the assistant. Per margin, on the dev half (even positions) and the test half
(odd positions) of the labelled file: the model calls skipped, the seconds they took, how many skips changed
the outcome, and how many skipped questions each way matched the label. No model is loaded: the embedder only.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ragapp.config import Settings
from ragapp.router.classifier import Classification, LeafScore
from ragapp.router.decide import decide
from ragapp.router.fast import EmbeddingClassifier, FastRule
from ragapp.router.router import search_of
from ragapp.router.tree import IntentTree, parse_tree
from ragbench.cli import run_command

MARGINS = (0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1)


def outcome(action: str) -> str:
    return {"route": "search", "fallback": "search"}.get(action, action)


def rule_row(fast: EmbeddingClassifier, tree: IntentTree, row: dict[str, Any]) -> dict[str, Any]:
    """The rule's view of one question the model routed: the gap and the decision it would take."""
    question = row["question"]
    ranked = fast.similarities(question, tree)
    top, top_score = ranked[0]
    key = search_of(top, None, tree)
    other = next((s for leaf, s in ranked if search_of(leaf, None, tree) != key), None)
    gap = -1.0 if key is None else (1.0 if other is None else top_score - other)
    assert top.kind is not None
    score = LeafScore(top.code, tree.full_path(top.code), top.kind, top.parent, 1.0)
    decision = decide(Classification(question, (score,)), Settings().workflow, tree)
    expected = row["expected"] if isinstance(row["expected"], list) else [row["expected"]]
    rule_right = decision.action in expected or any(c in expected for c in decision.codes)
    return {
        "question": question,
        "gap": round(gap, 4),
        "model": outcome(row["action"]),
        "rule": outcome(decision.action),
        "rule_codes": list(decision.codes),
        "model_right": bool(row["any_correct"]),
        "rule_right": rule_right,
        "seconds": row["seconds"],
    }


def sweep(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for margin in MARGINS:
        skipped = [r for r in rows if r["gap"] > margin]
        out.append(
            {
                "margin": margin,
                "model_calls": len(rows),
                "skipped": len(skipped),
                "seconds_saved": round(sum(r["seconds"] for r in skipped), 1),
                "outcome_changed": sum(1 for r in skipped if r["rule"] != r["model"]),
                "right_with_model": sum(1 for r in skipped if r["model_right"]),
                "right_with_rule": sum(1 for r in skipped if r["rule_right"]),
            }
        )
    return out


def _run(args: argparse.Namespace) -> int:
    from ragapp.models.embedders import load_embedder

    result = json.loads(args.results.read_text("utf-8"))
    tree = parse_tree(args.tree.read_text("utf-8"))
    fast = EmbeddingClassifier(load_embedder(Settings()), FastRule(1.0, 1.0))
    halves: dict[str, list[dict[str, Any]]] = {"dev": [], "test": []}
    for index, row in enumerate(result["rows"]):
        if str(row["reply"]).startswith("embedder:"):
            continue  # the embedder's clear pick: no model call to skip
        halves["dev" if index % 2 == 0 else "test"].append(rule_row(fast, tree, row))
    report = {half: sweep(rows) for half, rows in halves.items()}
    for half, lines in report.items():
        print(f"{half}: margin, skipped of {lines[0]['model_calls']} model calls, seconds saved, outcome changed, "
              "right with the model / with the rule (of the skipped)")  # fmt: skip
        for s in lines:
            print(f"  {s['margin']:.2f}  {s['skipped']:3d}  {s['seconds_saved']:6.1f}  {s['outcome_changed']:3d}  "
                  f"{s['right_with_model']:3d} / {s['right_with_rule']:3d}")  # fmt: skip
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        payload = {"results": str(args.results), "sweep": report, "rows": halves}
        args.output.write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n", "utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m ragbench.route_skip", description=__doc__.split("\n\n")[0])
    p.add_argument("--results", type=Path, required=True, help="a `make routing-eval` result (JSON).")
    p.add_argument("--tree", type=Path, required=True, help="the intent tree it was routed over.")
    p.add_argument("--output", type=Path)
    return run_command(_run, p.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
