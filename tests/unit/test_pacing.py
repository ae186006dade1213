"""A streamed answer's redraws (ragapp/ui/pacing.py): tokens that come faster than the pace are drawn together, one
that comes before a stall is drawn within the pace anyway, an error comes after what preceded it, and closing the
redraws stops the stream."""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Iterator

import pytest

from ragapp.ui.pacing import paced


def _tokens(count: int, gap_s: float) -> Iterator[str]:
    for i in range(count):
        time.sleep(gap_s)
        yield f"t{i}"


def test_tokens_faster_than_the_pace_are_drawn_together_and_none_is_lost() -> None:
    batches = list(paced(_tokens(40, 0.005), every_s=0.1))
    assert [token for batch in batches for token in batch] == [f"t{i}" for i in range(40)]
    assert len(batches[0]) == 1  # the first at once
    assert len(batches) < 20  # 40 tokens over about 0.2 s, drawn at most every 0.1 s


def test_tokens_slower_than_the_pace_are_drawn_one_by_one() -> None:
    assert list(paced(_tokens(4, 0.06), every_s=0.02)) == [["t0"], ["t1"], ["t2"], ["t3"]]


def test_a_token_before_a_stall_is_drawn_within_the_pace() -> None:
    go_on = threading.Event()

    def stalling() -> Iterator[str]:
        yield "first"
        yield "It takes 3 minutes"
        go_on.wait(10)
        yield " and 40 seconds."

    redraws = paced(stalling(), every_s=0.1)
    began = time.monotonic()
    seen: list[str] = []
    while "It takes 3 minutes" not in seen:
        seen.extend(next(redraws))  # not held until the model goes on
    assert time.monotonic() - began < 2.0 and not go_on.is_set()
    go_on.set()
    assert list(redraws) == [[" and 40 seconds."]]


def test_an_error_comes_after_the_tokens_before_it() -> None:
    def failing() -> Iterator[str]:
        yield "a"
        yield "b"
        raise RuntimeError("the model broke off")

    redraws = paced(failing(), every_s=0.05)
    seen: list[str] = []
    with pytest.raises(RuntimeError, match="broke off"):
        for batch in redraws:
            seen.extend(batch)
    assert seen == ["a", "b"]


def test_closing_the_redraws_closes_the_stream_at_its_next_token() -> None:
    closed = threading.Event()

    def endless() -> Iterator[str]:
        try:
            while True:
                time.sleep(0.01)
                yield "token"
        finally:
            closed.set()

    redraws = paced(endless(), every_s=0.05)
    assert next(redraws)
    redraws.close()  # as Gradio does when the reader leaves
    assert closed.wait(5.0)


def test_the_stream_runs_in_the_callers_context() -> None:
    request = contextvars.ContextVar("request", default="none")
    request.set("the reader's request")

    def reading() -> Iterator[str]:
        yield request.get()

    assert list(paced(reading())) == [["the reader's request"]]
