"""What the answer cache would serve on an answer set, read from a recorded run (``make answer-eval``'s JSON).

A question asked a second time is served from the cache when its first answer was kept: it stood alone (not a
multi-turn question) and its answer was complete and checked (``ragapp.engine.answer_cache.keepable``: grounded,
not abstained, cited, confidence not low; here also no notice and no error, as the run's rows do not say a
notice's level). So the hit rate of a question asked twice is the share of questions kept, and what a hit serves
is exactly the first answer: the share of kept answers that are correct is the share of hits that are right.
A paraphrase never hits (exact matches only, up to case, spacing and closing punctuation).

``--similar SET`` measures what matching paraphrases by the embedder's similarity would risk: per split, how
similar the set's *different* questions (same language) are, each pair a wrong hit at any threshold at or below
its similarity.

    .venv/bin/python -m ragbench.answer_cache results/answers/debian-blind-test.json [...]
    .venv/bin/python -m ragbench.answer_cache --similar data/eval/answers/debian-blind.yaml
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml


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


THRESHOLDS = (0.90, 0.93, 0.95, 0.97)
# Paraphrases of some of the blind set's questions, by split and question id (written for this measurement).
PARAPHRASES: dict[str, dict[str, str]] = yaml.safe_load(
    (Path(__file__).parent / "answer_cache_paraphrases.yaml").read_text("utf-8")
)


def similar_questions(path: Path) -> list[dict[str, Any]]:
    """Per split of the answer set at ``path``: the pairs of different questions (same language, standing
    alone) at or above each threshold of the app's embedder's similarity, and the closest pair."""
    import itertools

    from ragapp.config import Settings
    from ragapp.models.embedders import load_embedder
    from ragbench.answers.answer_set import load_set

    answer_set, embedder = load_set(path), load_embedder(Settings())
    out = []
    for split in sorted({q.split for q in answer_set.questions}):
        questions = [q for q in answer_set.questions if q.split == split and q.type != "multi-turn"]
        vectors = embedder.embed_queries([q.question for q in questions])
        similarity = vectors @ vectors.T  # the vectors are normalised: cosine
        pairs = sorted(
            (float(similarity[i, j]), i, j)
            for i, j in itertools.combinations(range(len(questions)), 2)
            if questions[i].lang == questions[j].lang
        )
        best = pairs[-1] if pairs else None
        by_id = {q.id: q.question for q in questions}
        written = {k: v for k, v in PARAPHRASES.get(split, {}).items() if k in by_id}
        originals = embedder.embed_queries(list(by_id[k] for k in written)) if written else None
        rewordings = embedder.embed_queries(list(written.values())) if written else None
        kept = [float(a @ b) for a, b in zip(originals, rewordings, strict=True)] if written else []  # type: ignore[arg-type]
        out.append({
            "split": split or "(all)", "questions": len(questions), "pairs": len(pairs),
            "pairs_at_or_above": {str(t): sum(p[0] >= t for p in pairs) for t in THRESHOLDS},
            "closest": [round(best[0], 3), questions[best[1]].question, questions[best[2]].question] if best else None,
            "paraphrases": len(kept), "paraphrase_similarity": sorted(round(k, 3) for k in kept),
            "paraphrases_at_or_above": {str(t): sum(k >= t for k in kept) for t in THRESHOLDS},
        })  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", type=Path, help="answer-set runs (results/answers/*.json with rows)")
    parser.add_argument("--similar", type=Path, help="an answer set (YAML): how alike its different questions are")
    args = parser.parse_args()
    if args.similar is not None:
        for figures in similar_questions(args.similar):
            print(json.dumps(figures, ensure_ascii=False))
    for path in args.runs:
        run = json.loads(path.read_text("utf-8"))
        figures = report(list(run.get("rows", [])))
        print(json.dumps({"run": str(path), "model": run.get("model"), "split": run.get("split"), **figures}))


if __name__ == "__main__":
    main()
