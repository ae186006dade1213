"""How well a question fits a leaf: the probability that the leaf is the right one, from what routing knows.

The classifier's own scores do not mean that: the local model says 1.0, 0.7 or 0.4 and gives 0.7 to a question
about a C library on "Shipping and returns" as readily as to a right answer, and the embedder's clear pick used
to say 1.0 whatever the question. So every leaf a decision names gets a calibrated score instead: a logistic
model (``RouteCalibration``, fitted by ``python -m ragbench.routing.fit`` on the dev half of the
labelled routing questions) over the embedder's cosine between the question and the leaf, how far that stands
above the closest leaf that is not its twin, and the model's score (or the fact that the embedder decided alone).
Pure: the similarities come in from ``EmbeddingClassifier.similarities``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ragapp.config.routing import RouteCalibration
from ragapp.router.classifier import Classification
from ragapp.router.fast import twins
from ragapp.router.tree import IntentNode


@dataclass(frozen=True)
class FitFeatures:
    """What the calibration reads for one leaf."""

    similarity: float  # the embedder's cosine between the question and the leaf (its best text)
    margin: float  # similarity minus the best cosine of a leaf that is not this one or its twin
    model: float | None  # the model's score for the leaf (0: not named); None: the embedder decided alone


@dataclass(frozen=True)
class LeafFit:
    """The calibrated score of the leaf a decision names first, and what it was computed from."""

    code: str
    probability: float
    features: FitFeatures


def probability(features: FitFeatures, weights: RouteCalibration) -> float:
    """The logistic model's probability that the leaf is right."""
    z = (
        weights.intercept
        + weights.similarity * features.similarity
        + weights.margin * features.margin
        + (weights.no_model if features.model is None else weights.model * features.model)
    )
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


class LeafFitter:
    """Calibrated scores for the leaves of one classification, given every leaf's similarity to its question."""

    def __init__(
        self,
        classification: Classification,
        ranked: Sequence[tuple[IntentNode, float]],
        weights: RouteCalibration,
    ) -> None:
        self._classification = classification
        self._weights = weights
        self._similarity: Mapping[str, float] = {leaf.code: score for leaf, score in ranked}
        self._leaves = {leaf.code: leaf for leaf, _ in ranked}

    def features(self, code: str) -> FitFeatures | None:
        """None for a leaf the embedder did not score (not in the tree it compared with)."""
        leaf = self._leaves.get(code)
        if leaf is None:
            return None
        mine = self._similarity[code]
        others = [s for c, s in self._similarity.items() if c != code and not twins(self._leaves[c], leaf)]
        margin = mine - max(others) if others else 0.0
        by_model = self._classification.by == "model"
        return FitFeatures(mine, margin, self._classification.score_of(code) if by_model else None)

    def fit(self, code: str) -> LeafFit | None:
        features = self.features(code)
        return None if features is None else LeafFit(code, probability(features, self._weights), features)

    def score(self, code: str, raw: float) -> float:
        """The calibrated score of ``code`` (``raw``, the classifier's own, when it cannot be computed)."""
        fitted = self.fit(code)
        return raw if fitted is None else fitted.probability
