"""Routing without a model call when the tree decides clearly: the real embedder over the demo intent tree, a
scripted LLM that counts the classifier calls it gets."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ragapp.router.tree import IntentNode

pytestmark = pytest.mark.integration

DEMO_TREE = Path(__file__).resolve().parents[2] / "data" / "intents" / "demo.yaml"


SPECS = "# 规格\n\n流明 V2 Pro 的吸力为 4000 Pa。流明 V1 的吸力为 2500 Pa。\n"


@pytest.fixture
def rig(make_engine: Callable[..., object], tmp_path: Path) -> object:
    # Only the embedder's clear pick here: the rule for leaves that all search the same has tests of its own
    # (test_skipped_calls.py), and would decide the unclear questions below without the model.
    rig = make_engine(workflow={"route": True, "fast_route": True, "route_same_search": False})
    (tmp_path / "specs.md").write_text(SPECS, "utf-8")
    assert rig.engine.library.ingest([(tmp_path / "specs.md", "specs.md")], kb="demo")[0].status == "added"  # type: ignore[attr-defined]
    rig.engine.intents.import_tree(DEMO_TREE.read_text("utf-8"))  # type: ignore[attr-defined]
    return rig


def test_a_question_that_names_its_topic_is_routed_without_the_model(rig: object) -> None:
    decision = rig.engine.intents.test("Who founded Lumen Robotics?")  # type: ignore[attr-defined]
    assert decision.action == "route" and decision.codes == ("company",)
    assert "no model call: embedder: company" in decision.reason
    assert rig.llm.calls == []  # type: ignore[attr-defined]


def test_twins_still_go_through_the_decision_rules(rig: object) -> None:
    # Every robot has a "Specs and battery" leaf; the question names no product: ask back, as with the model.
    decision = rig.engine.intents.test("吸力有多大？")  # type: ignore[attr-defined]
    assert decision.action == "clarify" and len(decision.intents) >= 2
    assert rig.llm.calls == []  # type: ignore[attr-defined]


def test_an_unclear_question_is_left_to_the_model(rig: object) -> None:
    rig.llm.enqueue('{"matches": []}')  # type: ignore[attr-defined]
    decision = rig.engine.intents.test("Are you a real person or a bot?")  # type: ignore[attr-defined]
    assert len(rig.llm.calls) == 1 and "no model call" not in decision.reason  # type: ignore[attr-defined]


def test_an_edited_leaf_is_embedded_again(rig: object) -> None:
    question = "Where can I buy spare lighthouse bulbs?"
    rig.llm.enqueue('{"matches": []}')  # type: ignore[attr-defined]
    assert "no model call" not in rig.engine.intents.test(question).reason  # type: ignore[attr-defined]
    leaf = rig.engine.intents.tree().get("company")  # type: ignore[attr-defined]
    assert isinstance(leaf, IntentNode)
    edited = IntentNode(**{**leaf.__dict__, "examples": (*leaf.examples, "Where can I buy spare lighthouse bulbs?")})
    rig.engine.intents.save(edited, replacing="company")  # type: ignore[attr-defined]
    decision = rig.engine.intents.test(question)  # type: ignore[attr-defined]
    assert decision.codes == ("company",) and "no model call" in decision.reason
