"""Each knowledge base's count of changes (``Catalog.kb_versions``), kept by the catalog's triggers on SQLite and
PostgreSQL (``store_target``): every write moves the counts of the knowledge bases it touched, and only theirs; a
rolled-back write moves nothing; the counts survive reopening and never go back."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ragapp.core.types import Chunk, DocumentRecord
from ragapp.db import Database
from ragapp.store.catalog import Catalog


@pytest.fixture
def catalog(store_target: Callable[[str], Any]) -> Iterator[Catalog]:
    cat = Catalog(store_target("catalog")).start()
    yield cat
    cat.close()


def record(doc_id: str, name: str, kb: str, content_hash: str = "") -> DocumentRecord:
    return DocumentRecord(doc_id, name, "txt", content_hash or f"hash-{doc_id}", 10, None, 1, "2024-01-01 00:00:00", kb)


def store(catalog: Catalog, doc_id: str, name: str, kb: str, content_hash: str = "", again: bool = False) -> None:
    with catalog.transaction() as tx:
        catalog.store_document(
            tx,
            record(doc_id, name, kb, content_hash),
            [Chunk(f"{doc_id}-0000", doc_id, 0, f"text of {doc_id}", name)],
            again=again,
            meta={"title": name},
        )


def moved(catalog: Catalog, before: dict[str, int]) -> set[str]:
    """The knowledge bases whose count moved since ``before`` (none ever goes back)."""
    after = catalog.kb_versions()
    assert all(after.get(kb, 0) >= n for kb, n in before.items()), (before, after)
    return {kb for kb, n in after.items() if n != before.get(kb, 0)}


def test_every_write_moves_the_counts_of_the_knowledge_bases_it_touched_and_only_theirs(catalog: Catalog) -> None:
    assert catalog.kb_versions() == {} and catalog.kb_versions(frozenset({"a"})) == {"a": 0}
    writes: list[tuple[str, Callable[[], object], set[str]]] = [
        ("add to a", lambda: store(catalog, "a1", "one.txt", "a"), {"a"}),
        ("add to b", lambda: store(catalog, "b1", "two.txt", "b"), {"b"}),
        ("replace by name in a", lambda: store(catalog, "a2", "one.txt", "a"), {"a"}),
        ("index again in a", lambda: store(catalog, "a2", "one.txt", "a", "hash-a2-new", again=True), {"a"}),
        ("tag in b", lambda: catalog.set_tags("b1", ["robots"]), {"b"}),
        ("untag in b", lambda: catalog.set_tags("b1", []), {"b"}),
        ("rename in a", lambda: _in_tx(catalog, lambda tx: catalog.rename_document(tx, "a2", "uno.txt")), {"a"}),
        (
            "rename with where it now is",
            lambda: _in_tx(catalog, lambda tx: catalog.rename_document(tx, "b1", "dos.txt", {"path": "x/dos.txt"})),
            {"b"},
        ),
        ("move from a to c", lambda: _in_tx(catalog, lambda tx: catalog.move_document(tx, "a2", "c")), {"a", "c"}),
        ("delete in c", lambda: _in_tx(catalog, lambda tx: catalog.delete_document(tx, "a2")), {"c"}),
    ]
    for what, write, touched in writes:
        before = catalog.kb_versions()
        write()
        assert moved(catalog, before) == touched, what
    assert catalog.kb_versions(frozenset({"b", "z"}))["z"] == 0  # never written to


def _in_tx(catalog: Catalog, write: Callable[[Any], object]) -> None:
    with catalog.transaction() as tx:
        write(tx)


def test_a_write_rolled_back_moves_nothing_and_a_tag_on_a_missing_document_neither(catalog: Catalog) -> None:
    store(catalog, "a1", "one.txt", "a")
    before = catalog.kb_versions()
    with pytest.raises(RuntimeError), catalog.transaction() as tx:
        catalog.move_document(tx, "a1", "b")
        raise RuntimeError("give up")
    assert not catalog.set_tags("missing", ["x"])
    assert catalog.kb_versions() == before and catalog.document("a1").kb == "a"  # type: ignore[union-attr]


def test_a_knowledge_base_emptied_and_filled_again_never_meets_an_old_count(catalog: Catalog) -> None:
    store(catalog, "a1", "one.txt", "a")
    seen = catalog.kb_versions()["a"]
    with catalog.transaction() as tx:
        catalog.delete_document(tx, "a1")
    assert catalog.knowledge_bases() == [] and catalog.kb_versions()["a"] > seen
    store(catalog, "a1", "one.txt", "a")
    assert catalog.kb_versions()["a"] > seen + 1


def test_the_counts_survive_reopening(store_target: Callable[[str], Any]) -> None:
    first = Catalog(store_target("catalog")).start()
    store(first, "a1", "one.txt", "a")
    counts = first.kb_versions()
    first.close()
    again = Catalog(store_target("catalog")).start()
    try:
        assert again.kb_versions() == counts != {}
    finally:
        again.close()


def test_a_catalog_file_from_before_the_counts_gains_them_on_open(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite3"
    Catalog(path).start().close()
    with sqlite3.connect(path) as conn:  # as a release before this one left it
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
            conn.execute(f"DROP TRIGGER {name}")
        conn.execute("DROP TABLE kb_versions")
    catalog = Catalog(path).start()
    try:
        assert catalog.kb_versions() == {}
        store(catalog, "a1", "one.txt", "a")
        assert catalog.kb_versions() == {"a": 2}  # the document's row, then its metadata
    finally:
        catalog.close()


def test_replicas_see_each_others_counts(replica_db: Callable[[], Database]) -> None:
    first, second = Catalog(replica_db()).start(), Catalog(replica_db()).start()
    store(first, "a1", "one.txt", "a")
    assert second.kb_versions() == first.kb_versions() != {}
    with second.transaction() as tx:
        second.move_document(tx, "a1", "b")
    assert set(first.kb_versions()) == {"a", "b"} and first.kb_versions() == second.kb_versions()
