"""The written questions' tables, on SQLite and on PostgreSQL (``store_target``): what is still to write, and
questions that go with their chunk."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ragapp.core.types import Chunk, DocumentRecord
from ragapp.store.catalog import Catalog
from ragapp.store.written_questions import WrittenQuestion, WrittenQuestions


@pytest.fixture
def catalog(store_target: Callable[[str], Any]) -> Iterator[Catalog]:
    cat = Catalog(store_target("catalog")).start()
    yield cat
    cat.close()


def add(catalog: Catalog, doc_id: str, count: int, kb: str = "manuals") -> list[str]:
    chunks = [Chunk(f"{doc_id}-{i}", doc_id, i, f"text {i} of {doc_id}", f"{doc_id}.txt") for i in range(count)]
    record = DocumentRecord(doc_id, f"{doc_id}.txt", "txt", f"hash-{doc_id}", 10, None, count, "2024-01-01", kb)
    with catalog.transaction() as tx:
        catalog.add_document(tx, record, chunks)
    return [c.chunk_id for c in chunks]


def test_pending_chunks_are_those_of_the_base_not_yet_written(catalog: Catalog) -> None:
    store = WrittenQuestions(catalog.database)
    first, second = add(catalog, "a", 2)
    add(catalog, "b", 1, kb="other")
    assert store.pending("manuals") == [first, second]
    catalog_version = catalog.version
    assert store.write(first, [WrittenQuestion(first, "What is text 0?", "en")], "scripted")
    assert store.pending("manuals") == [second]
    assert store.write(second, [], "scripted")  # none kept: done all the same, not written again
    assert store.pending("manuals") == []
    assert catalog.version == catalog_version  # questions do not make the chunks' indexes stale
    assert store.version == 2


def test_only_kept_questions_are_indexed_with_their_document_and_base(catalog: Catalog) -> None:
    store = WrittenQuestions(catalog.database)
    (chunk,) = add(catalog, "a", 1)
    store.write(
        chunk,
        [WrittenQuestion(chunk, "What is text 0?", "en", True, 3.5), WrittenQuestion(chunk, "Why?", "en", False, -9.0)],
        "scripted",
    )
    assert [(q.text, q.doc_id, q.kb) for q in store.indexed()] == [("What is text 0?", "a", "manuals")]
    assert [(q.text, q.kept, q.score) for q in store.all_written()] == [
        ("What is text 0?", True, 3.5),
        ("Why?", False, -9.0),
    ]


def test_a_deleted_documents_questions_go_with_it(catalog: Catalog) -> None:
    store = WrittenQuestions(catalog.database)
    (chunk,) = add(catalog, "a", 1)
    store.write(chunk, [WrittenQuestion(chunk, "What is text 0?", "en")], "scripted")
    with catalog.transaction() as tx:
        catalog.delete_document(tx, "a")
    assert store.all_written() == [] and store.written_ids() == set()
    assert not store.write(chunk, [WrittenQuestion(chunk, "What is text 0?", "en")], "scripted")  # gone: refused


def test_forget_drops_a_chunks_questions(catalog: Catalog) -> None:
    store = WrittenQuestions(catalog.database)
    (chunk,) = add(catalog, "a", 1)
    store.write(chunk, [WrittenQuestion(chunk, "What is text 0?", "en")], "scripted")
    store.forget([chunk])
    assert store.of_chunk(chunk) == [] and store.pending("manuals") == [chunk]
