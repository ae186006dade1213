"""``make bench-answer``'s first token ÷ floor: the floor is the answer call's prompt tokens read ÷ the
standalone prefill speed."""

from __future__ import annotations

import pytest

from ragbench.bench.answer import CallFigures, Timing, floor_ratios, render, summarize


def row(qid: str, ttft: float | None, read: int | None) -> Timing:
    timing = Timing("demo", qid, "q", {"ttft": ttft})
    timing.calls = [CallFigures("route", prompt_tokens_read=900), CallFigures("generate", prompt_tokens_read=read)]
    return timing


def test_each_first_token_is_divided_by_its_own_floor() -> None:
    rows = [row("a", 5.0, 400), row("b", 12.0, 400), row("c", None, 400), row("d", 3.0, None)]
    ratios = floor_ratios(rows, tokens_per_s=80.0)  # 400 tokens at 80 tokens/s: a floor of 5 s
    assert ratios["n"] == 2  # no first token, or no count of tokens read: left out
    assert ratios["p50"] == pytest.approx((1.0 + 2.4) / 2)


def test_the_ratio_is_printed_under_its_set() -> None:
    summary = summarize([row("a", 5.0, 400)])
    assert "first token ÷ floor" not in render("demo", summary)
    summary["first_token_to_floor"] = floor_ratios([row("a", 5.5, 400)], 80.0)
    assert "first token ÷ floor (tokens read ÷ standalone prefill): p50 1.10" in render("demo", summary)


def test_the_early_search_does_not_take_routings_model_call() -> None:
    from types import SimpleNamespace

    from ragapp.core.events import StageEvent
    from ragbench.bench.answer import time_events

    llm = SimpleNamespace(calls=[], stage="")
    time_events([StageEvent("route", "started"), StageEvent("early search", "started")], llm, "demo", "a", "q")  # type: ignore[arg-type]
    assert llm.stage == "route"  # the classifier's call, made beside the early search, stays routing's
