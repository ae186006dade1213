"""Procedural memory's rules over hand-built tallies: Auto leaves its rule only with enough evidence and a clear
margin, and says why in the question's language; the agent's tools that worked come first."""

from __future__ import annotations

from ragapp.agent.auto import KINDS, choose_mode, question_kind, rule_mode
from ragapp.agent.procedural import Experience, kept_share, learned_mode, tool_order
from ragapp.core.events import Tally

SINGLE = "How long does the Alpha battery last?"


def single(*modes: Tally, tools: tuple[Tally, ...] = ()) -> Experience:
    return Experience("single", modes, tools)


def test_the_kinds_are_the_rules_own() -> None:
    assert question_kind(SINGLE) == "single" and choose_mode(SINGLE)[0] == rule_mode("single") == "workflow"
    assert question_kind("Which lasts longer, the Alpha or the Beta?") == "comparison"
    assert question_kind("哪个型号的电池更耐用？") == "comparison"
    for kind in KINDS:
        assert rule_mode(kind) == ("workflow" if kind == "single" else "agent")


def test_the_other_mode_is_taken_above_the_threshold_and_the_reason_gives_the_counts() -> None:
    experience = single(Tally("agent", 7, 9), Tally("workflow", 2, 8))
    assert learned_mode(SINGLE, "workflow", experience, min_answers=5, margin=0.2) == (
        "agent",
        "questions like this were answered better by the agent: 7 of 9 kept (the workflow: 2 of 8 kept)",
    )
    mode, why = learned_mode("电池能用多久？", "workflow", experience, 5, 0.2) or ("", "")
    assert mode == "agent" and why == "这类问题用智能体回答得更好：9 个回答中保留 7 个（工作流：8 个回答中保留 2 个）"


def test_too_little_evidence_or_too_small_a_margin_leaves_the_rule() -> None:
    assert learned_mode(SINGLE, "workflow", single(Tally("agent", 4, 4)), min_answers=5, margin=0.2) is None
    # 5 of 5 with no workflow answers at all: 6/7 against a coin toss is enough
    assert learned_mode(SINGLE, "workflow", single(Tally("agent", 5, 5)), 5, 0.2) is not None
    close = single(Tally("agent", 6, 9), Tally("workflow", 5, 9))  # 7/11 against 6/11
    assert learned_mode(SINGLE, "workflow", close, 5, 0.2) is None
    assert learned_mode(SINGLE, "workflow", close, 5, 0.05) is not None
    # the rule's own mode doing well is never a reason to leave it
    assert learned_mode(SINGLE, "workflow", single(Tally("workflow", 9, 9), Tally("agent", 0, 9)), 5, 0.2) is None


def test_the_shares_are_smoothed() -> None:
    assert kept_share(None) == 0.5 and kept_share(Tally("agent", 2, 2)) == 0.75


def test_tools_that_worked_come_first_and_the_rest_keep_their_order() -> None:
    names = ["search_knowledge", "list_knowledge_bases", "read_chunk"]
    tools = (Tally("read_chunk", 5, 6), Tally("search_knowledge", 3, 10), Tally("list_knowledge_bases", 2, 2))
    experience = single(Tally("agent", 5, 10), tools=tools)
    # read_chunk worked (6/8 kept); search_knowledge did not (4/12); list_knowledge_bases has too few answers
    assert tool_order(names, experience, min_answers=5) == ["read_chunk", "search_knowledge", "list_knowledge_bases"]
    assert tool_order(names, single(Tally("agent", 5, 10)), min_answers=5) == names


def test_a_tie_never_leaves_the_rule_even_with_no_margin() -> None:
    tie = single(Tally("agent", 3, 6), Tally("workflow", 3, 6))
    assert learned_mode(SINGLE, "workflow", tie, min_answers=1, margin=0.0) is None
