"""Two replicas on one PostgreSQL database: each sees the traces, feedback, test cases and conversations the other
wrote, and their trace writers trimming at once keep exactly the newest ``max_traces`` without an error.

Every replica is modelled as its own stores on its own connection pool (``open_database``), as separate processes
would have.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from ragapp.db import Database
from ragapp.store.conversations import ConversationStore
from ragapp.testcases.store import TestCaseStore
from ragapp.tracing.store import TracePayloadStore

Replica = Callable[[], Database]


@pytest.fixture
def replica(replica_db: Replica) -> Replica:
    """``replica()``: the shared database, through a pool of its own."""
    return replica_db


def _trace(trace_id: str, owner: str = "ann", minutes_ago: float = 0.0) -> dict[str, Any]:
    started = (datetime.now(UTC) - timedelta(minutes=minutes_ago)).isoformat()
    return {"id": trace_id, "owner": owner, "kind": "chat", "started_at": started, "question": f"q {trace_id}"}


def test_traces_and_feedback_written_by_one_replica_are_seen_by_the_other(replica: Replica) -> None:
    first, second = TracePayloadStore(replica()).start(), TracePayloadStore(replica()).start()
    try:
        trace = _trace("t1")
        first.save(trace)
        first.flush()
        assert second.get("t1", "ann") == trace and [t.id for t in second.list(None)] == ["t1"]
        assert second.set_feedback("t1", "ann", "down", "wrong page")  # e.g. after a reload reached the other one
        assert first.feedback("t1") == ("down", "wrong page")
        assert [(t.id, t.rating) for t in first.list("ann", rating="down")] == [("t1", "down")]
        assert second.set_feedback("t1", "bob", "up") is False  # still only the owner's own trace
        assert second.delete_all("ann") == 1
        assert first.get("t1", "ann") is None and first.feedback("t1") == ("", "")
    finally:
        first.close()
        second.close()


def test_writers_of_two_replicas_trim_to_the_newest_traces_together(replica: Replica) -> None:
    stores = [TracePayloadStore(replica(), max_traces=10).start() for _ in range(2)]
    start = threading.Barrier(2)

    def write(n: int) -> None:
        start.wait()
        for i in range(30):  # replica n writes every other minute: together, 60 traces a minute apart
            stores[n].save(_trace(f"r{n}-{i}", minutes_ago=60 - (2 * i + n)))

    threads = [threading.Thread(target=write, args=(n,)) for n in range(2)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for store in stores:
            store.flush(timeout=30)
        assert [store.write_errors for store in stores] == [0, 0]
        kept = [t.id for t in stores[0].list("ann")]
        assert kept == [f"r{i % 2}-{i // 2}" for i in range(59, 49, -1)]  # the ten newest, whoever wrote them
    finally:
        for store in stores:
            store.close()


def test_test_cases_saved_on_one_replica_are_listed_and_replaced_on_the_other(replica: Replica) -> None:
    first, second = TestCaseStore(replica()).start(), TestCaseStore(replica()).start()
    case = first.add("ann", "Who signs invoices?", ["policy.pdf"], trace_id="t1")
    assert second.list("ann") == [case]
    newer = second.add("ann", "Who signs invoices?", ["policy-2025.pdf"])
    assert first.list("ann") == [newer] and newer.id != case.id
    assert first.delete("ann", newer.id) and second.list("ann") == []


def test_conversations_saved_on_one_replica_are_continued_on_the_other(replica: Replica) -> None:
    first, second = ConversationStore(replica()).start(), ConversationStore(replica()).start()
    messages = [{"role": "user", "content": "How long does the battery last?"}]
    cid = first.save("ann", None, "How long does the battery last?", messages, {"summary": ""})
    assert [c.id for c in second.list("ann")] == [cid]
    longer = [*messages, {"role": "assistant", "content": "90 minutes [1].", "trace_id": "t1"}]
    assert second.save("ann", cid, "ignored", longer, {"summary": "s"}) == cid  # the same chat, not a new one
    found = first.get("ann", cid)
    assert found is not None and list(found.messages) == longer and found.memory == {"summary": "s"}
    assert second.rename("ann", cid, "Battery") and first.list("ann")[0].title == "Battery"
    assert first.delete("ann", cid) and second.get("ann", cid) is None


def test_a_second_replica_starting_finds_the_tables_in_place(replica: Replica) -> None:
    db = replica()
    for _ in range(2):  # the second start applies nothing and loses nothing
        ConversationStore(db).start().save("ann", None, "hi", [], {})
        TestCaseStore(db).start()
        TracePayloadStore(db).start().close()
    versions = dict(db.query("SELECT component, version FROM schema_versions"))
    assert versions == {"conversations": 1, "test_cases": 2, "traces": 1}  # test_cases step 2: answer checks
    assert len(ConversationStore(db).start().list("ann")) == 2
