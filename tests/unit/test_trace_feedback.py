"""Feedback kept with traces (the real trace store, on SQLite and on PostgreSQL): only on the owner's own trace,
one per trace, filtered in the list, an admin's listing of everyone's, gone with its trace, and never refused for
a trace the writer has not reached yet."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from ragapp.tracing.model import Trace
from ragapp.tracing.store import MAX_COMMENT_CHARS, TraceStore


def _trace(trace_id: str, owner: str, started: str = "2026-11-30T10:00:00+00:00") -> Trace:
    return Trace(id=trace_id, owner=owner, kind="chat", started_at=started, question=f"q {trace_id}", mode="workflow")


@pytest.fixture
def store(store_target: Callable[[str], Any]) -> TraceStore:
    store = TraceStore(store_target("traces"), max_traces=3, max_age_days=10_000).start()
    for trace_id, owner in (("a1", "ann"), ("a2", "ann"), ("b1", "bob")):
        store.save(_trace(trace_id, owner))
    return store


def test_feedback_goes_only_on_the_owners_own_trace(store: TraceStore) -> None:
    assert store.set_feedback("a1", "ann", "down", "  wrong page  ")
    assert store.set_feedback("b1", "ann", "up") is False  # not hers
    assert store.set_feedback("zz", "ann", "up") is False
    assert store.feedback("a1") == ("down", "wrong page") and store.feedback("b1") == ("", "")
    with pytest.raises(ValueError):
        store.set_feedback("a1", "ann", "meh")
    assert store.set_feedback("a1", "ann", "up", "x" * 5000)  # a second one replaces the first
    assert store.feedback("a1") == ("up", "x" * MAX_COMMENT_CHARS)
    store.close()


def test_the_list_filters_by_feedback_and_shows_it(store: TraceStore) -> None:
    store.set_feedback("a1", "ann", "down", "wrong")
    assert [(t.id, t.rating, t.comment) for t in store.list("ann", rating="down")] == [("a1", "down", "wrong")]
    assert [t.id for t in store.list("ann", rating="none")] == ["a2"]
    assert [t.id for t in store.list("ann", rating="any")] == ["a1"]
    assert store.list("ann", rating="up") == []
    assert {t.id for t in store.list(None)} == {"a1", "a2", "b1"}  # everyone's (the facet checks the role)
    store.close()


def test_feedback_goes_with_its_trace(store: TraceStore) -> None:
    store.set_feedback("a1", "ann", "down")
    for n in range(3):  # retention keeps the 3 latest: a1, a2 and b1 go
        store.save(_trace(f"n{n}", "ann", f"2026-12-01T10:00:0{n}+00:00"))
    store.flush()
    assert store.feedback("a1") == ("", "")
    store.close()


class _ReleaseAfterFirstLook:
    """The store's database, letting the stuck writer go once feedback has looked for the trace and missed."""

    def __init__(self, db: Any, release: threading.Event) -> None:
        self._db, self._release, self.looks = db, release, 0

    def execute(self, sql: str, args: Any = ()) -> int:
        changed = self._db.execute(sql, args)
        self.looks += 1
        self._release.set()
        return int(changed)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


def test_feedback_waits_for_a_trace_the_writer_is_late_with(store: TraceStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """A busy machine: the writer takes longer than ``flush`` waits. The trace of the answer just given is late,
    not gone: the feedback waits for it instead of answering "That answer's trace is gone"."""
    store.flush()
    release = threading.Event()
    real_write, real_flush = store._write, store.flush

    def stuck(trace: Trace) -> None:
        release.wait(10)
        real_write(trace)

    waits: list[float] = []

    def impatient(timeout: float = 5.0) -> None:  # gives up at once, as a flush did on a loaded CI machine
        waits.append(timeout)
        real_flush(timeout if timeout > 10 else 0.05)

    monkeypatch.setattr(store, "_write", stuck)
    monkeypatch.setattr(store, "flush", impatient)
    db = _ReleaseAfterFirstLook(store._db, release)
    monkeypatch.setattr(store, "_started", db)
    store.save(_trace("late", "ann", "2026-12-01T10:00:00+00:00"))
    assert store.set_feedback("late", "ann", "down", "slow")
    assert db.looks == 2 and len(waits) == 2  # missed once, waited for the writer, then found it
    assert store.feedback("late") == ("down", "slow")
    assert store.set_feedback("never-saved", "ann", "up") is False
    assert len(waits) == 3  # a trace that was never queued here is not waited for
    monkeypatch.undo()
    store.close()
