"""Token estimates and the budget split."""

from __future__ import annotations

from ragapp.config import Settings
from ragapp.core.tokens import estimate_tokens
from ragapp.core.types import ChatTurn, Chunk, RetrievedChunk
from ragapp.qa.budget import fit_passages, fit_turns, plan_budget


def passage(n: int, text: str) -> RetrievedChunk:
    return RetrievedChunk(Chunk(f"c{n}", "d", n, text, "doc.md"), 1.0, {}, {})


def test_estimates_count_chinese_per_character_and_english_per_few_characters() -> None:
    assert estimate_tokens("你好世界") == 4
    assert 20 <= estimate_tokens("The quick brown fox jumps over the lazy dog. " * 2) <= 30


def test_budget_reserves_the_answer_and_splits_the_rest() -> None:
    settings = Settings(llm={"n_ctx": 4096, "max_tokens": 512}, workflow={"history_share": 0.25})
    budget = plan_budget(settings, "system prompt " * 20)
    assert budget.window == 4096 and budget.answer == 512
    assert budget.answer + budget.instructions + budget.history + budget.context == 4096
    assert abs(budget.history - (budget.history + budget.context) * 0.25) <= 1
    assert plan_budget(Settings(workflow={"context_window": 32768}), "x").window == 32768


def test_passages_are_kept_in_order_while_they_fit_and_the_best_always() -> None:
    chunks = [passage(n, "word " * 100) for n in range(5)]
    kept = fit_passages(chunks, 400)
    assert [c.chunk.chunk_id for c in kept] == ["c0", "c1"]
    assert [c.chunk.chunk_id for c in fit_passages(chunks, 1)] == ["c0"]


def test_turns_keep_the_most_recent_and_never_an_answer_without_its_question() -> None:
    turns = [
        ChatTurn("user", "q1 " * 50),
        ChatTurn("assistant", "a1"),
        ChatTurn("user", "q2"),
        ChatTurn("assistant", "a2"),
    ]
    assert [t.content for t in fit_turns(turns, 30)] == ["q2", "a2"]
    assert fit_turns(turns, 8) == []  # "a2" alone fits, but not without "q2"
    assert fit_turns(turns, 10_000) == turns
