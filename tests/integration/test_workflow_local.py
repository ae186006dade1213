"""Smoke test of the workflow's model calls with the real packaged model: intent scoring on the demo tree
and rewriting a follow-up. The routing figures on 50 labelled questions come from `make routing-eval`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragapp.config import Settings
from ragapp.core.types import ChatTurn
from ragapp.models.llm import LLM
from ragapp.qa.rewrite import QuestionPlanner
from ragapp.router.router import IntentRouter
from ragapp.router.store import IntentStore
from ragapp.router.tree import parse_tree
from tests.shared_models import SharedModels
from tests.workers import MODEL_THREADS

pytestmark = [pytest.mark.integration, pytest.mark.llm, pytest.mark.slow]

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make setup)")

MODEL = os.environ.get("RAGAPP_TEST_LOCAL_MODEL", "qwen2.5-coder-1.5b")
DEMO_TREE = Path(__file__).resolve().parents[2] / "data" / "intents" / "demo.yaml"


@pytest.fixture(scope="module")
def settings() -> Settings:
    return Settings(llm={"local_model": MODEL, "threads": MODEL_THREADS})


@pytest.fixture(scope="module")
def llm(settings: Settings, shared_models: SharedModels) -> LLM:
    """The run's local model: the classifier's prompt over the demo tree may be read already (an app of the
    browser tests warmed it)."""
    model = shared_models.llm(settings)
    assert model is not None
    return model


@pytest.fixture(scope="module")
def router(llm: LLM, settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> IntentRouter:
    store = IntentStore(tmp_path_factory.mktemp("intents") / "intents.sqlite3").start()
    store.seed(parse_tree(DEMO_TREE.read_text("utf-8")))
    return IntentRouter(store, llm, settings.workflow, settings.llm.timeout_s)


@pytest.mark.parametrize(
    ("question", "action", "codes"),
    [
        ("What does error code E07 mean on the Lumen V2 Pro?", "route", ("lumen-v2-pro.errors",)),
        ("你好", "system", ("assistant.greeting",)),
        ("电池能用多久？", "clarify", None),
    ],
    ids=["route-en", "system-zh", "clarify-zh"],
)
def test_real_model_routes_the_demo_tree(router: IntentRouter, question: str, action: str, codes: object) -> None:
    decision = router.route(question)
    assert decision.classification is not None and decision.classification.error is None
    assert decision.action == action, decision.reason
    if codes is not None:
        assert decision.codes == codes


def test_real_model_rewrites_a_follow_up(llm: LLM, settings: Settings) -> None:
    planner = QuestionPlanner(llm, settings.llm.timeout_s, settings.workflow.max_sub_questions)
    history = [
        ChatTurn("user", "What is the suction power of the Lumen V2 Pro?"),
        ChatTurn("assistant", "The Lumen V2 Pro has 5000 Pa of suction [1]."),
    ]
    plan = planner.plan("And the V1?", history)
    assert plan.error is None, plan.reply
    assert "V1" in plan.standalone and "suction" in plan.standalone.lower(), plan.standalone
