"""Feedback kept with traces (real SQLite trace store): only on the owner's own trace, one per trace, filtered in
the list, an admin's listing of everyone's, and gone with its trace."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragapp.tracing.model import Trace
from ragapp.tracing.store import MAX_COMMENT_CHARS, TraceStore


def _trace(trace_id: str, owner: str, started: str = "2026-11-30T10:00:00+00:00") -> Trace:
    return Trace(id=trace_id, owner=owner, kind="chat", started_at=started, question=f"q {trace_id}", mode="workflow")


@pytest.fixture
def store(tmp_path: Path) -> TraceStore:
    store = TraceStore(tmp_path / "t.sqlite3", max_traces=3, max_age_days=10_000)
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
