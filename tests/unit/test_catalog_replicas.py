"""Several replicas on one PostgreSQL catalog: each sees the others' writes, and racing writers never crash.

Every replica is modelled as its own ``Catalog`` on its own connection pool (``open_database``), as separate
processes would have.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from ragapp.core.types import Chunk, DocumentRecord
from ragapp.db import Database
from ragapp.store.catalog import Catalog, ContentAlreadyStored, Replaced

Replica = Callable[[], Catalog]


@pytest.fixture
def replica(replica_db: Callable[[], Database]) -> Replica:
    """``replica()``: a new catalog on the shared database, with a pool of its own."""
    return lambda: Catalog(replica_db()).start()


def doc(doc_id: str, name: str, kb: str = "default", content_hash: str = "") -> DocumentRecord:
    return DocumentRecord(doc_id, name, "txt", content_hash or f"hash-{doc_id}", 10, None, 1, "2024-01-01 00:00:00", kb)


def one_chunk(doc_id: str, name: str) -> list[Chunk]:
    return [Chunk(f"{doc_id}-0000", doc_id, 0, f"text of {doc_id}", name)]


def wait_until_blocked(db: Database, timeout: float = 10.0) -> None:
    """Until some session of this database waits on a lock (the other replica's write, or its advisory lock)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = db.one(
            "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        if row and row[0]:
            return
        time.sleep(0.02)
    raise AssertionError("the second writer never waited for the first")


def test_a_second_replica_sees_the_first_ones_writes_and_version(replica: Replica) -> None:
    first, second = replica(), replica()
    assert first.version == second.version == 0
    with first.transaction() as tx:
        first.add_document(tx, doc("d1", "one.txt"), one_chunk("d1", "one.txt"))
    assert second.version == 1  # read from the database each time, never cached
    assert [d.doc_id for d in second.documents()] == ["d1"]
    assert second.chunk_kbs() == {"d1-0000": "default"}
    with second.transaction() as tx:
        second.move_document(tx, "d1", "manuals")
    with second.transaction() as tx:
        second.delete_document(tx, "d1")
    assert first.version == 3
    assert first.documents() == [] and first.chunk_count() == 0
    first.set_meta("demo_loaded", "1")
    assert second.get_meta("demo_loaded") == "1"


def test_concurrent_version_bumps_are_never_lost(replica: Replica) -> None:
    catalogs = [replica() for _ in range(4)]

    def bump(catalog: Catalog) -> None:
        for _ in range(10):
            with catalog.transaction():
                pass

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(bump, catalogs))
    assert catalogs[0].version == 40


def _race(first: Catalog, second: Catalog, write: Callable[[Catalog, DocumentRecord], object], a: DocumentRecord,
          b: DocumentRecord) -> object:  # fmt: skip
    """``first`` writes ``a`` and holds its transaction open until ``second``, writing ``b``, waits on it; returns
    what ``second``'s write returned or raised."""
    inside = threading.Event()

    def hold() -> None:
        with first.database.transaction():  # ``write``'s own transaction joins this one, which stays open
            write(first, a)
            inside.set()
            wait_until_blocked(first.database)

    def race() -> object:
        inside.wait(10)
        try:
            return write(second, b)
        except ContentAlreadyStored as exc:
            return exc

    with ThreadPoolExecutor(2) as pool:
        held, raced = pool.submit(hold), pool.submit(race)
        held.result(timeout=30)
        return raced.result(timeout=30)


def _store(catalog: Catalog, record: DocumentRecord) -> list[Replaced]:
    with catalog.transaction() as tx:
        return catalog.store_document(tx, record, one_chunk(record.doc_id, record.name))


def test_racing_uploads_of_the_same_bytes_store_one_document(replica: Replica) -> None:
    first, second = replica(), replica()
    # Different knowledge bases: no name lock between them, so the loser's own insert hits the UNIQUE index.
    outcome = _race(first, second, _store, doc("d1", "one.txt", "a"), doc("d1", "copy.txt", "b", "hash-d1"))
    assert isinstance(outcome, ContentAlreadyStored)
    assert outcome.content_hash == "hash-d1" and outcome.existing is None  # from the UNIQUE index, not the check
    assert [(d.doc_id, d.name, d.kb) for d in second.documents()] == [("d1", "one.txt", "a")]
    assert second.chunk_count() == 1
    assert second.version == 1  # the loser's transaction rolled back whole
    _store(second, doc("d2", "two.txt"))  # and its pool connection is fine afterwards
    assert first.document_count() == 2


def test_racing_raw_inserts_of_the_same_bytes_raise_the_ragapp_error(replica: Replica) -> None:
    def add(catalog: Catalog, record: DocumentRecord) -> None:
        with catalog.transaction() as tx:
            catalog.add_document(tx, record, one_chunk(record.doc_id, record.name))

    first, second = replica(), replica()
    outcome = _race(first, second, add, doc("d1", "one.txt"), doc("d9", "copy.txt", content_hash="hash-d1"))
    assert isinstance(outcome, ContentAlreadyStored) and outcome.existing is None  # psycopg's UniqueViolation
    assert [d.doc_id for d in first.documents()] == ["d1"]


def test_racing_uploads_of_one_name_leave_one_document_of_that_name(replica: Replica) -> None:
    first, second = replica(), replica()
    _store(first, doc("d0", "notes.txt"))
    outcome = _race(first, second, _store, doc("d1", "notes.txt"), doc("d2", "notes.txt"))
    # The second waited for the name lock, then saw the first's version and replaced it (not the old one).
    assert isinstance(outcome, list)
    assert [r.record.doc_id for r in outcome] == ["d1"]
    assert [d.doc_id for d in first.documents_named("notes.txt")] == ["d2"]
    assert first.chunk_count() == 1


def test_racing_uploads_of_the_same_file_to_one_base_refuse_the_second_by_name(replica: Replica) -> None:
    first, second = replica(), replica()
    outcome = _race(first, second, _store, doc("d1", "one.txt"), doc("d1", "one.txt"))
    assert isinstance(outcome, ContentAlreadyStored)
    assert outcome.existing is not None and outcome.existing.name == "one.txt"  # seen once the lock was free
    assert first.document_count() == 1
