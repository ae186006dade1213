"""A streamed answer's redraws (ragapp/ui/pacing.py): tokens that come faster than the pace are drawn together, one
that comes before a stall is drawn within the pace anyway, an error comes after what preceded it, and closing the
redraws stops the stream."""

from __future__ import annotations

import contextvars
import itertools
import threading
import time
from collections.abc import Iterator

import pytest

from ragapp.ui.pacing import paced


def test_tokens_faster_than_the_pace_are_drawn_together_and_none_is_lost() -> None:
    def fast() -> Iterator[str]:
        for i in range(40):
            time.sleep(0.005)
            yield f"t{i}"

    batches, drawn = [], []
    for batch in paced(fast(), every_s=0.1):
        batches.append(batch)
        drawn.append(time.monotonic())
    assert [token for batch in batches for token in batch] == [f"t{i}" for i in range(40)]
    assert len(batches) < 40
    # never twice within the pace, but for the last: the end of the stream is drawn at once
    assert all(b - a >= 0.08 for a, b in itertools.pairwise(drawn[:-1]))


def test_a_token_alone_is_drawn_without_waiting_for_the_next() -> None:
    drawn = threading.Event()

    def one_at_a_time() -> Iterator[str]:
        for i in range(4):
            yield f"t{i}"
            assert drawn.wait(10)  # the next comes only once this one was drawn
            drawn.clear()

    batches = []
    for batch in paced(one_at_a_time(), every_s=0.02):
        batches.append(batch)
        drawn.set()
    assert batches == [["t0"], ["t1"], ["t2"], ["t3"]]


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
    assert time.monotonic() - began < 5.0 and not go_on.is_set()
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
