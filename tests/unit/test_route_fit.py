"""Routing scores that mean what they say: the calibrated score of a leaf from hand-built similarities and model
scores, the decision that reports it while its rules read the classifier's own, the embedder's clear pick that no
longer says 1.0, and the knowledge bases no leaf covers that a poorly fitting route adds."""

from __future__ import annotations

import math

import pytest

from ragapp.config import WorkflowSettings
from ragapp.config.routing import RouteCalibration
from ragapp.core.types import LeafScore
from ragapp.qa.widen import routing_event, with_uncovered
from ragapp.router.classifier import Classification
from ragapp.router.decide import RoutingDecision, decide
from ragapp.router.fast import EmbeddingClassifier, FastRule
from ragapp.router.fit import FitFeatures, LeafFit, LeafFitter, probability
from ragapp.router.tree import IntentNode, IntentTree

TREE = IntentTree(
    [
        IntentNode("v1", "V1"),
        IntentNode("v1.specs", "Specs", "v1", kind="KB", kbs=("demo",)),
        IntentNode("v2", "V2"),
        IntentNode("v2.specs", "Specs", "v2", kind="KB", kbs=("demo",)),
        IntentNode("shipping", "Shipping and returns", kind="KB", kbs=("demo",)),
        IntentNode("hello", "Greeting", kind="SYSTEM"),
    ]
)
WEIGHTS = RouteCalibration(intercept=-40.0, similarity=40.0, margin=20.0, model=3.0, no_model=2.0)


def node(code: str) -> IntentNode:
    found = TREE.get(code)
    assert found is not None
    return found


def score(code: str, value: float) -> LeafScore:
    leaf = node(code)
    assert leaf.kind is not None
    return LeafScore(code, TREE.full_path(code), leaf.kind, leaf.parent, value)


def ranked(*pairs: tuple[str, float]) -> list[tuple[IntentNode, float]]:
    return [(node(code), value) for code, value in pairs]


def test_probability_is_the_logistic_of_the_weighted_features() -> None:
    features = FitFeatures(similarity=0.9, margin=0.05, model=0.7)
    z = -40.0 + 40.0 * 0.9 + 20.0 * 0.05 + 3.0 * 0.7
    assert probability(features, WEIGHTS) == pytest.approx(1 / (1 + math.exp(-z)))
    alone = FitFeatures(similarity=0.9, margin=0.05, model=None)  # the embedder decided: no_model, not model
    assert probability(alone, WEIGHTS) == pytest.approx(1 / (1 + math.exp(-(-40.0 + 36.0 + 1.0 + 2.0))))


def test_the_margin_is_over_the_closest_leaf_that_is_not_a_twin() -> None:
    classification = Classification("q", (score("v1.specs", 0.7),))
    sims = ranked(("v1.specs", 0.90), ("v2.specs", 0.89), ("shipping", 0.85), ("hello", 0.80))
    fitter = LeafFitter(classification, sims, WEIGHTS)
    features = fitter.features("v1.specs")
    assert features == FitFeatures(similarity=0.90, margin=pytest.approx(0.05), model=0.7)
    assert fitter.features("shipping") == FitFeatures(0.85, pytest.approx(-0.05), 0.0)  # not named by the model
    assert fitter.features("gone") is None  # not in the tree the embedder compared with


def test_a_question_far_from_every_leaf_scores_low_even_when_the_model_says_probably() -> None:
    # A C library's return value, sent to "Shipping and returns" at the model's 0.7: the cosines are far below an
    # on-topic question's and the leaf stands out from none, so it does not fit.
    classification = Classification("What does foo_open return on failure?", (score("shipping", 0.7),))
    off = LeafFitter(classification, ranked(("shipping", 0.80), ("v1.specs", 0.79), ("hello", 0.78)), WEIGHTS)
    on = LeafFitter(classification, ranked(("shipping", 0.93), ("v1.specs", 0.85), ("hello", 0.80)), WEIGHTS)
    assert off.score("shipping", 0.7) < 0.1 and on.score("shipping", 0.7) > 0.5


