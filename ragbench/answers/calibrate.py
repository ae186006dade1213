"""``python -m ragbench.answers.calibrate``: fit the confidence calibrator on stored answer-set rows.

    python -m ragbench.answers.calibrate results/answers/debian-blind-dev.json [MORE.json ...] [--write]

Reads finished ``python -m ragbench.answers`` runs' rows (the signals each answer's confidence read, and whether the
answer, stated or withheld, held the gold one), so no model runs. Fits P(right) by logistic regression
(scikit-learn, here only: the app applies the coefficients itself, ``ragapp.qa.calibrator``), apart for answers
made with a selection step. "Not sure" is said under the threshold that maximises truthfulness over all rows,
read on out-of-fold probabilities (5 folds); "high" starts where those were right 95% of the time. Prints the
truthfulness at each threshold, overall and per language, how far apart right and wrong answers' probabilities
are per language of the question and of its passages, and, given several files, each file scored by a fit on the
others. ``--write`` saves ``ragapp/qa/calibration.json``. Dev rows only: test rows are for reporting.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ragapp.core.errors import ConfigError
from ragapp.qa.calibrator import SHIPPED, Calibrator, Logistic
from ragapp.testcases.truthfulness import Tally
from ragbench.answers.answer_set import TYPES
from ragbench.answers.scoring import Row, summarize
from ragbench.answers.truth import load_rows, truth_table
from ragbench.cli import run_command

# What the fit reads (``ragapp.qa.confidence.answer_signals``; the selection's only where one ran): 11 of the 28
# signals it once read, and the model's check of its answer; on both blind sets' dev rows, out of fold, +0.38 against
# +0.34 for the 28, +0.41 with the check (docs/lab-log.md, "The model's check of its answer").
COMMON = (
    "on_topic", "on_topic_missing", "cited_rerank", "cited_rerank_missing", "logprob_mean", "agrees",
    "agrees_missing", "top_vector", "cross_language", "chinese", "part", "verified", "verified_missing",
)  # fmt: skip
SELECTION = (
    "quoted", "pick_probability", "pick_margin", "none_probability", "pick_scores_missing", "pick_on_topic",
    "pick_on_topic_missing", "pick_is_quote",
)  # fmt: skip
FOLDS = 5
HIGH_RIGHT = 0.95  # "high" answers should be right this often


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.answers.calibrate", description=__doc__.split("\n\n")[0])
    p.add_argument("results", nargs="+", type=Path, help="dev result files of python -m ragbench.answers.")
    p.add_argument("--write", action="store_true", help=f"save the fitted coefficients as {SHIPPED}.")
    p.add_argument("--output", type=Path, help="save them here instead (for RAGAPP_WORKFLOW__CALIBRATOR).")
    p.add_argument("--c", type=float, default=0.5, help="inverse regularisation strength (default 0.5).")
    return p


def main(argv: list[str] | None = None) -> int:
    return run_command(_run, _parser().parse_args(argv))


def calibratable(row: Row) -> bool:
    """A row whose answer was assessed (it logged signals): stated or withheld, never a refusal."""
    return bool(row.signals) and not row.abstained and not row.clarified


def right(row: Row) -> bool:
    """What P(right) predicts: the answer (stated or withheld) holds the gold one; never, to an unanswerable."""
    return row.answerable and row.guess_right


@dataclass(frozen=True)
class Fit:
    model: Logistic
    out_of_fold: dict[str, float]  # row id -> the probability a model fitted without its fold gave it


def fit(rows: Sequence[Row], features: Sequence[str], c: float) -> Fit | None:
    """The logistic regression of ``right`` on ``features`` over ``rows``, with out-of-fold probabilities."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    if len(rows) < 2 * FOLDS:
        return None
    x = np.array([[float(r.signals.get(f, 0.0)) for f in features] for r in rows])
    y = np.array([right(r) for r in rows], dtype=int)
    if y.min() == y.max():
        return None
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    z = (x - mean) / scale
    oof = np.zeros(len(rows))
    folds = StratifiedKFold(n_splits=min(FOLDS, int(y.sum()), int((1 - y).sum())), shuffle=True, random_state=50)
    for train, held in folds.split(z, y):
        model = LogisticRegression(C=c, max_iter=2000).fit(z[train], y[train])
        oof[held] = model.predict_proba(z[held])[:, 1]
    model = LogisticRegression(C=c, max_iter=2000).fit(z, y)
    logistic = Logistic(
        tuple(features), tuple(round(float(v), 6) for v in mean), tuple(round(float(v), 6) for v in scale),
        tuple(round(float(v), 6) for v in model.coef_[0]), round(float(model.intercept_[0]), 6), 0.5, 0.9,
    )  # fmt: skip
    return Fit(logistic, {r.id: float(p) for r, p in zip(rows, oof, strict=True)})


