"""The catalog: the source of truth for documents and chunks, on SQLite and on PostgreSQL (``store_target``).

Old-file migrations are SQLite's alone: PostgreSQL catalogs started at the present schema."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from ragapp.core.types import Chunk, DocumentRecord, KnowledgeBase, OcrBox, ParseReport, SkippedSection
from ragapp.store.catalog import Catalog, ContentAlreadyStored


@pytest.fixture
def catalog(store_target: Callable[[str], Any]) -> Iterator[Catalog]:
    cat = Catalog(store_target("catalog")).start()
    yield cat
    cat.close()


def record(doc_id: str, name: str, chunks: int, added_at: str = "2024-01-01 00:00:00") -> DocumentRecord:
    return DocumentRecord(doc_id, name, "txt", f"hash-{doc_id}", 100, None, chunks, added_at)


def chunks_for(doc_id: str, name: str, count: int) -> list[Chunk]:
    return [
        Chunk(f"{doc_id}-{i:04d}", doc_id, i, f"text {i} of {doc_id}", name, page=i + 1, heading=f"H{i}")
        for i in range(count)
    ]


def add(catalog: Catalog, doc_id: str, name: str, count: int, added_at: str = "2024-01-01 00:00:00") -> None:
    with catalog.transaction() as conn:
        catalog.add_document(conn, record(doc_id, name, count, added_at), chunks_for(doc_id, name, count))


def test_a_catalog_file_is_created_with_its_folder(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "catalog.sqlite3"
    Catalog(path).start().close()
    assert path.exists()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)  # kept in the file, as before
    finally:
        conn.close()


def test_fresh_catalog_is_empty_at_version_zero(catalog: Catalog) -> None:
    assert catalog.documents() == []
    assert catalog.all_chunks() == []
    assert catalog.chunk_count() == 0
    assert catalog.version == 0


def test_add_and_list(catalog: Catalog) -> None:
    add(catalog, "d1", "one.txt", 2, "2024-01-01 00:00:00")
    add(catalog, "d2", "two.txt", 3, "2024-01-02 00:00:00")

    assert [d.doc_id for d in catalog.documents()] == ["d2", "d1"]  # newest first
    assert catalog.documents()[1] == record("d1", "one.txt", 2, "2024-01-01 00:00:00")
    assert catalog.chunk_count() == 5
    assert [c.chunk_id for c in catalog.all_chunks()] == ["d1-0000", "d1-0001", "d2-0000", "d2-0001", "d2-0002"]
    assert catalog.all_chunks()[0] == chunks_for("d1", "one.txt", 2)[0]  # page, heading and source survive
    assert catalog.document_by_hash("hash-d2") == catalog.documents()[0]
    assert catalog.document_by_hash("nope") is None
    assert [d.doc_id for d in catalog.documents_named("one.txt")] == ["d1"]


def test_every_write_bumps_the_version(catalog: Catalog) -> None:
    add(catalog, "d1", "one.txt", 1)
    assert catalog.version == 1
    add(catalog, "d2", "two.txt", 1)
    assert catalog.version == 2
    with catalog.transaction() as conn:
        catalog.delete_document(conn, "d1")
    assert catalog.version == 3


def test_delete_cascades_to_chunks(catalog: Catalog) -> None:
    add(catalog, "d1", "one.txt", 3)
    add(catalog, "d2", "two.txt", 2)
    with catalog.transaction() as conn:
        removed = catalog.delete_document(conn, "d1")
    assert sorted(removed) == ["d1-0000", "d1-0001", "d1-0002"]
    assert [d.doc_id for d in catalog.documents()] == ["d2"]
    assert [c.chunk_id for c in catalog.all_chunks()] == ["d2-0000", "d2-0001"]
    assert catalog.chunk_count() == 2  # counts the chunks table itself: no orphans left behind
    assert catalog.chunks(removed) == {}


def test_delete_of_unknown_document_removes_nothing(catalog: Catalog) -> None:
    add(catalog, "d1", "one.txt", 1)
    with catalog.transaction() as conn:
        assert catalog.delete_document(conn, "ghost") == []
    assert catalog.chunk_count() == 1


def test_exception_in_transaction_rolls_everything_back(catalog: Catalog) -> None:
    add(catalog, "d1", "one.txt", 1)
    version = catalog.version

    with pytest.raises(RuntimeError, match="boom"), catalog.transaction() as conn:
        catalog.add_document(conn, record("d2", "two.txt", 2), chunks_for("d2", "two.txt", 2))
        catalog.delete_document(conn, "d1")
        raise RuntimeError("boom")

    assert [d.doc_id for d in catalog.documents()] == ["d1"]
    assert [c.chunk_id for c in catalog.all_chunks()] == ["d1-0000"]
    assert catalog.version == version
    add(catalog, "d3", "three.txt", 1)  # the connection is usable afterwards
    assert catalog.version == version + 1


def test_duplicate_content_hash_is_refused_and_rolled_back(catalog: Catalog) -> None:
    add(catalog, "d1", "one.txt", 1)
    version = catalog.version
    clash = DocumentRecord("d9", "copy.txt", "txt", "hash-d1", 100, None, 1, "2024-01-03 00:00:00")
    with pytest.raises(ContentAlreadyStored) as refused, catalog.transaction() as conn:
        catalog.add_document(conn, clash, chunks_for("d9", "copy.txt", 1))
    assert refused.value.content_hash == "hash-d1"  # either driver's integrity error, as one ragapp error
    assert [d.doc_id for d in catalog.documents()] == ["d1"]
    assert catalog.chunk_count() == 1
    assert catalog.version == version
    add(catalog, "d2", "two.txt", 1)  # usable afterwards (PostgreSQL aborts the transaction on the error)
    assert catalog.version == version + 1


def test_other_integrity_errors_are_not_taken_for_duplicates(catalog: Catalog) -> None:
    orphan = chunks_for("ghost", "ghost.txt", 1)
    with pytest.raises((sqlite3.IntegrityError, psycopg.IntegrityError)) as refused, catalog.transaction() as conn:
        conn.many(
            "INSERT INTO chunks (chunk_id, doc_id, ordinal, text, has_table) VALUES (?, ?, ?, ?, 0)",
            [(c.chunk_id, c.doc_id, c.ordinal, c.text) for c in orphan],
        )
    assert not isinstance(refused.value, ContentAlreadyStored)
    assert catalog.chunk_count() == 0  # the foreign key held on both engines


def test_chunks_ignores_unknown_ids_and_duplicates(catalog: Catalog) -> None:
    add(catalog, "d1", "one.txt", 2)
    found = catalog.chunks(["d1-0001", "missing-0000", "d1-0001", "d1-0000"])
    assert set(found) == {"d1-0000", "d1-0001"}
    assert found["d1-0001"] == chunks_for("d1", "one.txt", 2)[1]
    assert catalog.chunks([]) == {}


def test_chunks_handles_more_ids_than_sqlite_variables(catalog: Catalog) -> None:
    add(catalog, "big", "big.txt", 1200)
    wanted = [f"big-{i:04d}" for i in range(1200)] + [f"nope-{i}" for i in range(300)]
    assert len(catalog.chunks(wanted)) == 1200


def test_meta_values_round_trip_without_bumping_the_version(catalog: Catalog) -> None:
    assert catalog.get_meta("demo_loaded") is None
    catalog.set_meta("demo_loaded", "1")
    catalog.set_meta("demo_loaded", "2")
    assert catalog.get_meta("demo_loaded") == "2"
    assert catalog.version == 0


def test_data_survives_reopening(store_target: Callable[[str], Any]) -> None:
    first = Catalog(store_target("catalog")).start()
    add(first, "d1", "one.txt", 2)
    first.close()
    second = Catalog(store_target("catalog")).start()  # a second open applies no schema step twice
    try:
        assert [d.doc_id for d in second.documents()] == ["d1"]
        assert second.chunk_count() == 2
        assert second.version == 1
    finally:
        second.close()


# -- knowledge bases ------------------------------------------------------------------------------


def add_to(catalog: Catalog, kb: str, doc_id: str, name: str, count: int) -> None:
    with catalog.transaction() as conn:
        doc = DocumentRecord(doc_id, name, "txt", f"hash-{doc_id}", 100, None, count, "2024-01-01 00:00:00", kb)
        catalog.add_document(conn, doc, chunks_for(doc_id, name, count))


def test_documents_default_to_the_default_knowledge_base(catalog: Catalog) -> None:
    add(catalog, "d1", "one.txt", 1)  # positional construction without a kb, as before knowledge bases
    assert catalog.documents()[0].kb == "default"
    assert catalog.knowledge_bases() == [KnowledgeBase("default", 1, 1)]


def test_knowledge_bases_are_listed_with_their_counts(catalog: Catalog) -> None:
    assert catalog.knowledge_bases() == []
    add_to(catalog, "manuals", "d1", "one.txt", 2)
    add_to(catalog, "manuals", "d2", "two.txt", 3)
    add_to(catalog, "手册", "d3", "three.txt", 1)
    assert catalog.knowledge_bases() == [KnowledgeBase("manuals", 2, 5), KnowledgeBase("手册", 1, 1)]
    assert catalog.chunk_kbs() == {
        "d1-0000": "manuals",
        "d1-0001": "manuals",
        "d2-0000": "manuals",
        "d2-0001": "manuals",
        "d2-0002": "manuals",
        "d3-0000": "手册",
    }
    with catalog.transaction() as conn:
        catalog.delete_document(conn, "d3")
    assert [kb.name for kb in catalog.knowledge_bases()] == ["manuals"]  # an emptied base is gone


def test_names_are_looked_up_within_a_knowledge_base(catalog: Catalog) -> None:
    add_to(catalog, "a", "d1", "notes.txt", 1)
    add_to(catalog, "b", "d2", "notes.txt", 1)
    assert [d.doc_id for d in catalog.documents_named("notes.txt", "a")] == ["d1"]
    assert [d.doc_id for d in catalog.documents_named("notes.txt", "c")] == []
    assert sorted(d.doc_id for d in catalog.documents_named("notes.txt")) == ["d1", "d2"]


def test_move_document_changes_its_knowledge_base(catalog: Catalog) -> None:
    add_to(catalog, "a", "d1", "one.txt", 2)
    version = catalog.version
    with catalog.transaction() as conn:
        assert catalog.move_document(conn, "d1", "b") == ["d1-0000", "d1-0001"]
    assert catalog.document("d1") == DocumentRecord(
        "d1", "one.txt", "txt", "hash-d1", 100, None, 2, "2024-01-01 00:00:00", "b"
    )
    assert set(catalog.chunk_kbs().values()) == {"b"}
    assert catalog.version == version + 1  # derived indexes see the move
    assert catalog.document("ghost") is None


_OLD_SCHEMA = (
    (Path(__file__).parents[1] / "fixtures" / "catalog_before_kbs.sql").read_text("utf-8")
    + """