def test_decide_reports_calibrated_scores_but_decides_on_the_classifiers() -> None:
    settings = WorkflowSettings(min_intent_score=0.5)
    classification = Classification("q", (score("shipping", 0.7),))
    fitter = LeafFitter(classification, ranked(("shipping", 0.80), ("v1.specs", 0.79), ("hello", 0.78)), WEIGHTS)
    decision = decide(classification, settings, TREE, fitter)
    assert decision.action == "route" and decision.codes == ("shipping",)  # 0.7 >= 0.5: the rule reads the raw
    calibrated = fitter.score("shipping", 0.7)
    assert decision.intents[0].score == pytest.approx(calibrated) and calibrated < 0.5
    assert decision.fit is not None and decision.fit.code == "shipping"
    assert decision.fit.probability == pytest.approx(calibrated)
    assert f"({calibrated:.2f})" in decision.reason  # the reason says the score that means something
    assert [s.score for s in decision.scores] == [pytest.approx(calibrated)]
    assert classification.scores[0].score == 0.7  # what the model said stays in the classification
    # Without a fitter (no embedder), the classifier's scores are shown as before and there is no fit.
    plain = decide(classification, settings, TREE)
    assert plain.intents[0].score == 0.7 and plain.fit is None


def test_a_fallback_below_the_minimum_still_names_its_best_leaf_and_its_fit() -> None:
    classification = Classification("q", (score("shipping", 0.4),))
    fitter = LeafFitter(classification, ranked(("shipping", 0.80), ("hello", 0.78)), WEIGHTS)
    decision = decide(classification, WorkflowSettings(), TREE, fitter)
    assert decision.action == "fallback" and decision.fit is not None and decision.fit.code == "shipping"


def test_the_embedders_clear_pick_reports_its_cosine_not_one() -> None:
    fast = EmbeddingClassifier(None, FastRule(0.88, 0.03))  # type: ignore[arg-type]  # never embeds here
    pick = fast.clear_pick("how much to ship?", ranked(("shipping", 0.95), ("v1.specs", 0.85)), TREE)
    assert pick is not None and pick.by == "embedder"
    assert [(s.code, s.score) for s in pick.scores] == [("shipping", pytest.approx(0.95))]
    fitter = LeafFitter(pick, ranked(("shipping", 0.95), ("v1.specs", 0.85)), WEIGHTS)
    decision = decide(pick, WorkflowSettings(), TREE, fitter)
    assert decision.action == "route" and decision.fit is not None
    assert decision.fit.features.model is None  # decided without the model
    assert decision.intents[0].score == pytest.approx(decision.fit.probability) and decision.intents[0].score < 1.0


def _routed(probability: float, *, chosen: bool = False, action: str = "route") -> RoutingDecision:
    fit = LeafFit("shipping", probability, FitFeatures(0.8, 0.0, 0.7))
    intents = (score("shipping", probability),) if action == "route" else ()
    return RoutingDecision("q", action, intents, "routed", None, chosen, fit)  # type: ignore[arg-type]


def test_a_route_that_fits_poorly_adds_the_uncovered_bases_and_says_so() -> None:
    uncovered = lambda: frozenset({"default", "manuals"})  # noqa: E731
    poor = with_uncovered(_routed(0.2), uncovered, 0.5)
    assert poor.also == ("default", "manuals")
    event = routing_event(poor, 0.5)
    assert event.also == ("default", "manuals") and event.fit == pytest.approx(0.2) and event.fit_min == 0.5
    assert with_uncovered(_routed(0.8), uncovered, 0.5).also == ()  # it fits: the leaf's bases only
    assert with_uncovered(_routed(0.2, chosen=True), uncovered, 0.5).also == ()  # the user's own pick
    assert with_uncovered(_routed(0.2, action="fallback"), uncovered, 0.5).also == ()  # searches everything
    assert with_uncovered(_routed(0.2), frozenset, 0.5).also == ()  # nothing uncovered
    assert routing_event(with_uncovered(_routed(0.8), uncovered, 0.5), 0.5).fit_min is None
