"""``python -m ragbench.routing.fit``: fit the router's calibration on the dev half of a routing-eval run.

    python -m ragbench.routing.fit --results results/routing/local-qwen2.5-coder-1.5b.json \\
        --output results/routing/calibration-fit.json

Reads the rows a ``python -m ragbench.routing`` run wrote (each with the features of the leaf the router named
first and whether that leaf was right), fits a logistic model on the dev half (even positions of the labelled
file) and prints its weights as the settings ``RAGAPP_WORKFLOW__ROUTE_CALIBRATION__*`` take them, the Brier
score and ECE of the fitted scores on both halves (test is the figure to report: nothing was chosen on it),
and ``route_fit_min`` chosen on dev: the smallest score (in steps of 0.05) below which at least
``--catch`` of the dev questions whose first leaf was wrong fall, so that those search the knowledge bases no
leaf covers. No model is loaded.

The features are standardised before fitting (the cosines vary over a few hundredths, the model's score over
0.4-1.0), with scikit-learn's default L2 penalty, and the weights are mapped back to the raw features.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragbench.cli import write_json
from ragbench.routing.calibration import HALVES, Half, calibration, half_of


def feature_row(features: dict[str, Any]) -> list[float]:
    """[similarity, margin, model score (0 when the embedder decided alone), 1 when it did]."""
    model = features.get("model")
    return [float(features["similarity"]), float(features["margin"]), float(model or 0.0), float(model is None)]


def labelled_rows(rows: Sequence[dict[str, Any]]) -> dict[Half, list[tuple[list[float], bool]]]:
    """(features, right) of every row that has both, by half of the labelled file."""
    out: dict[Half, list[tuple[list[float], bool]]] = {half: [] for half in HALVES}
    for index, row in enumerate(rows):
        if row.get("top_right") is not None and row.get("features"):
            out[half_of(index)].append((feature_row(row["features"]), bool(row["top_right"])))
    return out


def fit_weights(samples: Sequence[tuple[list[float], bool]]) -> dict[str, float]:
    """The logistic model's weights on the raw features, fitted on standardised ones."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    x = np.asarray([f for f, _ in samples], dtype=float)
    y = np.asarray([r for _, r in samples], dtype=int)
    if len(set(y.tolist())) < 2:
        raise SystemExit("the dev half has only right (or only wrong) first leaves: nothing to fit")
    scaler = StandardScaler().fit(x)
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    model = LogisticRegression().fit((x - scaler.mean_) / scale, y)
    weights = model.coef_[0] / scale
    intercept = float(model.intercept_[0] - np.sum(model.coef_[0] * scaler.mean_ / scale))
    names = ("similarity", "margin", "model", "no_model")
    return {"intercept": round(intercept, 4), **{n: round(float(w), 4) for n, w in zip(names, weights, strict=True)}}


def probability(weights: dict[str, float], features: list[float]) -> float:
    similarity, margin, model, no_model = features
    z = (
        weights["intercept"]
        + weights["similarity"] * similarity
        + weights["margin"] * margin
        + weights["model"] * model
        + weights["no_model"] * no_model
    )
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def choose_fit_min(pairs: Sequence[tuple[float, bool]], catch: float) -> float:
    """The smallest threshold (0.05 steps) with at least ``catch`` of the wrong first leaves below it."""
    wrong = [p for p, right in pairs if not right]
    for step in range(1, 21):
        threshold = round(step * 0.05, 2)
        if not wrong or sum(p < threshold for p in wrong) / len(wrong) >= catch:
            return threshold
    return 1.0


def widening(pairs: Sequence[tuple[float, bool]], threshold: float) -> dict[str, Any]:
    """How many first leaves would search the uncovered bases beside them, wrong ones and right ones."""
    wrong = [p for p, r in pairs if not r]
    right = [p for p, r in pairs if r]
    return {
        "wrong_below": sum(p < threshold for p in wrong),
        "wrong": len(wrong),
        "right_below": sum(p < threshold for p in right),
        "right": len(right),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ragbench.routing.fit", description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, required=True, help="a ragbench.routing run's JSON (its rows).")
    parser.add_argument("--catch", type=float, default=0.9, help="share of dev's wrong first leaves to widen.")
    parser.add_argument("--output", type=Path, help="write the weights and figures here as JSON.")
    args = parser.parse_args(argv)
    rows = json.loads(args.results.read_text("utf-8"))["rows"]
    halves = labelled_rows(rows)
    weights = fit_weights(halves["dev"])
    scored = {half: [(probability(weights, f), r) for f, r in halves[half]] for half in HALVES}
    fit_min = choose_fit_min(scored["dev"], args.catch)
    figures = {half: calibration(scored[half]) for half in HALVES}
    widened = {half: widening(scored[half], fit_min) for half in HALVES}
    for name, value in weights.items():
        print(f"RAGAPP_WORKFLOW__ROUTE_CALIBRATION__{name.upper()}={value}")
    chosen = f"chosen on dev: {args.catch:.0%} of its wrong first leaves below"
    print(f"RAGAPP_WORKFLOW__ROUTE_FIT_MIN={fit_min}  ({chosen})")
    for half in HALVES:
        f, w = figures[half], widened[half]
        print(
            f"{half:<5} n={f['n']:<3} Brier {f['brier']}  ECE {f['ece']}   below {fit_min}: "
            f"{w['wrong_below']}/{w['wrong']} wrong first leaves, {w['right_below']}/{w['right']} right ones"
        )
    if args.output:
        payload = {
            "results": str(args.results),
            "weights": weights,
            "route_fit_min": fit_min,
            "catch": args.catch,
            "calibration": figures,
            "widening": widened,
        }
        write_json(args.output, payload)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
