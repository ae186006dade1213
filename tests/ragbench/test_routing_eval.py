"""Routing-evaluation figures on hand-built decisions, the labelled-file reader, and the shape of the demo set."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from ragapp.config import WorkflowSettings
from ragapp.core.errors import LLMError
from ragapp.core.lang import language_of
from ragapp.router.classifier import Classification, LeafScore
from ragapp.router.decide import Action, RoutingDecision
from ragapp.router.tree import IntentNode, IntentTree, parse_tree
from ragbench.routing.calibration import brier, expected_calibration_error, reliability
from ragbench.routing.evaluate import (
    LabelledQuestion,
    RoutingRow,
    RoutingSetError,
    accuracy,
    classify_and_decide,
    confusion,
    error_kind,
    expected_kind,
    label_problems,
    latency,
    load_questions,
    matches,
    misrouted,
    parse_questions,
    percentiles_ms,
    precision_recall,
    run_routing,
    score_row,
    summarize,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO_TREE = REPO_ROOT / "data" / "intents" / "demo.yaml"
DEMO_QUESTIONS = REPO_ROOT / "tests" / "data" / "intents" / "demo_questions.yaml"

TREE = IntentTree(
    [
        IntentNode("a", "Alpha"),
        IntentNode("a.specs", "Specs", parent="a", kind="KB", kbs=("kb",)),
        IntentNode("b", "Beta", position=1),
        IntentNode("b.specs", "Specs", parent="b", kind="KB", kbs=("kb",)),
        IntentNode("hello", "Hello", kind="SYSTEM", position=2),
    ]
)


def _score(code: str, score: float = 1.0) -> LeafScore:
    node = TREE.get(code)
    assert node is not None and node.kind is not None
    return LeafScore(code, TREE.full_path(code), node.kind, node.parent, score)


def _decision(
    question: str,
    action: Action,
    codes: Sequence[str] = (),
    *,
    error: str | None = None,
    reply: str = "",
    ignored: tuple[str, ...] = (),
) -> RoutingDecision:
    scores = tuple(_score(c) for c in codes)
    classification = Classification(question, () if error else scores, (), ignored, error, reply)
    return RoutingDecision(question, action, scores, f"{action} because", classification)


def _q(question: str, expect: str | Sequence[str], lang: str = "en") -> LabelledQuestion:
    return parse_questions([{"question": question, "expect": expect, "lang": lang}])[0]


def _row(item: LabelledQuestion, action: Action, codes: Sequence[str] = (), seconds: float = 1.0) -> RoutingRow:
    return score_row(item, _decision(item.question, action, codes), seconds, TREE)


# -- matching one decision against its label ---------------------------------------------------------


def test_leaf_label_needs_route_or_system_and_the_first_code() -> None:
    item = _q("a specs?", "a.specs")
    assert matches(item, "route", ["a.specs"]) == (True, True)
    assert matches(item, "route", ["b.specs", "a.specs"]) == (False, True)  # only "any kept code" forgives it
    assert matches(item, "route", ["b.specs"]) == (False, False)
    # Asking back with the right leaf among the choices is still not routing there.
    assert matches(item, "clarify", ["a.specs", "b.specs"]) == (False, False)
    assert matches(item, "fallback", []) == (False, False)
    assert matches(_q("hi", "hello"), "system", ["hello"]) == (True, True)


def test_list_label_accepts_any_of_its_codes() -> None:
    item = _q("a or b?", ["a.specs", "b.specs"])
    assert item.outcome == "leaf" and item.label == "a.specs | b.specs"
    assert matches(item, "route", ["b.specs", "a.specs"]) == (True, True)
    assert matches(item, "route", ["hello"]) == (False, False)


def test_clarify_and_fallback_labels_look_at_the_action_only() -> None:
    assert matches(_q("battery?", "clarify"), "clarify", ["a.specs", "b.specs"]) == (True, True)
    assert matches(_q("battery?", "clarify"), "route", ["a.specs"]) == (False, False)
    assert matches(_q("weather?", "fallback"), "fallback", []) == (True, True)
    assert matches(_q("weather?", "fallback"), "clarify", ["a.specs"]) == (False, False)


def test_expected_kind_from_the_tree() -> None:
    assert expected_kind(_q("x", "a.specs"), TREE) == "route"
    assert expected_kind(_q("x", "hello"), TREE) == "system"
    assert expected_kind(_q("x", ["hello", "a.specs"]), TREE) == "route"
    assert expected_kind(_q("x", "clarify"), TREE) == "clarify"
    assert expected_kind(_q("x", "fallback"), TREE) == "fallback"


def test_error_kinds() -> None:
    assert error_kind(Classification("q", ())) is None
    assert error_kind(None) is None
    assert error_kind(Classification("q", (), error="Cannot reach the model server")) == "llm"
    unreadable = Classification("q", (), error="the model's reply held no readable scores", reply="sorry")
    assert error_kind(unreadable) == "unparseable"
    blank = Classification("q", (), error="the model's reply held no readable scores", reply="")
    assert error_kind(blank) == "unparseable"


# -- figures over many rows ------------------------------------------------------------------------


def _rows() -> list[RoutingRow]:
    return [
        _row(_q("a specs?", "a.specs"), "route", ["a.specs"], 9.0),  # right (the first call: slow)
        _row(_q("b specs?", "b.specs", "zh"), "route", ["a.specs", "b.specs"], 1.0),  # right only with any code
        _row(_q("hi", "hello", "zh"), "system", ["hello"], 2.0),  # right
        _row(_q("battery?", "clarify"), "clarify", ["a.specs", "b.specs"], 3.0),  # right
        _row(_q("weather?", "fallback", "zh"), "clarify", ["a.specs", "b.specs"], 4.0),  # asked back, wrongly
        _row(_q("capital?", "fallback"), "fallback", [], 5.0),  # right
        _row(_q("charging?", "clarify", "zh"), "route", ["a.specs"], 6.0),  # should have asked
    ]


def test_accuracy_strict_and_any_code() -> None:
    rows = _rows()
    assert accuracy(rows) == pytest.approx(4 / 7)
    assert accuracy(rows, any_code=True) == pytest.approx(5 / 7)
    assert accuracy([]) is None
    assert [r.question for r in misrouted(rows)] == ["b specs?", "weather?", "charging?"]


def test_clarify_and_fallback_precision_recall() -> None:
    rows = _rows()
    clarify = precision_recall(rows, "clarify")
    assert (clarify.taken, clarify.labelled, clarify.hits) == (2, 2, 1)
    assert clarify.precision == pytest.approx(0.5) and clarify.recall == pytest.approx(0.5)
    fallback = precision_recall(rows, "fallback")
    assert (fallback.taken, fallback.labelled, fallback.hits) == (1, 2, 1)
    assert fallback.precision == pytest.approx(1.0) and fallback.recall == pytest.approx(0.5)
    never = precision_recall(rows[:3], "fallback")
    assert never.precision is None and never.recall is None


def test_latency_sets_the_first_call_apart() -> None:
    lat = latency(_rows())
    assert lat["first_ms"] == 9000.0
    assert lat["n"] == 6
    assert lat["p50"] == 3000.0  # the rest, 1..6 s: nearest rank round(0.5 * 5) = 2 -> 3 s
    assert lat["p95"] == 6000.0
    assert lat["mean"] == 3500.0
    assert percentiles_ms([]) == {"p50": None, "p95": None, "mean": None}
    assert latency([])["first_ms"] is None


def test_summary_groups_confusion_errors_and_ignored() -> None:
    rows = _rows()
    failed = _q("a again?", "a.specs")
    rows.append(score_row(failed, _decision(failed.question, "fallback", error="Cannot reach"), 1.0, TREE))
    odd = _q("b again?", "b.specs", "zh")
    rows.append(score_row(odd, _decision(odd.question, "route", ["b.specs"], ignored=("made.up", "other")), 1.0, TREE))
    summary = summarize(rows)
    assert summary["questions"] == 9
    assert summary["accuracy"] == pytest.approx(5 / 9)
    assert summary["by_kind"]["route"] == {"n": 4, "accuracy": 0.5, "accuracy_any": 0.75}
    assert summary["by_kind"]["system"]["n"] == 1
    assert summary["by_lang"]["zh"]["n"] == 5 and summary["by_lang"]["en"]["n"] == 4
    assert summary["by_lang"]["zh"]["accuracy"] == pytest.approx(2 / 5)
    assert summary["errors"] == {"total": 1, "llm": 1, "unparseable": 0}
    assert summary["ignored"] == {"ids": 2, "questions": 1}
    assert summary["confusion"]["fallback"] == {"route": 0, "clarify": 1, "system": 0, "fallback": 1}
    assert summary["confusion"]["route"]["fallback"] == 1
    assert sum(sum(c.values()) for c in confusion(rows).values()) == 9


# -- the runner, with a classifier that answers from a table -------------------------------------------


class _TableClassifier:
    def __init__(self, answers: dict[str, Classification]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    def classify(self, question: str, tree: IntentTree) -> Classification:
        self.asked.append(question)
        return self.answers[question]


def test_run_routing_applies_the_decision_rules() -> None:
    questions = [_q("alpha specs?", "a.specs"), _q("specs?", "clarify"), _q("weather?", "fallback")]
    classifier = _TableClassifier(
        {
            "alpha specs?": Classification("alpha specs?", (_score("a.specs", 0.9),)),
            "specs?": Classification("specs?", (_score("a.specs", 0.9),)),  # twin under b, no product named
            "weather?": Classification("weather?", (_score("hello", 0.2),)),  # below min_intent_score
        }
    )
    ticks = iter(range(100))
    seen: list[int] = []
    route = classify_and_decide(classifier, TREE, WorkflowSettings())
    rows = run_routing(questions, TREE, route, lambda i, _row: seen.append(i), clock=lambda: next(ticks))
    assert [r.action for r in rows] == ["route", "clarify", "fallback"]
    assert all(r.correct for r in rows)
    assert [r.seconds for r in rows] == [1, 1, 1]
    assert seen == [0, 1, 2]
    assert rows[0].scores == (("a.specs", 0.9),)


def test_run_routing_stops_when_the_first_call_fails() -> None:
    questions = [_q("a specs?", "a.specs"), _q("b specs?", "b.specs")]
    classifier = _TableClassifier({"a specs?": Classification("a specs?", (), error="Cannot reach the server")})
    with pytest.raises(LLMError, match="Cannot reach the server"):
        run_routing(questions, TREE, classify_and_decide(classifier, TREE, WorkflowSettings()))
    assert classifier.asked == ["a specs?"]


# -- reading labelled files -----------------------------------------------------------------------------


def test_parse_questions_lists_every_problem() -> None:
    with pytest.raises(RoutingSetError) as caught:
        parse_questions(
            {
                "questions": [
                    {"question": "ok", "expect": "a.specs", "lang": "en"},
                    {"question": "", "expect": "a.specs", "lang": "en"},
                    {"question": "no lang", "expect": "a.specs"},
                    {"question": "bad expect", "expect": [], "lang": "en"},
                    {"question": "mixed", "expect": ["clarify", "a.specs"], "lang": "zh"},
                    {"question": "typo", "expect": "a.specs", "lang": "en", "nots": "x"},
                ]
            }
        )
    problems = caught.value.problems
    assert len(problems) == 5
    assert any("'lang'" in p for p in problems) and any("unknown field" in p for p in problems)
    with pytest.raises(RoutingSetError):
        parse_questions({"questions": []})


def test_label_problems_names_unknown_codes_and_groups() -> None:
    items = [_q("x", "a.specs"), _q("y", ["a.spec", "b"]), _q("z", "clarify")]
    problems = label_problems(items, TREE)
    assert len(problems) == 2
    assert "'a.spec'" in problems[0] and "not in the intent tree" in problems[0]
    assert "'b'" in problems[1] and "group" in problems[1]


# -- the demo set itself -----------------------------------------------------------------------------------


def test_demo_questions_fit_the_demo_tree() -> None:
    tree = parse_tree(DEMO_TREE.read_text("utf-8")).validated()
    questions = load_questions(DEMO_QUESTIONS)
    assert len(questions) >= 40
    assert label_problems(questions, tree) == []
    assert len({q.question for q in questions}) == len(questions), "a question is listed twice"
    for q in questions:
        assert q.lang == language_of(q.question), f"{q.question!r} is labelled {q.lang}"
    langs = [q.lang for q in questions]
    assert min(langs.count("zh"), langs.count("en")) >= len(questions) // 3
    kinds = [expected_kind(q, tree) for q in questions]
    assert kinds.count("clarify") >= 5 and kinds.count("fallback") >= 5 and kinds.count("system") >= 3
    # Every leaf of the tree is the expected answer of at least one question.
    expected = {code for q in questions for code in q.expect}
    assert {leaf.code for leaf in tree.leaves()} <= expected
    # No question copies an example of the tree word for word.
    examples = {e for node in tree.nodes() for e in node.examples}
    assert not examples & {q.question for q in questions}


# -- calibration of the score given to the leaf ranked first -----------------------------------------------


def test_rows_keep_the_leaf_ranked_first_and_whether_it_is_right() -> None:
    routed = _row(_q("alpha specs?", "a.specs"), "route", ["a.specs"])
    assert (routed.top, routed.top_score, routed.top_right) == ("a.specs", 1.0, True)
    wrong = _row(_q("weather?", "fallback"), "route", ["a.specs"])  # a fallback question is never right on a leaf
    assert (wrong.top, wrong.top_right) == ("a.specs", False)
    ambiguous = _row(_q("specs?", "clarify"), "clarify", ["a.specs", "b.specs"])
    assert ambiguous.top == "a.specs" and ambiguous.top_right is None  # no single leaf is right: left out
    nothing = _row(_q("capital?", "fallback"), "fallback", [])
    assert nothing.top is None and nothing.top_score is None and nothing.top_right is None
    # A fallback below the minimum score still names the classifier's best leaf, with its score.
    item = _q("beta?", "b.specs")
    low = Classification(item.question, (_score("b.specs", 0.4),))
    below = score_row(item, RoutingDecision(item.question, "fallback", (), "below", low), 1.0, TREE)
    assert (below.top, below.top_score, below.top_right) == ("b.specs", 0.4, True)


def test_calibration_figures_by_hand() -> None:
    pairs = [(1.0, True), (1.0, False), (0.7, True), (0.1, False)]
    # Brier: (0 + 1 + 0.09 + 0.01) / 4; ECE: bin 0.8-1.0 |1.0 - 0.5| * 2/4, bin 0.6-0.8 |0.7 - 1| * 1/4,
    # bin 0.0-0.2 |0.1 - 0| * 1/4.
    assert brier(pairs) == pytest.approx(1.1 / 4)
    assert expected_calibration_error(pairs) == pytest.approx(0.25 + 0.075 + 0.025)
    table = reliability(pairs)
    assert [b.n for b in table] == [1, 0, 0, 1, 2]
    assert table[4].mean_score == pytest.approx(1.0) and table[4].share_right == pytest.approx(0.5)
    assert brier([]) is None and expected_calibration_error([]) is None


def test_calibration_is_reported_per_half_by_position() -> None:
    items = [_q("a?", "a.specs"), _q("b?", "fallback"), _q("c?", "a.specs"), _q("d?", "clarify")]
    rows = [
        _row(items[0], "route", ["a.specs"]),  # dev, right
        _row(items[1], "route", ["b.specs"]),  # test, wrong
        _row(items[2], "route", ["b.specs"]),  # dev, wrong
        _row(items[3], "clarify", ["a.specs", "b.specs"]),  # test, left out
    ]
    figures = summarize(rows)["calibration"]
    assert figures["left_out"] == 1
    assert (figures["dev"]["n"], figures["dev"]["right"]) == (2, 1)
    assert (figures["test"]["n"], figures["test"]["right"]) == (1, 0)
    assert figures["test"]["brier"] == pytest.approx(1.0) and figures["all"]["n"] == 3


def test_the_fit_reads_dev_rows_and_chooses_the_threshold_on_them() -> None:
    from ragbench.routing.fit import choose_fit_min, feature_row, fit_weights, labelled_rows, probability, widening

    def row(similarity: float, model: float | None, right: bool | None) -> dict[str, object]:
        return {"top_right": right, "features": {"similarity": similarity, "margin": 0.0, "model": model}}

    assert feature_row({"similarity": 0.9, "margin": 0.02, "model": None}) == [0.9, 0.02, 0.0, 1.0]
    rows = [row(0.95, 1.0, True), row(0.80, 0.7, False), row(0.93, None, True), row(0.79, 0.7, None)]
    rows += [row(0.94, 0.7, True), row(0.94, 0.7, True), row(0.81, 1.0, False), row(0.81, 1.0, False)] * 2
    halves = labelled_rows(rows)
    assert len(halves["dev"]) == 6 and len(halves["test"]) == 5  # the unlabelled row (clarify) is left out
    weights = fit_weights(halves["dev"])
    assert set(weights) == {"intercept", "similarity", "margin", "model", "no_model"}
    right, wrong = probability(weights, [0.95, 0.0, 1.0, 0.0]), probability(weights, [0.80, 0.0, 0.7, 0.0])
    assert wrong < 0.5 < right  # similarity separates them, whatever the model said
    pairs = [(0.1, False), (0.3, False), (0.45, False), (0.9, True), (0.2, True)]
    assert choose_fit_min(pairs, 2 / 3) == 0.35 and choose_fit_min(pairs, 1.0) == 0.5
    assert widening(pairs, 0.35) == {"wrong_below": 2, "wrong": 3, "right_below": 1, "right": 2}
