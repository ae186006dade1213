"""``python -m ragbench.procedural``: does procedural memory choose between the workflow and the agent better than
Auto's rule alone? Measured on recorded answer-set runs of both modes, learned on dev, reported on test.

    python -m ragbench.procedural --set data/eval/answers/debian-blind.yaml \\
        --workflow results/answers/debian-blind-dev-parts.json --workflow results/answers/debian-blind-test.json \\
        --agent results/answers/debian-blind-agent-stride11.json --output results/answers/procedural-blind.json

A question counts when a run of each mode answered it. Its outcome in a mode is right when the answer was correct
(an answerable question) or abstained (an unanswerable one): that is the verdict procedural memory would have had
from the user (kept or not). Learning: every dev question gives one outcome per mode to its kind of question
(Auto's classes, ``ragapp.agent.auto.question_kind``), as feedback would. Choosing: Auto's rule, then the app's
own ``learned_mode`` with those tallies (``--min-answers`` and ``--margin``, the app's defaults unless given).

Reported per split: questions, the rule's choice and the learned choice right (the chosen mode answered right),
the choice right among the questions where exactly one mode answered right (where the choice matters), how many
choices memory changed, and the two fixed policies and the best possible choice for scale. Test is reported only:
nothing is tuned on it. Reads JSON, runs no model: seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ragapp.agent.auto import question_kind, rule_mode
from ragapp.agent.procedural import Experience, learned_mode
from ragapp.config.procedural import ProceduralSettings
from ragapp.core.events import Tally

MODES = ("workflow", "agent")


@dataclass(frozen=True)
class Case:
    """One question answered in both modes: its split, kind and whether each mode answered it right."""

    id: str
    question: str
    split: str
    kind: str
    right: dict[str, bool]

    @property
    def rule(self) -> str:
        return rule_mode(self.kind)  # type: ignore[arg-type]


def answered_right(row: dict[str, Any]) -> bool:
    """Correct for an answerable question, abstained for an unanswerable one."""
    return bool(row["correct"]) if row.get("answerable", True) else bool(row.get("abstained"))


def load_cases(set_file: Path, workflow: list[Path], agent: list[Path]) -> list[Case]:
    """The questions of ``set_file`` that both modes' runs answered (a later run's row replaces an earlier one's)."""
    questions = {q["id"]: q for q in yaml.safe_load(set_file.read_text("utf-8"))["questions"]}
    rows: dict[str, dict[str, bool]] = {mode: {} for mode in MODES}
    for mode, paths in (("workflow", workflow), ("agent", agent)):
        for path in paths:
            for row in json.loads(path.read_text("utf-8"))["rows"]:
                if not row.get("error"):
                    rows[mode][row["id"]] = answered_right(row)
    both = [qid for qid in questions if all(qid in rows[m] for m in MODES)]
    cases = []
    for qid in both:
        text = questions[qid]["question"]
        split = questions[qid].get("split", "")
        cases.append(Case(qid, text, split, question_kind(text), {m: rows[m][qid] for m in MODES}))
    return cases


def learn(cases: list[Case]) -> dict[str, Experience]:
    """The tallies per kind of question that the cases' outcomes give, one outcome per case and mode."""
    kept: Counter[tuple[str, str]] = Counter()
    answers: Counter[tuple[str, str]] = Counter()
    for case in cases:
        for mode in MODES:
            answers[case.kind, mode] += 1
            kept[case.kind, mode] += case.right[mode]
    kinds = {kind for kind, _ in answers}
    return {
        kind: Experience(kind, tuple(Tally(m, kept[kind, m], answers[kind, m]) for m in MODES if answers[kind, m]))
        for kind in kinds
    }


def choose(case: Case, memory: dict[str, Experience], min_answers: int, margin: float) -> str:
    """The mode Auto takes for ``case`` with procedural memory ``memory``."""
    experience = memory.get(case.kind)
    learned = learned_mode(case.question, case.rule, experience, min_answers, margin) if experience else None  # type: ignore[arg-type]
    return learned[0] if learned is not None else case.rule