INSERT INTO documents VALUES ('old1', 'old.txt', 'txt', 'hash-old1', 10, NULL, 2, '2023-05-01 00:00:00');
INSERT INTO chunks VALUES ('old1-0000', 'old1', 0, 'first', NULL, NULL), ('old1-0001', 'old1', 1, 'second', 2, 'H');
INSERT INTO meta VALUES ('version', '4');
"""
)


def old_catalog(path: Path) -> Path:
    """A catalog file as written before knowledge bases existed: no ``documents.kb`` column."""
    conn = sqlite3.connect(path)
    conn.executescript(_OLD_SCHEMA)
    conn.commit()
    conn.close()
    return path


def test_catalog_from_before_knowledge_bases_is_migrated(tmp_path: Path) -> None:
    path = old_catalog(tmp_path / "catalog.sqlite3")
    catalog = Catalog(path).start()
    try:
        (doc,) = catalog.documents()
        assert (doc.doc_id, doc.name, doc.chunk_count, doc.kb) == ("old1", "old.txt", 2, "default")
        assert catalog.all_chunks()[1] == Chunk("old1-0001", "old1", 1, "second", "old.txt", 2, "H")
        assert catalog.knowledge_bases() == [KnowledgeBase("default", 1, 2)]
        assert catalog.version == 4  # the data is unchanged, so derived indexes need no rebuild for it
        add_to(catalog, "new", "d1", "one.txt", 1)
        assert [kb.name for kb in catalog.knowledge_bases()] == ["default", "new"]
    finally:
        catalog.close()
    reopened = Catalog(path).start()  # migrating twice is a no-op
    try:
        assert sorted((d.doc_id, d.kb) for d in reopened.documents()) == [("d1", "new"), ("old1", "default")]
    finally:
        reopened.close()


def skipped_for(doc_id: str, *pages: int) -> list[SkippedSection]:
    return [SkippedSection(doc_id, page - 1, page, None, "table of contents", f"toc {page}") for page in pages]


def test_skipped_sections_are_stored_with_their_document_and_go_with_it(catalog: Catalog) -> None:
    with catalog.transaction() as conn:
        catalog.add_document(conn, record("d1", "one.txt", 1), chunks_for("d1", "one.txt", 1), skipped_for("d1", 3, 2))
    add(catalog, "d2", "two.txt", 1)

    assert catalog.skipped_sections("d1") == skipped_for("d1", 2, 3)  # in document order
    assert catalog.skipped_sections("d2") == []
    assert catalog.skipped_counts() == {"d1": 2}
    assert catalog.chunk_count() == 2  # skipped text never becomes a chunk

    with catalog.transaction() as conn:
        catalog.delete_document(conn, "d1")
    assert catalog.skipped_sections("d1") == []
    assert catalog.skipped_counts() == {}


def test_catalog_from_before_skipped_sections_gains_the_table(tmp_path: Path) -> None:
    catalog = Catalog(old_catalog(tmp_path / "catalog.sqlite3")).start()
    try:
        assert catalog.skipped_sections("old1") == [] and catalog.skipped_counts() == {}
        with catalog.transaction() as conn:
            catalog.add_document(conn, record("d1", "one.txt", 1), chunks_for("d1", "one.txt", 1), skipped_for("d1", 1))
        assert catalog.skipped_counts() == {"d1": 1}
        assert catalog.version == 5
    finally:
        catalog.close()


def test_ocr_boxes_and_the_parse_report_come_back_as_stored(catalog: Catalog) -> None:
    boxes = [OcrBox(1, "lower line", 0.1, 0.8, 0.9, 0.85), OcrBox(1, "upper line", 0.1, 0.1, 0.9, 0.15)]
    boxes += [OcrBox(2, "page two", 0.2, 0.2, 0.3, 0.3)]
    report = ParseReport(pages_with_text=2, ocr_pages=(1, 2), tables=1, ocr_confidence=0.875)
    chunks = [Chunk("d1-0000", "d1", 0, "text", "one.pdf", 1, None, 0.875, True)]
    with catalog.transaction() as tx:
        catalog.add_document(tx, record("d1", "one.pdf", 1), chunks, report=report, boxes=boxes)
    assert catalog.ocr_boxes("d1", 1) == boxes[:2]  # in the order OCR read them, not by position
    assert catalog.ocr_boxes("d1", 2) == boxes[2:]
    assert catalog.parse_report("d1") == report
    assert catalog.parse_report("ghost") is None
    assert catalog.document_chunks("d1") == chunks  # OCR confidence and the table flag survive


def test_chunk_window_stays_inside_its_document(catalog: Catalog) -> None:
    add(catalog, "d1", "one.txt", 5)
    add(catalog, "d2", "two.txt", 2)
    assert [c.chunk_id for c in catalog.chunk_window("d1-0001", 2)] == ["d1-0000", "d1-0001", "d1-0002", "d1-0003"]
    assert [c.chunk_id for c in catalog.chunk_window("d2-0000", 3)] == ["d2-0000", "d2-0001"]
    assert catalog.chunk_window("ghost", 1) == []


def test_names_sort_by_code_point_on_both_engines(catalog: Catalog) -> None:
    for doc_id, name in [("d1", "b.txt"), ("d2", "B.txt"), ("d3", "a.txt"), ("d4", "手册.txt")]:
        add(catalog, doc_id, name, 1)  # all added at the same moment: the name decides
    assert [d.name for d in catalog.documents()] == ["B.txt", "a.txt", "b.txt", "手册.txt"]


def test_store_document_replaces_the_same_name_in_its_knowledge_base_only(catalog: Catalog) -> None:
    add_to(catalog, "a", "d1", "notes.txt", 2)
    add_to(catalog, "b", "d2", "notes.txt", 1)
    new = DocumentRecord("d3", "notes.txt", "txt", "hash-d3", 100, None, 1, "2024-01-02 00:00:00", "a")
    with catalog.transaction() as tx:
        replaced = catalog.store_document(tx, new, chunks_for("d3", "notes.txt", 1))
    assert [(r.record.doc_id, r.chunk_ids) for r in replaced] == [("d1", ["d1-0000", "d1-0001"])]
    assert sorted((d.doc_id, d.kb) for d in catalog.documents_named("notes.txt")) == [("d2", "b"), ("d3", "a")]


def test_store_document_refuses_content_already_stored_and_names_it(catalog: Catalog) -> None:
    add_to(catalog, "a", "d1", "one.txt", 1)
    version = catalog.version
    copy = DocumentRecord("d1", "copy.txt", "txt", "hash-d1", 100, None, 1, "2024-01-02 00:00:00", "b")
    with pytest.raises(ContentAlreadyStored) as refused, catalog.transaction() as tx:
        catalog.store_document(tx, copy, chunks_for("d1", "copy.txt", 1))
    assert refused.value.existing == catalog.document("d1")
    assert "already in the knowledge base as one.txt in 'a'" in str(refused.value)
    assert catalog.version == version and catalog.document_count() == 1


def test_store_document_again_replaces_a_document_by_its_own_id(catalog: Catalog) -> None:
    add_to(catalog, "a", "d1", "one.txt", 3)
    again = DocumentRecord("d1", "one.txt", "txt", "hash-d1", 100, None, 1, "2024-01-02 00:00:00", "a")
    with catalog.transaction() as tx:
        replaced = catalog.store_document(tx, again, chunks_for("d1", "one.txt", 1), again=True)
    assert [r.record.chunk_count for r in replaced] == [3]
    assert [c.chunk_id for c in catalog.document_chunks("d1")] == ["d1-0000"]


def test_catalog_from_before_ordered_ocr_boxes_keeps_their_order(tmp_path: Path) -> None:
    path = old_catalog(tmp_path / "catalog.sqlite3")
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE ocr_boxes (doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE, "
        "page INTEGER NOT NULL, text TEXT NOT NULL, x0 REAL NOT NULL, y0 REAL NOT NULL, x1 REAL NOT NULL, "
        "y1 REAL NOT NULL);"
        "INSERT INTO ocr_boxes VALUES ('old1', 1, 'second read', 0, 0.5, 1, 0.6), ('old1', 1, 'first', 0, 0, 1, 0.1);"
    )
    conn.commit()
    conn.close()
    catalog = Catalog(path).start()
    try:
        assert [b.text for b in catalog.ocr_boxes("old1", 1)] == ["second read", "first"]  # as written, as before
    finally:
        catalog.close()
