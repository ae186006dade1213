"""Token estimates, the budget table's split and its settings."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ragapp.config import Settings
from ragapp.core.tokens import estimate_tokens
from ragapp.core.types import ChatTurn, Chunk, RetrievedChunk
from ragapp.qa.budget import (
    fit_lines,
    fit_passages,
    fit_turns,
    fold_plan,
    history_allowance,
    plan_budget,
    summary_chars,
)


def passage(n: int, text: str) -> RetrievedChunk:
    return RetrievedChunk(Chunk(f"c{n}", "d", n, text, "doc.md"), 1.0, {}, {})


def test_estimates_count_chinese_per_character_and_english_per_few_characters() -> None:
    assert estimate_tokens("你好世界") == 4
    assert 20 <= estimate_tokens("The quick brown fox jumps over the lazy dog. " * 2) <= 30


def test_each_part_gets_its_share_of_the_window_less_the_answer_and_unused_shares_go_to_the_passages() -> None:
    settings = Settings(
        llm={"n_ctx": 4096, "max_tokens": 496},
        budget={"instructions": 0.2, "history": 0.3, "memories": 0.0, "passages": 0.4, "tools": 0.1},
    )
    budget = plan_budget(settings, "system prompt " * 20)  # 3600 tokens to share
    assert budget.window == 4096 and budget.answer == 496
    assert budget.history == 1080 and budget.memories == 0 and budget.tools == 0  # no memories, no tools
    # instructions take what they need; theirs and the tools' unused shares go to the passages
    assert budget.answer + budget.instructions + budget.history + budget.passages == 4096
    assert budget.passages > int(3600 * 0.4) + int(3600 * 0.1)
    assert budget.passages_after(100) == budget.passages + 980  # what the conversation leaves, too
    assert plan_budget(Settings(workflow={"context_window": 32768}), "x").window == 32768


def test_memories_and_tools_take_what_they_need_up_to_their_share() -> None:
    settings = Settings(llm={"n_ctx": 2048, "max_tokens": 48})  # 2000 tokens to share
    share = settings.budget
    small = plan_budget(settings, "rules", memories="I use the V2 Pro.", tools="- search(query): finds passages")
    assert 0 < small.memories < 2000 * share.memories and 0 < small.tools < 2000 * share.tools
    large = plan_budget(settings, "rules", memories="I use the V2 Pro. " * 200, tools="- tool(x): does it. " * 200)
    assert large.memories == int(2000 * share.memories) and large.tools == int(2000 * share.tools)
    assert large.passages < small.passages


def test_shares_under_one_leave_the_rest_free() -> None:
    settings = Settings(llm={"n_ctx": 2048, "max_tokens": 48}, budget={"passages": 0.2})
    budget = plan_budget(settings, "rules")
    assert budget.spare == 2000 - sum(int(2000 * s) for s in settings.budget.shares().values())
    assert budget.instructions + budget.history + budget.passages + budget.spare == 2000


def test_a_small_window_asks_for_a_shorter_summary() -> None:
    assert summary_chars(Settings()) == Settings().workflow.summary_chars
    small = Settings(llm={"n_ctx": 1024, "max_tokens": 512})
    assert history_allowance(small) == int(512 * small.budget.history)
    assert summary_chars(small) == history_allowance(small) // 2 < Settings().workflow.summary_chars


def test_shares_must_add_up_to_at_most_one_and_none_below_zero() -> None:
    with pytest.raises(ValidationError, match=r"add up to 1\.2 .*lower one of them"):
        Settings(budget={"passages": 0.6})
    with pytest.raises(ValidationError, match="greater than or equal to 0"):
        Settings(budget={"tools": -0.1})
    assert Settings(budget={"instructions": 0, "history": 0, "memories": 0, "tools": 0, "passages": 1}).budget


def test_the_budget_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGAPP_BUDGET__HISTORY", "0.15")
    assert Settings().budget.history == 0.15
    monkeypatch.setenv("RAGAPP_BUDGET__HISTORY", "0.9")
    with pytest.raises(ValidationError, match="add up to"):
        Settings()


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


def test_lines_are_kept_best_first_while_they_fit() -> None:
    lines = ["I use the V2 Pro.", "Answer in Chinese. " * 20, "Our cluster runs Debian 12."]
    assert fit_lines(lines, 10) == ["I use the V2 Pro."]
    assert fit_lines(lines, 10_000) == lines


def test_history_over_its_share_is_folded_beyond_the_recent_window() -> None:
    settings = Settings(llm={"n_ctx": 1024, "max_tokens": 512}, workflow={"recent_turns": 3})  # history: 128
    short = [ChatTurn("user", "Hi"), ChatTurn("assistant", "Hello")]
    assert fold_plan(settings, "", short) == (0, settings.workflow.summary_chars)  # within its share: as before
    long = [
        ChatTurn("user" if n % 2 == 0 else "assistant", "A longer message about the kettle. " * 3) for n in range(6)
    ]
    count, chars = fold_plan(settings, "", long)
    assert count == 4 and chars == summary_chars(settings)  # only the latest turn stays verbatim
    assert fold_plan(Settings(), "", long) == (0, Settings().workflow.summary_chars)  # the default window holds it
    chinese = [ChatTurn("user", "水壶的滤网多久清洗一次？" * 4), ChatTurn("assistant", "每 14 天。" * 8)] * 2
    assert fold_plan(settings, "", chinese)[0] >= 2  # a Chinese summary costs a token a character
