"""Answer metrics for the mode comparison: the official HotpotQA/SQuAD normalisation, EM and F1, citation
stripping, supporting-document recall, reading one question's events, the summary figures on hand-built
rows, and the model's calls and tokens read from a request's trace."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from ragapp.core.chunks import doc_of_chunk_id
from ragapp.core.events import (
    AgentStepEvent,
    AnswerEvent,
    EngineEvent,
    ModeEvent,
    NoticeEvent,
    RetrievalEvent,
    RewriteEvent,
    StageEvent,
    TokenEvent,
)
from ragapp.core.types import Chunk, RetrievedChunk
from ragbench.eval.answers import (
    AnswerRow,
    Observed,
    Usage,
    both_supports,
    collect,
    contains_answer,
    exact_match,
    f1_score,
    median,
    normalize_answer,
    paired,
    preview_sources,
    score_answer,
    score_row,
    strip_citations,
    summarize,
    summarize_mode,
    supports_found,
)
from ragbench.eval.mode_asking import reply_text, trace_usage

# -- normalisation, EM, F1 ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("The Quiet Lamp", "quiet lamp"),
        ("  An  apple, a day!  ", "apple day"),
        ("3,677 seated", "3677 seated"),
        ("U.S.A.", "usa"),
        ("Theatre of the Absurd", "theatre of absurd"),  # "the" inside a word stays: "theatre"
        ("A", ""),
        ("", ""),
        ("Ed Wood's\tfilms\n", "ed woods films"),
    ],
)
def test_normalize_answer_matches_the_official_script(text: str, normal: str) -> None:
    assert normalize_answer(text) == normal


def test_exact_match_ignores_case_punctuation_and_articles() -> None:
    assert exact_match("the Salt Hares.", "Salt Hares") == 1.0
    assert exact_match("Salt Hares band", "Salt Hares") == 0.0


def test_f1_is_token_overlap() -> None:
    # prediction "born in castlebury" (3 tokens), gold "castlebury" (1): P 1/3, R 1 -> F1 0.5
    assert f1_score("Born in Castlebury.", "Castlebury") == pytest.approx(0.5)
    # gold "3677 seated" vs "3677 seats": one common token of two each -> 0.5
    assert f1_score("3,677 seats", "3,677 seated") == pytest.approx(0.5)
    assert f1_score("Castlebury", "Castlebury") == 1.0
    assert f1_score("nothing alike", "Castlebury") == 0.0
    assert f1_score("", "Castlebury") == 0.0


def test_f1_counts_repeated_tokens_once_per_occurrence() -> None:
    # pred "new new york" vs gold "new york": common = {new: 1, york: 1} = 2; P 2/3, R 1 -> 0.8
    assert f1_score("new new york", "New York") == pytest.approx(0.8)


def test_yes_no_answers_score_only_against_the_same_word() -> None:
    assert f1_score("yes", "yes") == 1.0
    assert f1_score("Yes.", "yes") == 1.0
    assert f1_score("yes they were", "yes") == 0.0  # HotpotQA's rule: a yes/no gold needs exactly yes/no
    assert f1_score("no", "yes") == 0.0
    assert f1_score("yes", "Kansas Song") == 0.0


def test_contains_is_a_whole_word_match_of_the_normalised_gold() -> None:
    assert contains_answer("Yes, both were American [1][2].", "yes") == 1.0
    assert contains_answer("The song is called Kansas Song.", "Kansas Song") == 1.0
    assert contains_answer("Kansas Songbook", "Kansas Song") == 0.0
    assert contains_answer("anything", "") == 0.0


@pytest.mark.parametrize(
    ("text", "stripped"),
    [
        ("Elena Brandt wrote The Quiet Lamp [1][2].", "Elena Brandt wrote The Quiet Lamp."),
        ("Castlebury [1, 2]", "Castlebury"),
        ("It opened in 1842 [3-4] and closed [5].", "It opened in 1842 and closed."),
        ("卡斯尔伯里【1】。", "卡斯尔伯里。"),
        ("No markers, [not a number].", "No markers, [not a number]."),
    ],
)
def test_strip_citations(text: str, stripped: str) -> None:
    assert strip_citations(text) == stripped


def test_score_answer_strips_citations_and_takes_the_best_gold() -> None:
    scores = score_answer("The Salt Hares [2]", ["Kestrel Run", "The Salt Hares", "Salt Hares"])
    assert (scores.em, scores.f1, scores.contains) == (1.0, 1.0, 1.0)
    # Without stripping, "[2]" would become the token "2" and break the exact match.
    assert exact_match("The Salt Hares [2]", "The Salt Hares") == 0.0
    none = score_answer("anything", [])
    assert (none.em, none.f1, none.contains) == (0.0, 0.0, 0.0)


# -- supporting documents -------------------------------------------------------------------------------


def test_supports_found_and_both() -> None:
    assert supports_found({"a", "b"}, ["x", "a", "a"]) == 1
    assert supports_found({"a", "b"}, ["b", "a"]) == 2
    assert both_supports({"a", "b"}, ["b", "c", "a"])
    assert not both_supports({"a", "b"}, ["a", "c"])
    assert not both_supports(set(), ["a"])  # nothing to find is not a success


def test_preview_sources_rejoins_names_that_hold_commas() -> None:
    known = {"Washington, D.C..txt", "Paris.txt", "Paris, Texas.txt", "Texas.txt"}
    preview = "3 passage(s): Paris, Texas.txt, Washington, D.C..txt, Paris.txt"
    assert preview_sources(preview, known) == ["Paris, Texas.txt", "Washington, D.C..txt", "Paris.txt"]
    assert preview_sources("2 chunk(s) of Texas.txt", known) == ["Texas.txt"]
    assert preview_sources("nothing relevant found", known) == []


def test_doc_of_chunk_id() -> None:
    assert doc_of_chunk_id("hp-9ef7d3566a7e-0001") == "hp-9ef7d3566a7e"
    assert doc_of_chunk_id("d01-0000") == "d01"
    assert doc_of_chunk_id("d01-12345") == "d01"  # past 9,999 chunks the ordinal has five digits
    assert doc_of_chunk_id("plain") == "plain"


# -- one question's events ------------------------------------------------------------------------------


def _found(doc_id: str, ordinal: int = 0, source: str = "") -> RetrievedChunk:
    chunk = Chunk(f"{doc_id}-{ordinal:04d}", doc_id, ordinal, "text", source or f"{doc_id}.txt")
    return RetrievedChunk(chunk, 0.5, {}, {})


SOURCES = {"A.txt": "a", "B, the second.txt": "b", "C.txt": "c"}


def test_collect_reads_a_workflow_answer() -> None:
    events: list[EngineEvent] = [
        StageEvent("retrieve", "started"),
        RewriteEvent("q", "q standalone", ("part one", "part two")),
        RetrievalEvent((_found("a"), _found("c"), _found("a", 1))),
        TokenEvent("Paris "),
        AnswerEvent("Paris [1].", (), grounded=True),
    ]
    seen = collect(events, "workflow", SOURCES, doc_of_chunk_id)
    assert seen.answer == "Paris [1]." and seen.grounded
    assert seen.prompt_docs == ["a", "c"]  # each document once, in prompt order
    assert seen.found_docs == [] and seen.steps == 0 and not seen.fallback
    assert seen.queries == ["part one", "part two"]
    assert seen.mode == "workflow"


def test_collect_reads_the_agent_steps_and_every_passage_found() -> None:
    events: list[EngineEvent] = [
        StageEvent("agent", "started"),
        AgentStepEvent(1, "started", "search_knowledge", {"query": "first"}, "look"),
        AgentStepEvent(1, "finished", "search_knowledge", {"query": "first"}, "look", "2 passage(s): A.txt, C.txt"),
        AgentStepEvent(2, "failed", "?", error="the reply was not a tool call or an answer"),
        AgentStepEvent(3, "started", "read_chunk", {"chunk_id": "b-0002"}),
        AgentStepEvent(3, "finished", "read_chunk", {"chunk_id": "b-0002"}, "", "3 chunk(s) of B, the second.txt"),
        AgentStepEvent(4, "started", "search_knowledge", {"query": "first"}),
        AgentStepEvent(4, "failed", "search_knowledge", {"query": "first"}, error="already called"),
        StageEvent("agent", "finished"),
        RetrievalEvent((_found("c"),)),  # the answer prompt kept only one of them
        AnswerEvent("It is C [1].", (), grounded=True),
    ]
    seen = collect(events, "agent", SOURCES, doc_of_chunk_id)
    assert seen.steps == 4 and seen.failed_steps == 2
    assert seen.found_docs == ["a", "c", "b"]
    assert seen.prompt_docs == ["c"]
    assert seen.queries == ["first", "first"]  # the repeat is visible
    assert [c["tool"] for c in seen.tool_calls] == ["search_knowledge", "?", "read_chunk", "search_knowledge"]
    assert [c["status"] for c in seen.tool_calls] == ["finished", "failed", "finished", "failed"]
    assert not seen.fallback and seen.mode == "agent"


def test_collect_sees_a_fallback_to_the_workflow_and_auto_s_choice() -> None:
    events: list[EngineEvent] = [
        ModeEvent("agent", "Auto chose agent: the question compares things"),
        AgentStepEvent(1, "failed", "?", error="not a step"),
        AgentStepEvent(2, "failed", "?", error="not a step"),
        NoticeEvent("The agent could not work on this question (x); answering with the workflow instead.", "warning"),
        RetrievalEvent((_found("a"),)),
        StageEvent("generate", "failed", error="the model ran past its budget"),
        AnswerEvent("passages only", (), grounded=True),
    ]
    seen = collect(events, "auto", SOURCES, doc_of_chunk_id)
    assert seen.fallback and seen.mode == "workflow"
    assert seen.error == "the model ran past its budget"
    assert seen.notices[0].startswith("The agent could not work")
    other = collect([NoticeEvent("Reranking is off.")], "agent", SOURCES, doc_of_chunk_id)
    assert not other.fallback


# -- rows and the summary -------------------------------------------------------------------------------


def test_score_row_counts_supports_in_the_prompt_and_found() -> None:
    seen = Observed(answer="The Quiet Lamp [2]", grounded=True, mode="agent", prompt_docs=["x", "h02"])
    seen.found_docs = ["h02", "h01"]
    row = score_row("t1", "q?", ["The Quiet Lamp"], {"h01", "h02"}, "agent", seen, Usage(3, 1000, 50), 12.5)
    assert (row.em, row.f1, row.contains) == (1.0, 1.0, 1.0)
    assert row.supports == ("h01", "h02")
    assert (row.supports_in_prompt, row.supports_found, row.both_supports) == (1, 2, True)
    data = row.as_json()
    assert (data["model_calls"], data["prompt_tokens"], data["completion_tokens"]) == (3, 1000, 50)
    assert data["answered_by"] == "agent" and data["seconds"] == 12.5


def _row(
    qid: str,
    mode: str,
    *,
    f1: float,
    em: float = 0.0,
    found: int = 2,
    in_prompt: int | None = None,
    calls: int = 1,
    tokens: tuple[int, int] = (1000, 100),
    seconds: float = 10.0,
    steps: int = 0,
    searches: int = 0,
    fallback: bool = False,
    error: str | None = None,
) -> AnswerRow:
    return AnswerRow(
        query_id=qid,
        question=f"question {qid}",
        gold=("gold",),
        mode=mode,
        answered_by="workflow" if fallback else mode,
        answer="answer",
        em=em,
        f1=f1,
        contains=float(f1 > 0),
        supports=("s1", "s2"),
        prompt_docs=(),
        found_docs=(),
        supports_in_prompt=found if in_prompt is None else in_prompt,
        supports_found=found,
        both_supports=found == 2,
        usage=Usage(calls, *tokens),
        seconds=seconds,
        steps=steps,
        fallback=fallback,
        grounded=True,
        tool_calls=tuple({"tool": "search_knowledge"} for _ in range(searches)),
        error=error,
    )


WORKFLOW = [
    _row("q1", "workflow", f1=1.0, em=1.0, seconds=4.0),
    _row("q2", "workflow", f1=0.5, found=1, seconds=6.0),
    _row("q3", "workflow", f1=0.0, found=0, seconds=20.0, error="timeout"),
]
AGENT = [
    _row("q1", "agent", f1=1.0, em=1.0, calls=3, tokens=(3000, 200), seconds=12.0, steps=2, searches=2),
    _row("q2", "agent", f1=0.8, found=2, in_prompt=1, calls=4, tokens=(4000, 300), seconds=18.0, steps=3, searches=2),
    _row("q3", "agent", f1=0.0, found=0, calls=2, tokens=(1500, 100), seconds=30.0, steps=2, fallback=True),
]


def test_summarize_mode_means_medians_and_counts() -> None:
    s = summarize_mode(WORKFLOW)
    assert s["questions"] == 3
    assert s["both_supports"] == pytest.approx(1 / 3)
    assert s["supports_recall"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert s["em"] == pytest.approx(1 / 3)
    assert s["f1"] == pytest.approx(0.5)
    assert s["contains"] == pytest.approx(2 / 3)
    assert s["model_calls"] == 1.0
    assert s["tokens"] == 1100.0
    assert (s["seconds_p50"], s["seconds_mean"]) == (6.0, 10.0)
    assert s["errors"] == 1 and s["fallbacks"] == 0

    a = summarize_mode(AGENT)
    assert a["both_supports"] == pytest.approx(2 / 3)
    assert a["both_supports_in_prompt"] == pytest.approx(1 / 3)  # q2's second support was found, not kept
    assert a["model_calls"] == 3.0
    assert a["prompt_tokens"] == pytest.approx(8500 / 3) and a["completion_tokens"] == 200.0
    assert a["tokens"] == pytest.approx(9100 / 3)
    assert a["seconds_p50"] == 18.0 and a["seconds_mean"] == 20.0
    assert a["steps"] == pytest.approx(7 / 3) and a["searches"] == pytest.approx(4 / 3)
    assert a["fallbacks"] == 1


def test_summarize_mode_of_nothing() -> None:
    s = summarize_mode([])
    assert s["questions"] == 0
    assert s["f1"] is None and s["seconds_p50"] is None and s["fallbacks"] == 0


def test_median_of_an_even_count_is_the_mean_of_the_middle_two() -> None:
    values: Sequence[float] = [4.0, 1.0, 3.0, 2.0]
    assert median(values) == 2.5
    assert median([]) is None


def test_paired_compares_question_by_question() -> None:
    pair = paired([*WORKFLOW, *AGENT], "workflow", "agent")
    assert pair["questions"] == 3
    assert pair["f1"] == {"better": 1, "worse": 0, "same": 2}  # q2: 0.8 against 0.5
    assert pair["supports"] == {"better": 1, "worse": 0, "same": 2}  # q2: 2 against 1
    only_one = paired([*WORKFLOW, AGENT[0]], "workflow", "agent")
    assert only_one["questions"] == 1  # questions the agent did not answer are left out


def test_summarize_keeps_the_mode_order_and_pairs_with_the_first() -> None:
    summary = summarize([*AGENT, *WORKFLOW], ["workflow", "agent"])
    assert list(summary["modes"]) == ["workflow", "agent"]
    assert [p["modes"] for p in summary["paired"]] == [["workflow", "agent"]]
    assert summarize(WORKFLOW, ["workflow"])["paired"] == []


# -- the model's work, read from a request's trace -----------------------------------------------------


def _call(completion: str, prompt_tokens: int, completion_tokens: int, **extra: Any) -> dict[str, Any]:
    """One entry of a trace's ``llm_calls``, as the recording LLM wrapper writes it."""
    return {"completion": completion, "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, **extra}


def test_trace_usage_counts_calls_tokens_and_keeps_replies_in_order() -> None:
    trace = {"llm_calls": [_call('{"tool": "search_knowledge"}', 120, 9), _call("The Quiet Lamp [1].", 300, 6)]}
    usage, replies = trace_usage(trace)
    assert usage == Usage(2, 420, 15)
    assert replies == ['{"tool": "search_knowledge"}', "The Quiet Lamp [1]."]


def test_trace_usage_keeps_native_function_calls_in_the_reply() -> None:
    call = _call("", 50, 4, tool_calls=[{"name": "search_knowledge", "arguments": {"query": "q"}}])
    usage, replies = trace_usage({"llm_calls": [call]})
    assert usage.calls == 1
    assert replies == ['[{"name": "search_knowledge", "arguments": {"query": "q"}}]']
    assert reply_text(_call("text", 1, 1, tool_calls=[])) == "text"


def test_trace_usage_without_a_trace_is_nothing() -> None:
    assert trace_usage(None) == (Usage(), [])
    assert trace_usage({"llm_calls": []}) == (Usage(), [])
