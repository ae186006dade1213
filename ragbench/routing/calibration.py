"""Do the router's scores mean what they say? Calibration of the score a decision gives the leaf it ranks first.

For every labelled question the router names a leaf first (the first leaf it routes to or offers, else the
classifier's best-scored one); the score it gives that leaf should be the probability that the leaf is right
(one of the labelled leaves; never, for a question labelled ``fallback``). Questions labelled ``clarify`` (no
single leaf is right) and questions where the router names no leaf at all are left out. The figures, on the dev
half (even positions of the labelled file) and the test half (odd positions) apart: the Brier score (mean
squared gap between score and outcome; 0 is perfect, always saying 0.5 scores 0.25), the expected calibration
error (ECE: the gap between the mean score and the share right in each score bin, weighted by the bin's size)
and the reliability table behind it. Any mapping is fitted on dev (``python -m ragbench.routing.fit``); test is
what is reported.

Written here rather than with sklearn.calibration: the two figures are a few lines, and the table needs the bins'
counts, which ``calibration_curve`` does not return.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

Half = Literal["dev", "test"]
HALVES: tuple[Half, ...] = ("dev", "test")
BINS = 5  # equal-width score bins: with ~40 questions a half, ten bins would hold two or three each


def half_of(index: int) -> Half:
    """dev: even positions of the labelled file (0-based); test: odd ones."""
    return "dev" if index % 2 == 0 else "test"


@dataclass(frozen=True)
class ReliabilityBin:
    low: float
    high: float
    n: int
    mean_score: float | None  # None: empty bin
    share_right: float | None

    def as_json(self) -> dict[str, Any]:
        return asdict(self) | {"mean_score": _round(self.mean_score), "share_right": _round(self.share_right)}


def reliability(pairs: Sequence[tuple[float, bool]], bins: int = BINS) -> list[ReliabilityBin]:
    """(score, right) pairs in ``bins`` equal-width score bins; a score of 1.0 falls in the last one."""
    out = []
    for b in range(bins):
        low, high = b / bins, (b + 1) / bins
        inside = [(s, r) for s, r in pairs if low <= s < high or (b == bins - 1 and s == high)]
        n = len(inside)
        mean = sum(s for s, _ in inside) / n if n else None
        right = sum(r for _, r in inside) / n if n else None
        out.append(ReliabilityBin(round(low, 3), round(high, 3), n, mean, right))
    return out


def brier(pairs: Sequence[tuple[float, bool]]) -> float | None:
    """Mean of (score - outcome)²; None for no pairs."""
    return sum((s - float(r)) ** 2 for s, r in pairs) / len(pairs) if pairs else None


def expected_calibration_error(pairs: Sequence[tuple[float, bool]], bins: int = BINS) -> float | None:
    """Σ over bins of (bin size / n) · |mean score − share right|; None for no pairs."""
    if not pairs:
        return None
    table = reliability(pairs, bins)
    return sum(
        b.n / len(pairs) * abs(b.mean_score - b.share_right)
        for b in table
        if b.n and b.mean_score is not None and b.share_right is not None
    )


def calibration(pairs: Sequence[tuple[float, bool]], bins: int = BINS) -> dict[str, Any]:
    """Every figure of one set of (score, right) pairs, as plain data."""
    return {
        "n": len(pairs),
        "right": sum(r for _, r in pairs),
        "brier": _round(brier(pairs)),
        "ece": _round(expected_calibration_error(pairs, bins)),
        "bins": [b.as_json() for b in reliability(pairs, bins)],
    }


def scored(rows: Sequence[Any]) -> dict[Half, list[tuple[float, bool]]]:
    """The (score, right) pair of every row that has one (``RoutingRow.top_score``/``top_right``), by half."""
    out: dict[Half, list[tuple[float, bool]]] = {half: [] for half in HALVES}
    for index, row in enumerate(rows):
        if row.top_score is not None and row.top_right is not None:
            out[half_of(index)].append((row.top_score, row.top_right))
    return out


def summarize_calibration(rows: Sequence[Any]) -> dict[str, Any]:
    """The calibration of ``rows`` (in the labelled file's order), per half and for both together."""
    halves = scored(rows)
    return {
        "left_out": len(rows) - sum(len(p) for p in halves.values()),
        "dev": calibration(halves["dev"]),
        "test": calibration(halves["test"]),
        "all": calibration(halves["dev"] + halves["test"]),
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