def score(cases: list[Case], memory: dict[str, Experience], min_answers: int, margin: float) -> dict[str, Any]:
    """The rule's and the learned choices' figures on ``cases``."""
    decisive = [c for c in cases if c.right["workflow"] != c.right["agent"]]
    chosen = {c.id: choose(c, memory, min_answers, margin) for c in cases}

    def share(hits: int, of: int) -> float | None:
        return round(hits / of, 3) if of else None

    return {
        "questions": len(cases),
        "decisive": len(decisive),
        "rule_right": share(sum(c.right[c.rule] for c in cases), len(cases)),
        "learned_right": share(sum(c.right[chosen[c.id]] for c in cases), len(cases)),
        "rule_decisive_right": share(sum(c.right[c.rule] for c in decisive), len(decisive)),
        "learned_decisive_right": share(sum(c.right[chosen[c.id]] for c in decisive), len(decisive)),
        "changed": sum(chosen[c.id] != c.rule for c in cases),
        "always_workflow": share(sum(c.right["workflow"] for c in cases), len(cases)),
        "always_agent": share(sum(c.right["agent"] for c in cases), len(cases)),
        "best_possible": share(sum(c.right["workflow"] or c.right["agent"] for c in cases), len(cases)),
    }


def _pct(value: float | None) -> str:
    return "   -" if value is None else f"{100 * value:3.0f}%"


def render(report: dict[str, Any]) -> str:
    head = f"{'split':6s} {'n':>4s} {'decisive':>8s} {'rule':>5s} {'learned':>7s} {'rule/dec':>8s} {'lrn/dec':>7s} "
    head += f"{'changed':>7s} {'all-wf':>6s} {'all-ag':>6s} {'best':>5s}"
    lines = [head]
    for split, f in report["splits"].items():
        lines.append(
            f"{split:6s} {f['questions']:4d} {f['decisive']:8d} {_pct(f['rule_right']):>5s} "
            f"{_pct(f['learned_right']):>7s} {_pct(f['rule_decisive_right']):>8s} "
            f"{_pct(f['learned_decisive_right']):>7s} {f['changed']:7d} {_pct(f['always_workflow']):>6s} "
            f"{_pct(f['always_agent']):>6s} {_pct(f['best_possible']):>5s}"
        )
    lines.append("rule / learned: the chosen mode answered right; /dec: of the questions only one mode answered right.")
    lines.append("Learned on dev (per kind, mode: kept of answers): " + "; ".join(
        f"{kind} " + ", ".join(f"{t.name} {t.kept}/{t.answers}" for t in e["modes"])
        for kind, e in sorted(report["memory"].items())
    ))  # fmt: skip
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    defaults = ProceduralSettings()
    p = argparse.ArgumentParser(prog="python -m ragbench.procedural", description=__doc__.split("\n\n")[0])
    p.add_argument("--set", dest="set_file", type=Path, required=True, help="the answer set (YAML, split).")
    p.add_argument("--workflow", type=Path, action="append", required=True, help="a workflow run's JSON (repeatable).")
    p.add_argument("--agent", type=Path, action="append", required=True, help="an agent run's JSON (repeatable).")
    p.add_argument("--learn-on", default="dev", help="the split memory learns from (default: dev).")
    p.add_argument("--min-answers", type=int, default=defaults.min_answers, help="procedural.min_answers.")
    p.add_argument("--margin", type=float, default=defaults.margin, help="procedural.margin.")
    p.add_argument("--output", type=Path, help="write the figures, the memory and each case here as JSON.")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    cases = load_cases(args.set_file, args.workflow, args.agent)
    if not cases:
        print("no question was answered by both modes' runs", file=sys.stderr)
        return 1
    memory = learn([c for c in cases if c.split == args.learn_on])
    splits = sorted({c.split for c in cases})
    report = {
        "set": str(args.set_file),
        "runs": {"workflow": [str(p) for p in args.workflow], "agent": [str(p) for p in args.agent]},
        "learn_on": args.learn_on,
        "min_answers": args.min_answers,
        "margin": args.margin,
        "memory": {k: {"modes": e.modes} for k, e in memory.items()},
        "splits": {s: score([c for c in cases if c.split == s], memory, args.min_answers, args.margin) for s in splits},
        "by_kind": {
            f"{s}/{k}": Counter(f"{m}:{c.right[m]}" for c in cases if c.split == s and c.kind == k for m in MODES)
            for s in splits
            for k in sorted({c.kind for c in cases})
        },
    }
    print(render(report))
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        cases_json = [{"id": c.id, "split": c.split, "kind": c.kind, "right": c.right} for c in cases]
        payload = json.loads(json.dumps({**report, "cases": cases_json}, default=lambda o: o.__dict__))
        args.output.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
