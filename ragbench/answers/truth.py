"""``python -m ragbench.answers.truth``: truthfulness of finished answer-set runs, and one run against another.

    python -m ragbench.answers.truth results/answers/NAME.json [MORE.json ...] [--compare OLD.json]

Each result file's rows are scored again as CRAG scores assistants (``ragapp.testcases.truthfulness``: +1
accurate, 0 missing, -1 hallucinated), so files written before the score existed read the same as new ones;
printed per question type, language, tag and overall. ``--compare OLD.json`` (one file only) puts OLD's figures
beside it and names the questions that got better and worse, by id. ``python -m ragbench.answers`` and its
replay print the same tables (and the run takes ``--compare`` too).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragapp.core.errors import ConfigError
from ragapp.testcases.truthfulness import VERDICTS, Comparison, Tally, compare
from ragbench.answers.answer_set import TYPES
from ragbench.answers.scoring import Row, summarize
from ragbench.cli import run_command

LEGEND = "truthfulness as CRAG scores it: +1 accurate (right, or unanswerable and refused), 0 missing, -1 hallucinated"


def load_rows(path: Path) -> list[Row]:
    """The rows of a result file written by ``python -m ragbench.answers``."""
    try:
        data = json.loads(path.read_text("utf-8"))
        return [Row.from_json(row) for row in data["rows"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: not a result file of python -m ragbench.answers ({exc})") from None


def _tally(figures: dict[str, Any]) -> Tally:
    return Tally(figures["accurate"], figures["missing"], figures["hallucinated"])


def _score(value: float | None) -> str:
    return "    -" if value is None else f"{value:+.2f}"


def _groups(summary: dict[str, Any], tags: bool = True) -> list[tuple[str, dict[str, Any]]]:
    groups = [*summary["by_type"].items(), *(("lang " + k, v) for k, v in summary["by_lang"].items())]
    if tags:
        groups += [*summary.get("by_tag", {}).items(), *summary.get("by_kind", {}).items()]
    return [*groups, ("overall", summary["overall"])]


def truth_table(label: str, summary: dict[str, Any]) -> str:
    """Accurate, missing and hallucinated (count and share) and the score, per group of ``summarize``."""
    head = f"{'':16s} {'n':>4s} {'accurate':>10s} {'missing':>10s} {'halluc.':>10s} {'score':>6s}"
    lines = [f"{label}: {LEGEND}", head]
    for name, figures in _groups(summary):
        tally = _tally(figures)
        cells = " ".join(f"{getattr(tally, v):4d} {100 * (tally.share(v) or 0):3.0f}%" for v in VERDICTS)
        lines.append(f"{name:16s} {tally.questions:4d} {cells} {_score(tally.score):>6s}")
    return "\n".join(lines)


def comparison(before: Sequence[Row], after: Sequence[Row]) -> Comparison:
    """The two runs' verdicts compared question by question (by id)."""
    return compare({r.id: r.verdict for r in before}, {r.id: r.verdict for r in after})


def comparison_text(old: str, new: str, before: Sequence[Row], after: Sequence[Row]) -> str:
    """``old``'s figures beside ``new``'s, per type, language and overall, then the questions that changed."""
    was, now = summarize(before, TYPES), summarize(after, TYPES)
    head = f"{'':16s} {'n':>9s} {'accurate':>9s} {'missing':>9s} {'halluc.':>9s}  score"
    lines = [f"{old} → {new}", head]
    earlier = dict(_groups(was, tags=False))
    for name, figures in _groups(now, tags=False):
        a, b = _tally(earlier[name]) if name in earlier else Tally(), _tally(figures)
        pairs = [f"{getattr(a, v)}→{getattr(b, v)}" for v in ("questions", "accurate", "missing", "hallucinated")]
        moved = "" if a.score is None or b.score is None else f" ({b.score - a.score:+.2f})"
        score = f"{_score(a.score).strip()}→{_score(b.score).strip()}{moved}"
        lines.append(f"{name:16s} {pairs[0]:>9s} {pairs[1]:>9s} {pairs[2]:>9s} {pairs[3]:>9s}  {score}")
    changed = comparison(before, after)
    for word, changes in (("better", changed.better), ("worse", changed.worse)):
        lines.append(f"{word} ({len(changes)}):" + "".join(f"\n  {c.key}: {c.before} → {c.after}" for c in changes))
    if changed.dropped or changed.added:
        lines.append(f"only in {old}: {len(changed.dropped)} questions; only in {new}: {len(changed.added)}")
    return "\n".join(lines)


def comparison_json(path: Path, before: Sequence[Row], after: Sequence[Row]) -> dict[str, Any]:
    """What a result file keeps of its comparison with an earlier one."""
    changed = comparison(before, after)
    return {
        "file": str(path),
        "before": changed.before.as_json(),
        "after": changed.after.as_json(),
        "better": [[c.key, c.before, c.after] for c in changed.better],
        "worse": [[c.key, c.before, c.after] for c in changed.worse],
    }


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.answers.truth", description=__doc__.split("\n\n")[0])
    p.add_argument("results", nargs="+", type=Path, help="result files of python -m ragbench.answers.")
    p.add_argument("--compare", type=Path, help="an earlier result file to compare the (one) result file with.")
    return p


def main(argv: list[str] | None = None) -> int:
    return run_command(_run, _parser().parse_args(argv))


def _run(args: argparse.Namespace) -> int:
    if args.compare and len(args.results) != 1:
        raise ConfigError("--compare takes one result file to compare with it")
    for path in args.results:
        rows = load_rows(path)
        print(truth_table(f"{path.name} · {len(rows)} questions", summarize(rows, TYPES)))
    if args.compare:
        print("\n" + comparison_text(args.compare.name, args.results[0].name, load_rows(args.compare), rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