def gated(rows: Sequence[Row], probability: dict[str, float], stated_from: float) -> list[Row]:
    """The rows as they would score with answers under ``stated_from`` said as "not sure" (and the others
    stated): ``correct`` follows ``guess_right``; rows without a probability keep their outcome."""
    out = []
    for row in rows:
        p = probability.get(row.id)
        if p is None:
            out.append(row)
            continue
        stated = p >= stated_from
        out.append(replace(row, not_sure=not stated, correct=stated and right(row), probability=round(p, 4)))
    return out


def _tally(rows: Sequence[Row]) -> Tally:
    return Tally.of(r.verdict for r in rows)


def best_threshold(rows: Sequence[Row], probability: dict[str, float]) -> float:
    """The "not sure" threshold that maximises truthfulness over ``rows`` (the lowest such, ties). Each candidate is a
    probability cut to 4 decimals, never rounded up past the answer it came from (which it would then withhold)."""
    candidates = sorted({0.0, *(math.floor(p * 10_000) / 10_000 for p in probability.values())})
    scored = [(_tally(gated(rows, probability, t)).score or 0.0, -t) for t in candidates]
    return -max(scored)[1]


def high_threshold(rows: Sequence[Row], probability: dict[str, float], stated_from: float) -> float:
    """The lowest probability from which the answers above it were right ``HIGH_RIGHT`` of the time (at least 5
    of them), never under ``stated_from``; 1.0 when none was."""
    judged = sorted(((probability[r.id], right(r)) for r in rows if r.id in probability), reverse=True)
    best, hits = 1.0, 0
    for n, (p, ok) in enumerate(judged, start=1):
        hits += ok
        if n >= 5 and hits / n >= HIGH_RIGHT:
            best = p
    return max(best, stated_from)


def report(rows: Sequence[Row], probability: dict[str, float], stated_from: float) -> str:
    """Truthfulness and the answered answers' precision at thresholds around ``stated_from``."""
    lines = [f"{'not sure under':>15s} {'score':>6s} {'en':>6s} {'zh':>6s} {'halluc.':>8s} {'stated right':>12s} "
             f"{'not sure (ans.)':>15s}"]  # fmt: skip
    for t in sorted({0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, round(stated_from, 3)}):
        now = gated(rows, probability, t)
        tally = _tally(now)
        by = {lang: _tally([r for r in now if r.lang == lang]).score for lang in ("en", "zh")}
        stated = [r for r in now if r.stated]
        precision = sum(r.correct for r in stated) / len(stated) if stated else 0.0
        answerable = [r for r in now if r.answerable]
        unsure = sum(r.not_sure for r in answerable) / len(answerable) if answerable else 0.0
        mark = " <" if t == round(stated_from, 3) else ""
        lines.append(
            f"{t:15.3f} {tally.score or 0:+6.2f} {by['en'] or 0:+6.2f} {by['zh'] or 0:+6.2f} "
            f"{100 * (tally.share('hallucinated') or 0):7.0f}% {100 * precision:11.0f}% {100 * unsure:14.0f}%{mark}"
        )
    return "\n".join(lines)


def group(row: Row) -> str:
    """The question's language, and the passages' where the best one was in the other language ("zh→en": a Chinese
    question over an English manual, where the reranker judges nothing and every signal of its own is missing)."""
    other = {"en": "zh", "zh": "en"}.get(row.lang, "?")
    return f"{row.lang}→{other}" if row.signals.get("cross_language") else row.lang


