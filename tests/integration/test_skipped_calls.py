"""Model calls before the answer that a rule skips, and the ones it still makes: a real engine with the real
embedder over the demo intent tree; the scripted LLM stands in for the model and counts its calls (one with no
reply enqueued fails the test at teardown). Each question runs up to the passages in the prompt."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from ragapp.core.events import ClarifyEvent, EngineEvent, RetrievalEvent, RoutingEvent, StageEvent
from ragapp.core.types import ChatTurn

pytestmark = pytest.mark.integration

SPECS = "# 规格\n\n流明 V2 Pro 的吸力为 4000 Pa。Glide W3 断电后可在玻璃上吸附 20 分钟。\n"
HISTORY = [ChatTurn("user", "Hello"), ChatTurn("assistant", "Hello! Ask me about your documents.")]
NO_MATCH = '{"matches": []}'
QUESTION = "Where can I buy spare lighthouse bulbs?"
# Three knowledge leaves over the same knowledge base, with no name in common.
SAME = """
  - {code: shipping, name: Shipping, kind: KB, knowledge_bases: [demo], description: Delivery and returns}
  - {code: warranty, name: Warranty, kind: KB, knowledge_bases: [demo], description: Repairs and coverage}
  - {code: company, name: Company, kind: KB, knowledge_bases: [demo], description: The company and its shops}
"""
GREETING = """
  - {code: hello, name: Greeting, kind: SYSTEM, description: Hello and thanks, prompt: Greet the user.}
"""
TWINS = """
  - code: v1
    name: V1
    children:
      - {code: v1.specs, name: Specs, kind: KB, knowledge_bases: [demo], description: V1 weight and battery}
  - code: v2
    name: V2
    children:
      - {code: v2.specs, name: Specs, kind: KB, knowledge_bases: [demo], description: V2 weight and battery}
"""


def until_prompt(rig: Any, question: str, history: Sequence[ChatTurn] = (), kbs: Any = None) -> list[EngineEvent]:
    """The question's events up to the passages that reach the prompt (or the app asking back); no answer."""
    events = rig.engine.chat.ask(question, history, kbs, mode="workflow")
    seen: list[EngineEvent] = []
    try:
        for event in events:
            seen.append(event)
            if isinstance(event, RetrievalEvent | ClarifyEvent):
                break
    finally:
        events.close()
    return seen


def routing(events: list[EngineEvent]) -> RoutingEvent:
    return next(e for e in events if isinstance(e, RoutingEvent))


@pytest.fixture
def make_rig(make_engine: Callable[..., Any], tmp_path: Path) -> Callable[..., Any]:
    """An engine over one knowledge base and the intent tree of ``leaves``. The embedder's clear pick never
    decides (similarity 1.0 is out of reach) and, with the margin 1.0, every leaf is one the model could pick:
    whether the model is asked depends on the tree alone, not on how close the embedder finds the question."""

    def make(leaves: str, **workflow: Any) -> Any:
        rules = {"fast_route_min_similarity": 1.0, "route_same_search_margin": 1.0, **workflow}
        rig = make_engine(workflow={"route": True, "fast_route": True, **rules})
        (tmp_path / "specs.md").write_text(SPECS, "utf-8")
        assert rig.engine.library.ingest([(tmp_path / "specs.md", "specs.md")], kb="demo")[0].status == "added"
        rig.engine.intents.import_tree("version: 1\nintents:" + leaves)
        return rig

    return make


def test_routing_among_leaves_that_all_search_the_same_makes_no_model_call(make_rig: Callable[..., Any]) -> None:
    rig = make_rig(SAME)
    decision = routing(until_prompt(rig, QUESTION))
    assert decision.action == "route"
    assert "no model call" in decision.reason and "search the same" in decision.reason
    assert rig.llm.calls == []


