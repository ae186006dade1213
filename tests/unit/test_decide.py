"""Routing decisions from hand-built scores: thresholds, caps, twins, clarification, system replies."""

from __future__ import annotations

import pytest

from ragapp.config import WorkflowSettings
from ragapp.core.types import LeafScore
from ragapp.router.classifier import Classification, parse_scores
from ragapp.router.decide import decide
from ragapp.router.tree import parse_tree

TREE = parse_tree(
    """
intents:
  - code: v1
    name: Lumen V1 · 流明 V1
    children:
      - {code: v1.specs, name: Specs, kind: KB, knowledge_bases: [k]}
      - {code: v1.usage, name: Usage, kind: KB, knowledge_bases: [k]}
  - code: w3
    name: Glide W3 · 擦窗机器人
    children:
      - {code: w3.specs, name: Specs, kind: KB, knowledge_bases: [k]}
  - {code: warranty, name: Warranty, kind: KB, knowledge_bases: [k]}
  - {code: hi, name: Greeting, kind: SYSTEM}
"""
)
SETTINGS = WorkflowSettings()


def scored(question: str, *pairs: tuple[str, float], error: str | None = None) -> Classification:
    scores = []
    for code, score in pairs:
        node = TREE.get(code)
        assert node is not None and node.kind is not None
        scores.append(LeafScore(code, TREE.full_path(code), node.kind, node.parent, score))
    return Classification(question, tuple(sorted(scores, key=lambda s: -s.score)), error=error)


def test_best_intents_route_and_are_capped() -> None:
    d = decide(scored("V1 usage and warranty", ("v1.usage", 0.9), ("warranty", 0.7), ("v1.specs", 0.6)), SETTINGS, TREE)
    assert d.action == "route" and d.codes == ("v1.usage", "warranty")  # max_intents = 2


def test_low_scores_fall_back() -> None:
    d = decide(scored("?", ("warranty", 0.49)), SETTINGS, TREE)
    assert d.action == "fallback" and "0.49 < 0.50" in d.reason


def test_error_falls_back_with_the_reason() -> None:
    d = decide(scored("?", error="the model did not start answering within 5 s"), SETTINGS, TREE)
    assert d.action == "fallback" and "within 5 s" in d.reason


def test_twins_without_a_named_parent_ask_back() -> None:
    d = decide(scored("How long does the battery last?", ("v1.specs", 0.9)), SETTINGS, TREE)
    assert d.action == "clarify" and d.codes == ("v1.specs", "w3.specs")


@pytest.mark.parametrize(
    ("question", "expected"),
    [("电池 擦窗机器人", ("w3.specs",)), ("Glide battery?", ("w3.specs",)), ("V1 battery", ("v1.specs",))],
)
def test_a_named_parent_picks_its_twin(question: str, expected: tuple[str, ...]) -> None:
    assert decide(scored(question, ("v1.specs", 0.9)), SETTINGS, TREE).codes == expected


def test_naming_both_parents_routes_to_both() -> None:
    d = decide(scored("V1 vs Glide W3 battery", ("v1.specs", 0.9)), SETTINGS, TREE)
    assert d.action == "route" and set(d.codes) == {"v1.specs", "w3.specs"}


def test_close_scores_under_different_parents_ask_back_but_siblings_do_not() -> None:
    assert decide(scored("x", ("v1.usage", 0.9), ("warranty", 0.8)), SETTINGS, TREE).action == "clarify"  # margin 0.1
    siblings = decide(scored("V1 x", ("v1.usage", 0.9), ("v1.specs", 0.85)), SETTINGS, TREE)
    assert siblings.action == "route" and siblings.codes == ("v1.usage", "v1.specs")


def test_system_only_when_no_knowledge_intent_is_kept() -> None:
    assert decide(scored("hi", ("hi", 1.0)), SETTINGS, TREE).action == "system"
    mixed = decide(scored("hi, V1 usage?", ("hi", 1.0), ("v1.usage", 0.7)), SETTINGS, TREE)
    assert mixed.action == "route" and mixed.codes == ("v1.usage",)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"matches": [{"id": "a", "score": 0.9}]}', [("a", 0.9)]),
        ('```json\n{"a": 0.7, "b": "0.2"}\n```', [("a", 0.7), ("b", 0.2)]),
        ('Sure: [{"code": "a", "score": 8}] hope it helps', [("a", 0.8)]),
        ('{"matches": [{"id": "a", "score": 85}]}', [("a", 0.85)]),
        ('{"matches": [{"id": "a", "score": -3}]}', [("a", 0.0)]),
        ('{"matches": []}', []),
        ("{}", []),
        ("no idea", None),
        ('{"matches": "lots"}', None),
        ('{"matches": [{"id": "a", "score": true}]}', None),
    ],
)
def test_parse_scores(reply: str, expected: list[tuple[str, float]] | None) -> None:
    assert parse_scores(reply) == expected


def test_close_scores_route_to_the_parents_the_question_names() -> None:
    d = decide(scored("Lumen V1 vs Glide W3: which is heavier?", ("v1.usage", 0.7), ("w3.specs", 0.7)), SETTINGS, TREE)
    assert d.action == "route" and d.codes == ("v1.usage", "w3.specs")
