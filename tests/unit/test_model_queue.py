"""The model's queue: calls are served in arrival order, each waiting call hears its place in line, and the time
spent in line does not count against the model's budget."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from ragapp.models.llm import Waiting, stream_with_waits
from ragapp.models.model_queue import ModelQueue, Outcome, listen, run_observed


def _wait_for(condition: object, what: str) -> None:
    deadline = time.monotonic() + 10
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.005)


def test_waiting_calls_are_served_in_arrival_order_and_told_their_place() -> None:
    line = ModelQueue()
    assert line.acquire(1.0)  # the call being served
    served: list[str] = []
    heard: dict[str, list[int]] = {"b": [], "c": []}

    def call(name: str) -> None:
        with listen(heard[name].append):
            assert line.acquire(10.0)
        served.append(name)
        time.sleep(0.2)  # long enough for the one behind to hear that it moved up
        line.release()

    b = threading.Thread(target=call, args=("b",))
    b.start()
    _wait_for(lambda: line.waiting() == 1, "b queues")
    c = threading.Thread(target=call, args=("c",))
    c.start()
    _wait_for(lambda: line.waiting() == 2, "c queues")
    line.release()
    b.join(10)
    c.join(10)
    assert served == ["b", "c"]
    assert heard["b"] == [1, 0]  # behind the first call, then its turn
    assert heard["c"] == [2, 1, 0]  # moved up as b was served
    assert line.waiting() == 0


def test_a_call_that_times_out_leaves_the_line_and_the_next_moves_up() -> None:
    line = ModelQueue()
    assert line.acquire(1.0)
    assert not line.acquire(0.05)  # gave up
    assert line.waiting() == 0
    line.release()
    assert line.acquire(0.05)  # nobody stale is left in front


def test_a_call_that_is_served_at_once_hears_nothing() -> None:
    heard: list[int] = []
    line = ModelQueue()
    with listen(heard.append):
        assert line.acquire(1.0)
    assert heard == []


def test_stream_with_waits_reports_the_queue_and_does_not_count_it_against_the_budget() -> None:
    line = ModelQueue()
    assert line.acquire(1.0)  # another answer holds the model

    def backend() -> Iterator[str]:
        assert line.acquire(10.0)
        try:
            yield "hello"
        finally:
            line.release()

    threading.Timer(0.6, line.release).start()  # the other answer ends after longer than the budget
    items = list(stream_with_waits(backend, 0.4))
    waits = [i for i in items if isinstance(i, Waiting)]
    assert [w.ahead for w in waits] == [1, 0]
    assert waits[1].seconds >= 0.5
    assert items[-1] == "hello"


def test_ticks_come_while_the_model_reads_and_stop_at_the_first_piece() -> None:
    def slow_start() -> Iterator[str]:
        time.sleep(0.35)
        yield "a"
        time.sleep(0.35)
        yield "b"

    items = list(stream_with_waits(slow_start, 5.0, tick_s=0.1))
    first = items.index("a")
    assert first >= 2 and all(isinstance(i, Waiting) and i.ahead == 0 for i in items[:first])
    assert items[first:] == ["a", "b"]  # no ticks once the answer streams


def test_run_observed_passes_on_the_waits_of_the_calls_inside_and_then_the_outcome() -> None:
    line = ModelQueue()
    assert line.acquire(1.0)

    def routed() -> str:  # a step (routing) whose model call waits behind another answer
        assert line.acquire(10.0)
        line.release()
        return "route"

    threading.Timer(0.2, line.release).start()
    items = list(run_observed(routed))
    assert items[:-1] == [1, 0]
    outcome = items[-1]
    assert isinstance(outcome, Outcome) and outcome.get() == "route"


def test_run_observed_raises_the_error_of_the_call_in_the_callers_thread() -> None:
    def broken() -> str:
        raise ValueError("classifier exploded")

    (outcome,) = list(run_observed(broken))
    assert isinstance(outcome, Outcome)
    with pytest.raises(ValueError, match="classifier exploded"):
        outcome.get()