def test_without_the_rule_the_same_question_asks_the_model(make_rig: Callable[..., Any]) -> None:
    rig = make_rig(SAME, route_same_search=False)
    rig.llm.enqueue(NO_MATCH)
    decision = routing(until_prompt(rig, QUESTION))
    assert len(rig.llm.calls) == 1 and "no model call" not in decision.reason


def test_a_message_to_the_assistant_among_the_choices_still_asks_the_model(make_rig: Callable[..., Any]) -> None:
    rig = make_rig(SAME + GREETING)
    rig.llm.enqueue(NO_MATCH)
    assert "no model call" not in routing(until_prompt(rig, QUESTION)).reason
    assert len(rig.llm.calls) == 1


def test_twins_among_the_choices_still_ask_the_model(make_rig: Callable[..., Any]) -> None:
    # Picking a "Specs" leaf may make the app ask back which product: not the same as routing to Shipping.
    rig = make_rig(SAME + TWINS)
    rig.llm.enqueue(NO_MATCH)
    assert "no model call" not in routing(until_prompt(rig, "How heavy is it?")).reason
    assert len(rig.llm.calls) == 1


def test_leaves_over_different_knowledge_bases_ask_the_model_unless_the_users_pick_makes_them_one(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    rig = make_engine(
        workflow={"route": True, "fast_route": True, "fast_route_min_similarity": 1.0, "route_same_search_margin": 1.0}
    )
    for kb in ("robots", "kettles"):
        (tmp_path / f"{kb}.md").write_text(f"# {kb}\n\nNotes about {kb}.\n", "utf-8")
        assert rig.engine.library.ingest([(tmp_path / f"{kb}.md", f"{kb}.md")], kb=kb)[0].status == "added"
    tree = """version: 1
intents:
  - {code: robots, name: Robots, kind: KB, knowledge_bases: [robots], description: Robot vacuums}
  - {code: kettles, name: Kettles, kind: KB, knowledge_bases: [kettles], description: Electric kettles}
"""
    rig.engine.intents.import_tree(tree)
    rig.llm.enqueue(NO_MATCH)
    assert "no model call" not in routing(until_prompt(rig, "How much does it weigh?")).reason
    assert len(rig.llm.calls) == 1
    # Searching only "robots", both leaves search "robots": the model's pick would change nothing.
    decision = routing(until_prompt(rig, "How much does it weigh?", kbs=frozenset({"robots"})))
    assert "search the same" in decision.reason and len(rig.llm.calls) == 1


def rewrite_steps(events: list[EngineEvent]) -> list[StageEvent]:
    return [e for e in events if isinstance(e, StageEvent) and e.stage == "rewrite"]


def test_a_standalone_question_in_a_conversation_is_not_rewritten_and_says_why(make_engine: Callable[..., Any]) -> None:
    rig = make_engine(workflow={"rewrite": True})
    steps = rewrite_steps(until_prompt(rig, "流明 V2 Pro 的吸力是多少帕？", HISTORY))
    assert [(s.status, s.detail["model call"]) for s in steps] == [("finished", "none")]
    assert "stands alone" in steps[0].detail["why"]
    assert rig.llm.calls == []
    assert rewrite_steps(until_prompt(rig, "流明 V2 Pro 的吸力是多少帕？")) == []  # asked on its own: nothing to say


def test_a_standalone_question_of_several_parts_is_cut_by_its_wording(make_engine: Callable[..., Any]) -> None:
    question = "What is the suction of the Lumen V2 Pro? How long does the Glide W3 hold on after a power cut?"
    rig = make_engine(workflow={"rewrite": True})
    events = until_prompt(rig, question, HISTORY)
    (step,) = rewrite_steps(events)
    assert "cut by the wording" in step.detail["why"] and rig.llm.calls == []
    queries = next(e for e in events if isinstance(e, StageEvent) and e.stage == "retrieve" and e.status != "started")
    assert queries.detail["queries"] == [
        "What is the suction of the Lumen V2 Pro?",
        "How long does the Glide W3 hold on after a power cut?",
    ]


def test_with_rewrite_multi_part_on_the_model_splits_it(make_engine: Callable[..., Any]) -> None:
    question = "What is the suction of the Lumen V2 Pro? How long does the Glide W3 hold on after a power cut?"
    rig = make_engine(workflow={"rewrite": True, "rewrite_multi_part": True})
    rig.llm.enqueue(f'{{"question": "{question}", "sub_questions": ["V2 Pro suction?", "Glide W3 hold time?"]}}')
    events = until_prompt(rig, question, HISTORY)
    assert len(rig.llm.calls) == 1
    assert [s.status for s in rewrite_steps(events)] == ["started", "finished"]


def test_a_follow_up_that_points_back_is_still_rewritten(make_engine: Callable[..., Any]) -> None:
    rig = make_engine(workflow={"rewrite": True})
    rig.llm.enqueue('{"question": "How much does the Lumen V2 Pro cost?", "sub_questions": []}')
    events = until_prompt(rig, "How much does it cost?", HISTORY)
    assert len(rig.llm.calls) == 1
    assert [s.status for s in rewrite_steps(events)] == ["started", "finished"]


MATIO = (
    "# Reading\n\nMat_VarReadNextInfo reads the header of the next variable in the file and returns it; call it "
    "until it returns NULL to visit every variable.\n\n# Writing\n\nMat_VarWrite writes a variable to the file.\n"
)
FOLLOW_UP = "Which function reads its next variable's header?"  # "its": points back


def test_a_follow_up_whose_own_search_is_strong_is_not_rewritten(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    # 0.0: any passage the shipped reranker kept is strong enough; 1.0: none is (no score reaches it)
    for above, calls in ((0.0, 0), (1.0, 1)):
        rig = make_engine(
            f"state-{above}", workflow={"rewrite": True, "rewrite_above_score": above}, rerank={"backend": "builtin"}
        )
        (tmp_path / "matio.md").write_text(MATIO, "utf-8")
        assert rig.engine.library.ingest([(tmp_path / "matio.md", "matio.md")])[0].status == "added"
        if calls:
            rig.llm.enqueue(f'{{"question": "{FOLLOW_UP}", "sub_questions": []}}')
        events = until_prompt(rig, FOLLOW_UP, [ChatTurn("user", "I use matio."), ChatTurn("assistant", "Noted.")])
        assert len(rig.llm.calls) == calls
        if not calls:
            (step,) = rewrite_steps(events)
            assert step.detail["rule"] == "skipped.strong_search" and "rewrite_above_score 0.00" in step.detail["why"]
            assert (
                "Mat_VarReadNextInfo" in next(e for e in events if isinstance(e, RetrievalEvent)).chunks[0].chunk.text
            )


def test_a_follow_up_naming_too_little_is_rewritten_however_strong_its_search(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    """ "and when it fails?" names one word of its own: its search finds whatever fails in any document, so a
    strong passage there says nothing of the question; it is rewritten even where any passage counts as strong."""
    rig = make_engine(workflow={"rewrite": True, "rewrite_above_score": 0.0}, rerank={"backend": "builtin"})
    (tmp_path / "matio.md").write_text(MATIO, "utf-8")
    assert rig.engine.library.ingest([(tmp_path / "matio.md", "matio.md")])[0].status == "added"
    standalone = "What does Mat_VarReadNextInfo return when it fails?"
    rig.llm.enqueue(f'{{"question": "{standalone}", "sub_questions": []}}')
    history = [ChatTurn("user", "What does Mat_VarReadNextInfo return?"), ChatTurn("assistant", "The header [1].")]
    events = until_prompt(rig, "and when it fails?", history)
    assert len(rig.llm.calls) == 1  # the rewrite
    assert [s.status for s in rewrite_steps(events)] == ["started", "finished"]