def by_group(rows: Sequence[Row], probability: dict[str, float], stated_from: float, high_from: float) -> str:
    """How the probabilities separate right answers from wrong ones per ``group``: the median of each, the right
    ones said as "not sure" and the wrong ones stated at ``stated_from``, and those from ``high_from``. A group
    whose right and wrong answers get alike probabilities is one the signals cannot judge."""
    head = (f"{'group':7s} {'assessed':>8s} {'right':>5s} {'P right':>7s} {'P wrong':>7s} {'right not sure':>14s} "
            f"{'wrong stated':>12s} {'high':>4s}")  # fmt: skip
    lines = [head]
    judged = [r for r in rows if r.id in probability and calibratable(r)]
    for name in sorted({group(r) for r in judged}):
        mine = [r for r in judged if group(r) == name]
        good = [probability[r.id] for r in mine if right(r)]
        bad = [probability[r.id] for r in mine if not right(r)]
        medians = [f"{float(np.median(ps)):7.2f}" if ps else f"{'-':>7s}" for ps in (good, bad)]
        withheld = f"{sum(p < stated_from for p in good)}/{len(good)}"
        stated = f"{sum(p >= stated_from for p in bad)}/{len(bad)}"
        high = sum(p >= high_from for p in good + bad)
        lines.append(
            f"{name:7s} {len(mine):8d} {len(good):5d} {' '.join(medians)} {withheld:>14s} {stated:>12s} {high:4d}"
        )
    return "\n".join(lines)


def by_file(rows: dict[str, list[Row]], c: float) -> Iterator[str]:
    """Each file's truthfulness with answers withheld by a fit on the other files alone (its threshold theirs, out
    of fold): how the calibrator carries to documents it never saw, which the pooled out-of-fold figure cannot say."""
    for name, own in rows.items():
        others = [r for other, those in rows.items() if other != name for r in those]
        result = fit([r for r in others if calibratable(r) and not r.signals.get("selected")], COMMON, c)
        if result is not None:
            stated_from = best_threshold(others, result.out_of_fold)
            p = {r.id: result.model.probability(r.signals) for r in own if calibratable(r)}
            score, as_run = _tally(gated(own, p, stated_from)).score or 0.0, _tally(own).score or 0.0
            yield f"{name}: {score:+.2f} fitted on the others (under {stated_from:.3f}), {as_run:+.2f} as run"


def _run(args: argparse.Namespace) -> int:
    per_file = {path.name: load_rows(path) for path in args.results}
    rows = [row for those in per_file.values() for row in those]
    if any(r.split == "test" for r in rows):
        raise ConfigError("the calibrator is fitted on dev rows only: these files hold test rows")
    if not any(r.signals for r in rows):
        raise ConfigError("these rows log no signals: run python -m ragbench.answers with this version first")
    models: dict[str, Logistic] = {}
    out_of_fold: dict[str, float] = {}
    for name, selected, features in (("selected", True, COMMON + SELECTION), ("free", False, COMMON)):
        those = [r for r in rows if calibratable(r) and bool(r.signals.get("selected")) == selected]
        result = fit(those, features, args.c)
        few = "" if result else " (too few to fit)"
        print(f"{name}: {len(those)} assessed answers, {sum(right(r) for r in those)} right{few}")
        if result is not None:
            models[name], out_of_fold = result.model, out_of_fold | result.out_of_fold
    if not models:
        raise ConfigError("no model could be fitted: too few assessed answers")
    stated_from = best_threshold(rows, out_of_fold)
    high_from = high_threshold(rows, out_of_fold, stated_from)
    print(f"\nout-of-fold ({FOLDS} folds): not sure under {stated_from:.3f}, high from {high_from:.3f}")
    print(report(rows, out_of_fold, stated_from))
    print("\nper language of the question (→ of the passages, when the best was in the other one), out of fold:")
    print(by_group(rows, out_of_fold, stated_from, high_from))
    print("\n" + truth_table("out of fold, at that threshold", summarize(gated(rows, out_of_fold, stated_from), TYPES)))
    if len(per_file) > 1:
        print("\neach file by a fit on the others:\n" + "\n".join(by_file(per_file, args.c)))
    for name, model in models.items():
        weights = sorted(zip(model.features, model.coef, strict=True), key=lambda fc: -abs(fc[1]))
        print(f"\n{name}: " + ", ".join(f"{f} {c:+.2f}" for f, c in weights[:10]))
    if args.write or args.output:
        target = args.output or SHIPPED
        files = ", ".join(p.name for p in args.results)
        fitted = {
            k: replace(m, stated_from=round(stated_from, 4), high_from=round(high_from, 4), fitted_on=files)
            for k, m in models.items()
        }
        target.write_text(json.dumps(Calibrator(fitted).as_json(), indent=2) + "\n", "utf-8")
        print(f"\nwrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
