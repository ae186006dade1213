"""Workflow mode, step by step, through the real engine: real stores and embedder, the scripted LLM at the
LLM seam (each test enqueues exactly the replies of the calls it expects: rewrite, classification, summary,
answer).

Two small products live in two knowledge bases; their "Specs" leaves are twins under different parents, so
"how long does the battery last?" is ambiguous.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ragapp.core.errors import LLMError
from ragapp.core.events import (
    AnswerEvent,
    ClarifyEvent,
    EngineEvent,
    MemoryEvent,
    NoticeEvent,
    RetrievalEvent,
    RewriteEvent,
    RoutingEvent,
    StageEvent,
)
from ragapp.core.types import ChatTurn
from ragapp.qa.pipeline import Clarified
from ragapp.qa.prompts import PART_EN

pytestmark = pytest.mark.integration

TREE = """
intents:
  - code: products
    name: Products
    children:
      - code: alpha
        name: Alpha robot
        children:
          - {code: alpha.specs, name: Specs, kind: KB, knowledge_bases: [alpha], description: Alpha battery and size}
          - {code: alpha.care, name: Care, kind: KB, knowledge_bases: [alpha], description: Cleaning the Alpha}
      - code: beta
        name: Beta robot
        children:
          - code: beta.specs
            name: Specs
            kind: KB
            knowledge_bases: [beta]
            description: Beta battery and size
            top_k: 2
  - code: assistant
    name: Assistant
    children:
      - code: assistant.greeting
        name: Greeting
        kind: SYSTEM
        description: hello and thanks
        prompt: Greet the user and mention the Alpha and Beta robots.
