"""What the answer cache would serve on an answer set, read from a recorded run (``make answer-eval``'s JSON).

A question asked a second time is served from the cache when its first answer was kept: it stood alone (not a
multi-turn question) and its answer was complete and checked (``ragapp.engine.answer_cache.keepable``: grounded,
not abstained, cited, confidence not low; here also no notice and no error, as the run's rows do not say a
notice's level). So the hit rate of a question asked twice is the share of questions kept, and what a hit serves
is exactly the first answer: the share of kept answers that are correct is the share of hits that are right.
A paraphrase never hits (exact matches only, up to case, spacing and closing punctuation).

    .venv/bin/python -m ragbench.answer_cache results/answers/debian-blind-test.json [...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def kept(row: dict[str, Any]) -> bool:
    """Would the cache keep this row's answer (see the module)?"""
    return (
        row.get("type") != "multi-turn"
        and bool(row.get("grounded"))
        and not row.get("abstained")
        and not row.get("clarified")
        and bool(row.get("cited"))
        and row.get("confidence") not in (None, "", "low")
        and not row.get("notices")
        and not row.get("error")
    )


def report(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of one run's rows: questions, hit rate asked twice, and how the hits would fare."""
    if not any(r.get("confidence") for r in rows):  # a run from before answers were checked: nothing is kept
        return {"questions": len(rows), "confidence_recorded": False}
    hits = [r for r in rows if kept(r)]
    answerable_hits = [r for r in hits if r.get("answerable", True)]
    return {
        "questions": len(rows),
        "hit_rate_asked_twice": round(len(hits) / len(rows), 3) if rows else None,
        "hit_rate_paraphrase": 0.0,
        "hits": len(hits),
        "hits_correct": round(sum(bool(r.get("correct")) for r in answerable_hits) / len(answerable_hits), 3)
        if answerable_hits
        else None,
        "hits_on_unanswerable": sum(not r.get("answerable", True) for r in hits),
        "correct_overall": round(sum(bool(r.get("correct")) for r in rows if r.get("answerable", True))
                                 / max(1, sum(bool(r.get("answerable", True)) for r in rows)), 3),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="answer-set runs (results/answers/*.json with rows)")
    args = parser.parse_args()
    for path in args.runs:
        run = json.loads(path.read_text("utf-8"))
        figures = report(list(run.get("rows", [])))
        print(json.dumps({"run": str(path), "model": run.get("model"), "split": run.get("split"), **figures}))


if __name__ == "__main__":
    main()
