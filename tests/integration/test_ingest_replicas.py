"""Two replicas ingesting into one catalog (a SQLite file both open, or the PostgreSQL database they share), with
one vector store and one files folder between them, as a deployment behind a load balancer has."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.config import Settings, StoreSettings
from ragapp.core.chunks import index_text
from ragapp.db import open_database
from ragapp.ingest.pipeline import Ingestor, KnowledgeStore
from ragapp.models.embedders import EMBEDDERS, Embedder
from ragapp.store.bm25 import Bm25Index
from ragapp.store.catalog import Catalog
from ragapp.store.files import FileStore
from ragapp.store.vectors import ChromaVectorIndex

pytestmark = pytest.mark.integration

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "sample.md"


class _Interleaved:
    """The shared vector store, as one replica sees it: ``before`` runs (once) just ahead of its first write, the
    moment between its duplicate check and its catalog write."""

    def __init__(self, inner: ChromaVectorIndex, before: Callable[[], object]) -> None:
        self._inner = inner
        self._before: Callable[[], object] | None = before

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def add(self, *args: Any, **kwargs: Any) -> None:
        before, self._before = self._before, None
        if before is not None:
            before()
        self._inner.add(*args, **kwargs)


class _EmbedsFirst:
    """The embedder as the other replica sees it: ``before`` runs (once) as it starts embedding."""

    def __init__(self, inner: Embedder, before: Callable[[], object]) -> None:
        self._inner = inner
        self._before: Callable[[], object] | None = before

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def embed_passages(self, texts: list[str]) -> Any:
        before, self._before = self._before, None
        if before is not None:
            before()
        return self._inner.embed_passages(texts)


@pytest.fixture
def embedder(make_settings: Callable[..., Settings]) -> Embedder:
    settings = make_settings()
    return EMBEDDERS.get(settings.embedding.backend)(settings)


def test_the_loser_of_a_race_for_the_same_bytes_gets_the_duplicate_outcome(
    store_target: Callable[[str], Any], embedder: Embedder, make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    settings = make_settings()
    vectors = ChromaVectorIndex.embedded(tmp_path / "chroma", embedder.name)
    files = FileStore(tmp_path / "files")

    def replica(name: str, shared: Any, embeds: Any = embedder) -> KnowledgeStore:
        catalog = Catalog(store_target("catalog")).start()  # a catalog object (and connection) of its own
        return KnowledgeStore(
            catalog, shared, Bm25Index(tmp_path / name / "bm25").start(), embeds, threading.Lock(), files
        )

    first = replica("first", vectors)
    first_results: list[Any] = []

    def ingest_first() -> None:
        first_results.extend(Ingestor(first, settings.ingest).ingest_files([(SAMPLE, "sample.md")], kb="manuals"))

    if isinstance(store_target("catalog"), Path):
        # One SQLite file, no lock across processes: the second replica found the file new, embedded it, and is
        # about to write when the first stores it. The catalog's unique constraint settles it.
        second = replica("second", _Interleaved(vectors, ingest_first))
    else:
        # PostgreSQL: the write phases of two replicas exclude each other (a database lock), so the race is
        # while the second embeds; its check under the lock finds the first one's document.
        second = replica("second", vectors, _EmbedsFirst(embedder, ingest_first))
    try:
        (lost,) = Ingestor(second, settings.ingest).ingest_files([(SAMPLE, "copy.md")], kb="drafts")
        (won,) = first_results
        assert won.status == "added"
        assert (lost.status, lost.message) == (
            "duplicate",
            "copy.md: already in the knowledge base as sample.md in 'manuals'; nothing changed.",
        )
        assert lost.doc_id == won.doc_id and lost.chunks == won.chunks
        (doc,) = second.catalog.documents()
        assert (doc.name, doc.kb) == ("sample.md", "manuals")
        chunks = second.catalog.all_chunks()
        # The loser wrote over the winner's vectors (same ids): they are the winner's again, name and base.
        assert vectors.ids() == {c.chunk_id for c in chunks}
        assert set(vectors.kb_tags().values()) == {"manuals"}
        for chunk in chunks:
            (best, score), *_ = vectors.search(embedder.embed_passages([index_text(chunk)])[0], 1)
            assert best == chunk.chunk_id and score > 0.999
        assert files.find(doc.doc_id) is not None  # the winner's kept file stays
        # A sequential duplicate reads the same.
        (again,) = Ingestor(second, settings.ingest).ingest_files([(SAMPLE, "copy.md")], kb="drafts")
        assert (again.status, again.message) == (lost.status, lost.message)
    finally:
        first.catalog.close()
        second.catalog.close()


def test_open_puts_the_catalog_in_the_database_and_files_in_files_dir(
    postgres_url: str, embedder: Embedder, make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    db = open_database(postgres_url, pool_size=2)
    try:
        store = KnowledgeStore.open(tmp_path / "state", embedder, StoreSettings(files_dir=tmp_path / "nfs"), db)
        (result,) = Ingestor(store, make_settings().ingest).ingest_files([(SAMPLE, "sample.md")])
        assert result.status == "added"
        assert not (tmp_path / "state" / "catalog.sqlite3").exists()
        assert store.files is not None and store.files.find(result.doc_id) == tmp_path / "nfs" / f"{result.doc_id}.md"
        other = Catalog(db).start()  # what another replica's catalog reads
        assert [d.name for d in other.documents()] == ["sample.md"] and other.version == 1
    finally:
        db.close()