"""
ALPHA = "# Alpha robot manual\n\nThe Alpha robot battery lasts 90 minutes. The Alpha robot weighs 2.1 kg.\n"
BETA = "# Beta robot manual\n\nThe Beta robot battery lasts 150 minutes. The Beta robot weighs 3.4 kg.\n"


def matches(*pairs: tuple[str, float]) -> str:
    return '{"matches": [' + ", ".join(f'{{"id": "{c}", "score": {s}}}' for c, s in pairs) + "]}"


@pytest.fixture
def rig(make_engine: Callable[..., object], tmp_path: Path) -> object:
    return _rig(make_engine, tmp_path)


def _rig(make_engine: Callable[..., object], tmp_path: Path, **workflow: object) -> object:
    rig = make_engine(workflow={"rewrite": True, "route": True, **workflow})
    for name, text, kb in (("alpha_manual.md", ALPHA, "alpha"), ("beta_manual.md", BETA, "beta")):
        path = tmp_path / name
        path.write_text(text, "utf-8")
        assert rig.engine.library.ingest([(path, name)], kb=kb)[0].status == "added"  # type: ignore[attr-defined]
    rig.engine.intents.import_tree(TREE)  # type: ignore[attr-defined]
    return rig


def ask(rig: object, question: str, *args: object, **kwargs: object) -> list[EngineEvent]:
    return list(rig.engine.chat.ask(question, *args, **kwargs))  # type: ignore[attr-defined]


def only(events: list[EngineEvent], kind: type) -> list:  # type: ignore[type-arg]
    return [e for e in events if isinstance(e, kind)]


def sources(events: list[EngineEvent]) -> set[str]:
    return {c.chunk.source for e in only(events, RetrievalEvent) for c in e.chunks}


def test_follow_up_is_rewritten_with_the_conversation_and_routed(rig: object) -> None:
    history = [ChatTurn("user", "How long does the Alpha battery last?"), ChatTurn("assistant", "90 minutes [1].")]
    rig.llm.enqueue(  # type: ignore[attr-defined]
        '{"question": "How long does the Beta robot battery last?", '
        '"sub_questions": ["How long does the Beta robot battery last?"]}',
        matches(("beta.specs", 0.9)),
        "The Beta battery lasts 150 minutes [1].",
    )
    events = ask(rig, "And the Beta?", history)

    rewrite = only(events, RewriteEvent)[0]
    assert (rewrite.original, rewrite.standalone) == ("And the Beta?", "How long does the Beta robot battery last?")
    assert only(events, RoutingEvent)[0].intents[0].code == "beta.specs"
    assert sources(events) == {"beta_manual.md"}  # searched in the leaf's knowledge base only
    calls = rig.llm.calls  # type: ignore[attr-defined]
    assert "Conversation:" in calls[0][-1].content and "And the Beta?" in calls[0][-1].content
    assert rig.llm.json_calls == [True, True, False]  # type: ignore[attr-defined]
    assert calls[2][-1].content.endswith("How long does the Beta robot battery last?")
    assert only(events, AnswerEvent)[0].citations


def test_multi_part_question_is_split_and_each_part_routed_retrieved_and_answered(rig: object) -> None:
    question = "How long does the Alpha battery last, and how much does the Beta weigh?"
    rig.llm.enqueue(  # type: ignore[attr-defined]
        matches(("alpha.specs", 0.9)),
        matches(("beta.specs", 0.8)),
        "The Alpha battery lasts 90 minutes [1].",
        "The Beta weighs 3.4 kg [2].",
    )
    events = ask(rig, question)

    # Cut by its wording, without a model call: both parts stand alone, so each is routed and searched.
    parts = ("How long does the Alpha battery last", "how much does the Beta weigh?")
    assert only(events, RewriteEvent)[0].sub_questions == parts
    assert [r.intents[0].code for r in only(events, RoutingEvent)] == ["alpha.specs", "beta.specs"]
    assert sources(events) == {"alpha_manual.md", "beta_manual.md"}
    # Each part is answered from the same passages, with the whole question beside it, the second after the
    # first was answered (the first part's prompt begins the second's), then put together.
    first, second = rig.llm.calls[-2:]  # type: ignore[attr-defined]
    assert first[-1].content.endswith(f"Question: {question}\n{PART_EN}{parts[0]}")
    assert second[: len(first)] == first
    assert [(t.role, t.content) for t in second[len(first) :]] == [
        ("assistant", "The Alpha battery lasts 90 minutes [1]."),
        ("user", f"{PART_EN}{parts[1]}"),
    ]
    answer = only(events, AnswerEvent)[0]
    assert answer.text == "The Alpha battery lasts 90 minutes [1].\n\nThe Beta weighs 3.4 kg [2]."
    assert [c.number for c in answer.citations] == [1, 2]
    assert not answer.abstained


def test_a_part_the_documents_do_not_answer_is_named_and_the_rest_answered(rig: object) -> None:
    question = "How long does the Alpha battery last? How long is the Alpha's charging cable?"
    rig.llm.enqueue(  # type: ignore[attr-defined]
        matches(("alpha.specs", 0.9)),
        matches(("alpha.specs", 0.9)),
        "The Alpha battery lasts 90 minutes [1].",
        "The charging cable is 1.8 m long [1].",
    )
    answer = only(ask(rig, question), AnswerEvent)[0]

    # Half an answer is no answer: said as "not sure", the parts put together kept as the guess.
    first, second = answer.guess.split("\n\n")
    assert first == "The Alpha battery lasts 90 minutes [1]."
    assert second == "The documents do not say: How long is the Alpha's charging cable?"
    assert answer.not_sure and answer.text.startswith("Not sure")
    assert not answer.abstained and answer.confidence is not None and answer.confidence.level == "low"
    assert any(c.check == "parts" and not c.passed for c in answer.confidence.checks)


def test_a_single_plain_question_makes_no_rewrite_call(rig: object) -> None:
    rig.llm.enqueue(matches(("alpha.specs", 0.9)), "90 minutes [1].")  # type: ignore[attr-defined]
    events = ask(rig, "How long does the Alpha battery last?")
    assert not only(events, RewriteEvent)
    assert len(rig.llm.calls) == 2  # type: ignore[attr-defined]


def test_ids_outside_the_candidate_list_are_ignored(rig: object) -> None:
    rig.llm.enqueue(  # type: ignore[attr-defined]
        matches(("gamma.specs", 0.99), ("alpha", 0.95), ("products", 0.9), ("alpha.specs", 0.8)), "90 minutes [1]."
    )
    events = ask(rig, "How long does the Alpha battery last?")
    routing = only(events, RoutingEvent)[0]
    assert routing.action == "route"
    assert [i.code for i in routing.intents] == ["alpha.specs"]  # groups and unknown ids never route
    assert [s.code for s in routing.scores] == ["alpha.specs"]


def test_low_scores_are_dropped_and_the_question_searches_everything(rig: object) -> None:
    rig.llm.enqueue(matches(("alpha.specs", 0.3)), "Alpha: 90 minutes [1].")  # type: ignore[attr-defined]
    events = ask(rig, "robot battery minutes")
    routing = only(events, RoutingEvent)[0]
    assert routing.action == "fallback" and "0.30 < 0.50" in routing.reason
    assert sources(events) == {"alpha_manual.md", "beta_manual.md"}


def test_ambiguous_question_asks_back_then_the_pick_answers_it(rig: object) -> None:
    rig.llm.enqueue(matches(("alpha.specs", 0.9)))  # type: ignore[attr-defined]
    events = ask(rig, "How long does the battery last?")

    clarify = only(events, ClarifyEvent)[0]
    assert [c.code for c in clarify.choices] == ["alpha.specs", "beta.specs"]
    assert not only(events, RetrievalEvent)  # nothing searched, nothing guessed
    answer = only(events, AnswerEvent)[0]
    assert "Which one" in answer.text and not answer.grounded
    assert len(rig.llm.calls) == 1  # type: ignore[attr-defined]

    rig.llm.enqueue("The Beta battery lasts 150 minutes [1].")  # type: ignore[attr-defined]
    picked = Clarified(clarify.sub_questions, clarify.ambiguous, "beta.specs")
    events = ask(rig, clarify.question, clarified=picked)
    routing = only(events, RoutingEvent)[0]
    assert routing.action == "route" and routing.intents[0].code == "beta.specs"
    assert sources(events) == {"beta_manual.md"}
    assert len(rig.llm.calls) == 2  # type: ignore[attr-defined]  (the pick needs no second classification)
    assert "Beta robot" in rig.llm.calls[-1][-1].content  # type: ignore[attr-defined]  (the pick says which)


def test_question_naming_one_twin_is_routed_there_whatever_the_model_picked(rig: object) -> None:
    rig.llm.enqueue(matches(("alpha.specs", 0.9)), "150 minutes [1].")  # type: ignore[attr-defined]
    events = ask(rig, "How long does the Beta battery last?")
    routing = only(events, RoutingEvent)[0]
    assert [i.code for i in routing.intents] == ["beta.specs"]
    assert "names" in routing.reason


def test_close_scores_under_different_parents_ask_back(rig: object) -> None:
    rig.llm.enqueue(matches(("alpha.specs", 0.9), ("beta.specs", 0.85)))  # type: ignore[attr-defined]
    events = ask(rig, "How heavy is the robot?")
    assert [c.code for c in only(events, ClarifyEvent)[0].choices] == ["alpha.specs", "beta.specs"]


def test_close_scores_route_to_both_when_the_question_names_both(rig: object) -> None:
    rig.llm.enqueue(matches(("alpha.specs", 0.9), ("beta.specs", 0.85)), "2.1 kg and 3.4 kg [1][2].")  # type: ignore[attr-defined]
    events = ask(rig, "Which is heavier, the Alpha or the Beta robot?")
    assert [i.code for i in only(events, RoutingEvent)[0].intents] == ["alpha.specs", "beta.specs"]
    assert sources(events) == {"alpha_manual.md", "beta_manual.md"}


def test_search_everything_choice_falls_back(rig: object) -> None:
    rig.llm.enqueue("Alpha 90, Beta 150 [1][2].")  # type: ignore[attr-defined]
    q = "How long does the battery last?"
    events = ask(rig, q, clarified=Clarified((q,), q, "*"))
    assert only(events, RoutingEvent)[0].action == "fallback"
    assert sources(events) == {"alpha_manual.md", "beta_manual.md"}


def test_system_intent_is_answered_without_retrieval(rig: object) -> None:
    rig.llm.enqueue(matches(("assistant.greeting", 1.0)), "Hello! Ask me about Alpha and Beta.")  # type: ignore[attr-defined]
    events = ask(rig, "hello there")
    assert only(events, RoutingEvent)[0].action == "system"
    assert not only(events, RetrievalEvent)
    assert not [e for e in only(events, StageEvent) if e.stage == "retrieve"]
    assert only(events, AnswerEvent)[0].text == "Hello! Ask me about Alpha and Beta."
    system = rig.llm.calls[-1][0].content  # type: ignore[attr-defined]
    assert "mention the Alpha and Beta robots" in system  # the leaf's own prompt


@pytest.mark.parametrize(
    "reply",
    [LLMError("the server is down"), "I think it is about the alpha robot!!!", '{"matches": "lots"}', ""],
    ids=["llm-error", "prose", "wrong-shape", "empty"],
)
def test_classifier_failure_or_garbage_means_no_intent_never_a_crash(rig: object, reply: object) -> None:
    rig.llm.enqueue(reply, "Alpha: 90 minutes [1].")  # type: ignore[attr-defined]
    events = ask(rig, "How long does the Alpha battery last?")
    routing = only(events, RoutingEvent)[0]
    assert routing.action == "fallback"
    assert routing.reason.startswith("no intent") or "matched no intent" in routing.reason
    assert sources(events)  # still searched (everything), still answered
    assert only(events, AnswerEvent)[0].grounded


def test_garbage_rewrite_keeps_the_question_as_asked(rig: object) -> None:
    history = [ChatTurn("user", "Hi"), ChatTurn("assistant", "Hello!")]
    rig.llm.enqueue("Sure! Here is the rewritten question", matches(("alpha.specs", 0.9)), "90 minutes [1].")  # type: ignore[attr-defined]
    events = ask(rig, "And how long does the Alpha battery last?", history)  # "And" points back: rewritten
    failed = [e for e in only(events, StageEvent) if e.stage == "rewrite" and e.status == "failed"]
    assert failed and "no usable question" in (failed[0].error or "")
    assert not only(events, RewriteEvent)
    assert only(events, AnswerEvent)[0].text == "90 minutes [1]."


def test_a_follow_up_that_stands_alone_is_not_rewritten(rig: object) -> None:
    history = [ChatTurn("user", "Hi"), ChatTurn("assistant", "Hello!")]
    rig.llm.enqueue(matches(("alpha.specs", 0.9)), "90 minutes [1].")  # type: ignore[attr-defined]
    events = ask(rig, "How long does the Alpha battery last?", history)
    # The rewrite step only says why it made no call (the question stands alone)
    rewrite = [e for e in only(events, StageEvent) if e.stage == "rewrite"]
    assert [(e.status, e.detail["model call"], e.detail["rule"]) for e in rewrite] == [
        ("finished", "none", "skipped.stands_alone")
    ]
    assert len(rig.llm.calls) == 2  # type: ignore[attr-defined]  # routing and the answer: no rewrite call
    assert only(events, AnswerEvent)[0].text == "90 minutes [1]."


def test_old_turns_are_summarised_and_the_summary_reaches_the_answer(
    make_engine: Callable[..., object], tmp_path: Path
) -> None:
    rig = make_engine(workflow={"recent_turns": 1})
    path = tmp_path / "alpha_manual.md"
    path.write_text(ALPHA, "utf-8")
    rig.engine.library.ingest([(path, path.name)])  # type: ignore[attr-defined]
    history = [
        ChatTurn("user", "I own an Alpha robot."),
        ChatTurn("assistant", "Noted."),
        ChatTurn("user", "It is two years old."),
        ChatTurn("assistant", "OK."),
        ChatTurn("user", "What does it weigh?"),
        ChatTurn("assistant", "2.1 kg [1]."),
    ]
    rig.llm.enqueue("The user owns a two-year-old Alpha robot.", "90 minutes [1].")  # type: ignore[attr-defined]
    events = ask(rig, "How long does the Alpha battery last?", history, summary="The user is called Ada.")

    memory = only(events, MemoryEvent)[0]
    assert memory == MemoryEvent("The user owns a two-year-old Alpha robot.", 4)
    summary_call, answer_call = rig.llm.calls  # type: ignore[attr-defined]
    assert "The user is called Ada." in summary_call[-1].content and "two years old" in summary_call[-1].content
    assert "two-year-old Alpha robot" in answer_call[0].content  # the summary is in the system prompt
    assert [t.content for t in answer_call[1:-1]] == ["What does it weigh?", "2.1 kg [1]."]  # recent turn verbatim


def test_failed_summary_falls_back_to_the_old_questions(make_engine: Callable[..., object], tmp_path: Path) -> None:
    rig = make_engine(workflow={"recent_turns": 0})
    history = [ChatTurn("user", "Tell me about Alpha."), ChatTurn("assistant", "Alpha is a robot.")]
    rig.llm.enqueue(LLMError("down"))  # type: ignore[attr-defined]
    events = ask(rig, "What is Gamma?", history)  # an empty store: "not found", no answer call
    memory = only(events, MemoryEvent)[0]
    assert "Tell me about Alpha." in memory.summary and memory.folded == 2
    assert [e for e in only(events, StageEvent) if e.stage == "memory" and e.status == "failed"]


def test_small_window_folds_the_history_first_then_condenses_passages(
    make_engine: Callable[..., object], tmp_path: Path
) -> None:
    rig = make_engine(
        llm={"max_tokens": 200},
        workflow={"context_window": 700},
        budget={"history": 0.2},
        retrieval={"channel_timeout_s": 60},  # a busy machine's vector search must not fall back to keywords
    )
    path = tmp_path / "long.md"
    path.write_text(
        "\n\n".join(
            f"## Part {n}\n\n" + f"The Alpha robot battery fact number {n} is {n} minutes. " * 6 for n in range(12)
        ),
        "utf-8",
    )
    rig.engine.library.ingest([(path, path.name)])  # type: ignore[attr-defined]
    history = [
        ChatTurn("user", "x " * 400),
        ChatTurn("assistant", "y " * 400),
        ChatTurn("user", "Hi"),
        ChatTurn("assistant", "Hello"),
    ]
    # The conversation (500 tokens) is over its 100: the long old turn is folded into a summary first.
    rig.llm.enqueue("The user typed x.", "Facts [1].")  # type: ignore[attr-defined]
    events = ask(rig, "Alpha robot battery fact minutes", history)
    memory = only(events, MemoryEvent)[0]
    assert memory == MemoryEvent("The user typed x.", 2)
    stages = {e.stage: e for e in only(events, StageEvent) if e.status == "finished"}
    assert stages["memory"].detail["over budget"] == "2 more messages folded, summary within 50 characters"
    kept = only(events, RetrievalEvent)[0].chunks
    detail = stages["retrieve"].detail
    assert detail["relevant"] == len(kept) == 5  # condensed to fit: none dropped
    assert detail["prompt"]["history"] <= detail["budget"]["history"]  # type: ignore[index]
    assert detail["compressed"] == ["passages after the best condensed to 1 sentence(s) each"]
    summary_call, answer_call = rig.llm.calls  # type: ignore[attr-defined]
    assert "x x x" in summary_call[-1].content and "The user typed x." in answer_call[0].content
    assert [m.content for m in answer_call[1:-1]] == ["Hi", "Hello"]  # the recent turn verbatim
    generate = next(e for e in only(events, StageEvent) if e.stage == "generate" and e.status == "started")
    parts = generate.detail["prompt parts"]
    assert set(parts) == {"instructions", "question", "history", "memories", "passages"}  # type: ignore[arg-type]


def test_user_scope_wins_over_the_intent_when_they_do_not_overlap(rig: object) -> None:
    rig.llm.enqueue(matches(("alpha.specs", 0.9)), "Beta: 150 minutes [1].")  # type: ignore[attr-defined]
    events = ask(rig, "How long does the Alpha battery last?", [], frozenset({"beta"}))
    assert sources(events) == {"beta_manual.md"}


def test_nothing_relevant_in_the_intents_knowledge_base_widens_the_search(
    make_engine: Callable[..., object], tmp_path: Path
) -> None:
    # The leaf counts as fitting however low its calibrated score (route_fit_min 0): only its own search, which
    # finds nothing relevant, sends the question to the wider scope.
    rig = _rig(make_engine, tmp_path, route_fit_min=0.0)
    path = tmp_path / "kettle.md"
    path.write_text("# Kettle\n\nThe Orion kettle filter is rinsed every 14 days.\n", "utf-8")
    rig.engine.library.ingest([(path, path.name)])  # type: ignore[attr-defined]  (into "default", unknown to the tree)
    rig.llm.enqueue(matches(("alpha.care", 0.9)), "Every 14 days [1].")  # type: ignore[attr-defined]
    events = ask(rig, "How often is the Orion kettle filter rinsed?")
    assert only(events, RoutingEvent)[0].intents[0].code == "alpha.care"
    assert sources(events) == {"kettle.md"}
    notices = [e.message for e in only(events, NoticeEvent)]
    assert notices == ["Nothing relevant in alpha; searched all knowledge bases instead."]


def test_a_leaf_that_fits_poorly_searches_the_upload_it_does_not_cover_at_once(rig: object, tmp_path: Path) -> None:
    path = tmp_path / "kettle.md"
    path.write_text("# Kettle\n\nThe Orion kettle filter is rinsed every 14 days.\n", "utf-8")
    rig.engine.library.ingest([(path, path.name)])  # type: ignore[attr-defined]  (into "default", unknown to the tree)
    rig.llm.enqueue(matches(("alpha.care", 0.9)), "Every 14 days [1].")  # type: ignore[attr-defined]
    events = ask(rig, "How often is the Orion kettle filter rinsed?")
    routing = only(events, RoutingEvent)[0]
    assert routing.intents[0].code == "alpha.care" and routing.also == ("default",)
    assert sources(events) == {"kettle.md"} and not only(events, NoticeEvent)  # found in the first search


def test_no_asking_back_about_knowledge_bases_outside_the_users_scope(rig: object) -> None:
    rig.llm.enqueue(matches(("alpha.specs", 0.9)), "150 minutes [1].")  # type: ignore[attr-defined]
    events = ask(rig, "How long does the battery last?", [], frozenset({"beta"}))
    routing = only(events, RoutingEvent)[0]
    assert routing.action == "route" and [i.code for i in routing.intents] == ["beta.specs"]
    assert sources(events) == {"beta_manual.md"}


def test_no_asking_back_when_nothing_in_those_knowledge_bases_is_relevant(rig: object) -> None:
    rig.llm.enqueue(matches(("alpha.specs", 0.7)))  # type: ignore[attr-defined]  (a small model's guess)
    events = ask(rig, "What is the capital of France?")
    routing = only(events, RoutingEvent)[0]
    assert routing.action == "fallback" and "not asking back" in routing.reason
    assert not only(events, ClarifyEvent)
    assert only(events, AnswerEvent)[0].grounded is False  # "not in the knowledge base", no answer call


def test_no_asking_back_when_the_best_passage_is_elsewhere(rig: object, tmp_path: Path) -> None:
    path = tmp_path / "kettle.md"
    path.write_text("# Kettle\n\nThe Orion kettle battery lasts 30 minutes.\n", "utf-8")
    rig.engine.library.ingest([(path, path.name)])  # type: ignore[attr-defined]  (into "default", unknown to the tree)
    rig.llm.enqueue(matches(("alpha.specs", 0.7)), "30 minutes [1].")  # type: ignore[attr-defined]
    events = ask(rig, "How long does the Orion kettle battery last?")
    routing = only(events, RoutingEvent)[0]
    assert routing.action == "fallback" and "the best passage is in default" in routing.reason
    assert "kettle.md" in sources(events)


def test_a_hanging_classifier_costs_its_step_budget_not_the_answer(
    make_engine: Callable[..., object], tmp_path: Path
) -> None:
    rig = make_engine(workflow={"route": True, "step_timeout_s": 0.5})
    path = tmp_path / "alpha_manual.md"
    path.write_text(ALPHA, "utf-8")
    rig.engine.library.ingest([(path, path.name)])  # type: ignore[attr-defined]
    rig.engine.intents.import_tree("intents: [{code: a, name: Alpha, kind: KB, knowledge_bases: [default]}]")  # type: ignore[attr-defined]
    rig.llm.enqueue(rig.llm.hang(5.0), "90 minutes [1].")  # type: ignore[attr-defined]
    events = ask(rig, "How long does the Alpha battery last?")
    routing = only(events, RoutingEvent)[0]
    assert routing.action == "fallback" and "within 0.5 s" in routing.reason
    assert only(events, AnswerEvent)[0].text == "90 minutes [1]."


def test_a_memory_that_names_one_of_the_choices_answers_instead_of_asking_back(
    make_engine: Callable[..., object], tmp_path: Path
) -> None:
    # A busy machine must not time the vector search out: routing would then search everything instead.
    rig = make_engine(workflow={"rewrite": True, "route": True}, retrieval={"channel_timeout_s": 60.0})
    for name, text, kb in (("alpha_manual.md", ALPHA, "alpha"), ("beta_manual.md", BETA, "beta")):
        path = tmp_path / name
        path.write_text(text, "utf-8")
        assert rig.engine.library.ingest([(path, name)], kb=kb)[0].status == "added"  # type: ignore[attr-defined]
    rig.engine.intents.import_tree(TREE)  # type: ignore[attr-defined]
    rig.engine.memories.add("user:ann", "I use the Beta robot")  # type: ignore[attr-defined]
    rig.llm.enqueue(matches(("alpha.specs", 0.9)), "The Beta battery lasts 150 minutes [1].")  # type: ignore[attr-defined]
    events = ask(rig, "How long does the battery last?", owner="user:ann", mode="workflow")
    assert not only(events, ClarifyEvent)
    routing = only(events, RoutingEvent)[0]
    assert routing.action == "route" and routing.intents[0].code == "beta.specs"
    assert "I use the Beta robot" in routing.reason  # the step says the memory chose
    assert sources(events) == {"beta_manual.md"}
    # Someone without that memory is asked which one, as before.
    rig.llm.enqueue(matches(("alpha.specs", 0.9)))  # type: ignore[attr-defined]
    assert only(ask(rig, "How long does the battery last?", owner="user:bob", mode="workflow"), ClarifyEvent)
