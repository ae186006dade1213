"""Constructors are cheap, ``start`` opens, ``close`` lets go; stages time themselves; model calls run on a pool."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ragapp.accounts.document import DatabaseDocument
from ragapp.core.events import StageEvent
from ragapp.core.lifecycle import NotStartedError
from ragapp.core.stages import begin
from ragapp.db.sqlite import SqliteDatabase
from ragapp.models.llm import stream_within
from ragapp.models.pool import MODEL_CALLS, WorkerPool
from ragapp.router.store import IntentStore
from ragapp.store.bm25 import Bm25Index
from ragapp.store.catalog import Catalog
from ragapp.store.conversations import ConversationStore
from ragapp.testcases.store import TestCaseStore
from ragapp.tracing.store import TraceStore

# Each part, built on a path, and one call that needs it started.
PARTS: dict[str, tuple[Callable[[Path], Any], Callable[[Any], object]]] = {
    "catalog": (Catalog, lambda c: c.document_count()),
    "intents": (IntentStore, lambda s: s.tree()),
    "traces": (TraceStore, lambda s: s.list(None)),
    "conversations": (ConversationStore, lambda s: s.list("ann")),
    "test cases": (TestCaseStore, lambda s: s.list("ann")),
    "bm25": (Bm25Index, lambda i: i.search("battery", 3)),
}


@pytest.mark.parametrize("name", PARTS)
def test_a_constructor_opens_nothing_and_a_call_before_start_says_so(name: str, tmp_path: Path) -> None:
    build, use = PARTS[name]
    threads = {t.name for t in threading.enumerate()}
    part = build(tmp_path / "state" / "part.sqlite3")
    assert not (tmp_path / "state").exists()
    assert {t.name for t in threading.enumerate()} <= threads
    with pytest.raises(NotStartedError, match=r"start\(\)"):
        use(part)
    if hasattr(part, "close"):
        part.close()  # closing what never started does nothing


@pytest.mark.parametrize("name", PARTS)
def test_start_twice_is_harmless(name: str, tmp_path: Path) -> None:
    build, use = PARTS[name]
    part = build(tmp_path / "part.sqlite3")
    assert part.start() is part
    assert part.start() is part
    use(part)
    if hasattr(part, "close"):
        part.close()


def test_the_trace_writer_starts_with_start_and_ends_with_close(tmp_path: Path) -> None:
    def writers() -> set[threading.Thread]:  # other tests' stores may still be writing: count this one's
        return {t for t in threading.enumerate() if t.name == "trace-writer" and t.is_alive()}

    before = writers()
    store = TraceStore(tmp_path / "traces.sqlite3")
    assert writers() <= before
    store.start()
    (writer,) = writers() - before
    store.close()
    assert not writer.is_alive()


def test_a_stage_yields_started_then_returns_its_timer() -> None:
    def steps() -> Iterator[StageEvent]:
        stage = yield from begin("rewrite", {"model": "m"})
        yield stage.finished({"parts": 2}, error="fell back")
        yield stage.failed("down", {"into": "zh"})

    started, finished, failed = list(steps())
    assert started == StageEvent("rewrite", "started", detail={"model": "m"})
    assert (finished.status, finished.detail, finished.error) == ("finished", {"parts": 2}, "fell back")
    assert (failed.status, failed.detail, failed.error) == ("failed", {"into": "zh"}, "down")
    assert finished.duration_s is not None and failed.duration_s is not None
    assert 0 <= finished.duration_s <= failed.duration_s


def test_model_calls_run_on_the_named_pool() -> None:
    seen: list[str] = []

    def reply() -> Iterator[str]:
        seen.append(threading.current_thread().name)
        yield "ok"

    assert list(stream_within(reply, 5.0)) == ["ok"]
    assert seen[0].startswith(MODEL_CALLS.name)


def test_a_pool_runs_at_most_its_size_at_once_and_starts_again_after_close() -> None:
    pool = WorkerPool("test-pool", 2)
    release, running, lock = threading.Event(), [0], threading.Lock()
    most = [0]
    done = threading.Semaphore(0)

    def work() -> None:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        release.wait(0.2)
        with lock:
            running[0] -= 1
        done.release()

    for _ in range(5):
        pool.run(work)
    release.set()
    for _ in range(5):
        assert done.acquire(timeout=5.0)
    assert most[0] <= 2
    pool.close()
    pool.run(done.release)  # used again after close: a fresh pool
    assert done.acquire(timeout=5.0)
    pool.close()
    pool.close()


def test_the_accounts_table_is_made_and_seeded_by_start_not_the_constructor(tmp_path: Path) -> None:
    seed = tmp_path / "users.json"
    seed.write_text('{"users": {"ann": {"role": "admin"}}}', "utf-8")
    db = SqliteDatabase(tmp_path / "shared.sqlite3")
    try:
        document = DatabaseDocument(db, seed=seed)
        assert db.one("SELECT name FROM sqlite_master WHERE name = 'accounts'") is None
        with pytest.raises(NotStartedError):
            document.load()
        assert document.start() is document and document.start() is document
        assert document.load() == {"users": {"ann": {"role": "admin"}}}
    finally:
        db.close()
