"""How likely an answer is right, learned: a logistic regression over signals the pipeline has (the reranker's
on-topic score, agreement with the quote, the answer tokens' log-probabilities, the passages' scores, the
question's language, the model's own check of the answer; the selection and its margin where one ran), fitted
offline on the blind answer sets' dev splits (``python -m ragbench.answers.calibrate``) and shipped as its
coefficients (``calibration.json`` beside this module). Applied with plain arithmetic: no scikit-learn at run time.

The level follows from the probability and two thresholds chosen on dev with it (``stated_from``, the one that
maximises truthfulness there, and ``high_from``): high, medium, or low, which the app says as "not sure"
instead of stating the answer (``answer_check.withheld``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ragapp.core.errors import ConfigError
from ragapp.core.types import ConfidenceLevel

SHIPPED = Path(__file__).with_name("calibration.json")


@dataclass(frozen=True)
class Logistic:
    """P(right) = sigmoid(intercept + sum of coef * (signal - mean) / scale); a signal the answer lacks reads 0
    (each has a ``*_missing`` signal beside it where it can be absent, so the fit learns what absence means)."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    stated_from: float  # under this probability the app says "not sure"
    high_from: float  # from this probability an answer is high
    fitted_on: str = ""

    def probability(self, signals: Mapping[str, float]) -> float:
        z = self.intercept
        for name, mean, scale, coef in zip(self.features, self.mean, self.scale, self.coef, strict=True):
            z += coef * (float(signals.get(name, 0.0)) - mean) / (scale or 1.0)
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))

    def as_json(self) -> dict[str, object]:
        return {
            "features": list(self.features), "mean": list(self.mean), "scale": list(self.scale),
            "coef": list(self.coef), "intercept": self.intercept, "stated_from": self.stated_from,
            "high_from": self.high_from, "fitted_on": self.fitted_on,
        }  # fmt: skip

    @classmethod
    def of(cls, data: Mapping[str, object]) -> Logistic:
        features = tuple(str(f) for f in _seq(data["features"]))
        numbers = [tuple(float(str(v)) for v in _seq(data[k])) for k in ("mean", "scale", "coef")]
        if any(len(n) != len(features) for n in numbers):
            raise ValueError("features, mean, scale and coef differ in length")
        return cls(
            features, numbers[0], numbers[1], numbers[2], float(str(data["intercept"])),
            float(str(data["stated_from"])), float(str(data["high_from"])), str(data.get("fitted_on", "")),
        )  # fmt: skip


@dataclass(frozen=True)
class Calibrator:
    """One model for answers made with a selection step (``selected``) and one for those without (``free``: a
    server model, selection off), each with its thresholds; a missing one falls back to the other."""

    models: Mapping[str, Logistic]

    def model(self, signals: Mapping[str, float]) -> Logistic:
        wanted = "selected" if signals.get("selected") else "free"
        return self.models.get(wanted) or next(iter(self.models.values()))

    def probability(self, signals: Mapping[str, float]) -> float:
        return self.model(signals).probability(signals)

    def level(
        self, signals: Mapping[str, float], probability: float, stated_from: float | None = None,
        high_from: float | None = None,
    ) -> ConfidenceLevel:  # fmt: skip
        """high, medium or low for ``probability``; the thresholds default to the fitted ones."""
        model = self.model(signals)
        stated = model.stated_from if stated_from is None else stated_from
        high = model.high_from if high_from is None else high_from
        if probability >= max(high, stated):
            return "high"
        return "medium" if probability >= stated else "low"

    def as_json(self) -> dict[str, object]:
        return {"models": {name: m.as_json() for name, m in self.models.items()}}

    @classmethod
    def of(cls, data: Mapping[str, object]) -> Calibrator:
        try:
            raw = data["models"]
            if not isinstance(raw, Mapping) or not raw:
                raise ValueError("models must name at least one model")
            return cls({str(k): Logistic.of(v) for k, v in raw.items()})
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"not a calibrator's coefficients ({exc})") from None


def _seq(value: object) -> Sequence[object]:
    if not isinstance(value, list | tuple):
        raise TypeError(f"expected a list, got {type(value).__name__}")
    return value


@lru_cache(maxsize=4)
def load_calibrator(path: Path = SHIPPED) -> Calibrator:
    """The calibrator in ``path`` (default: the shipped one), read once."""
    try:
        return Calibrator.of(json.loads(path.read_text("utf-8")))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the confidence calibrator ({exc})") from None
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from None
