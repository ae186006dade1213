"""The three stores an ingestion writes and a search reads (catalog, vectors, keywords), kept in agreement:
opened together, caught up with the shared catalog before a search (read your writes across replicas), and
reconciled after a crash or an embedder change. ``ragapp.ingest.pipeline`` writes to them."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ragapp.config import StoreSettings
from ragapp.core.chunks import index_text
from ragapp.core.lang import language_of
from ragapp.core.types import DEFAULT_KB, Chunk, IngestProgress
from ragapp.db import Database
from ragapp.models.embedders import Embedder
from ragapp.store.catalog import Catalog
from ragapp.store.files import FileStore
from ragapp.store.keyword_index import KeywordIndex, open_keywords
from ragapp.store.vectors import ChromaVectorIndex, open_vectors

log = logging.getLogger(__name__)

# How long a search waits for a write in this process to finish before it searches without catching up.
CATCH_UP_WAIT_S = 1.0

# Where an ingestion has got: the file, its phase and the fraction of the whole batch done.
Progress = Callable[[IngestProgress], None]
# embed_chunks reports per batch: the fraction of its chunks embedded, and that in words.
BatchProgress = Callable[[float, str], None]


def no_progress(_update: IngestProgress) -> None:
    pass


@dataclass
class KnowledgeStore:
    """The three stores that must agree, and the one lock that serialises writes to them."""

    catalog: Catalog
    vectors: ChromaVectorIndex
    keywords: KeywordIndex
    embedder: Embedder
    write_lock: threading.Lock
    files: FileStore | None = None  # the uploaded files (None: not kept; citations then show text only)
    _caught_up: int = field(default=-1, init=False, repr=False)  # the catalog version catch_up last reached

    @classmethod
    def open(
        cls, folder: Path, embedder: Embedder, store: StoreSettings | None = None, database: Database | None = None
    ) -> KnowledgeStore:
        """The stores under ``folder`` (created if missing), with vectors in ``embedder``'s collections: on the
        Chroma server ``store`` names, else (and with no ``store``) embedded under ``folder``. The catalog is in
        ``database`` when given (replicas share it), else ``folder/catalog.sqlite3``; the kept files in
        ``store.files_dir`` when set, else ``folder/files``.

        Raises:
            ConfigError: ``store`` names a Chroma server that does not answer, or PostgreSQL keywords without
                ``database``.
        """
        settings = store or StoreSettings()
        return cls(
            catalog=Catalog(database if database is not None else folder / "catalog.sqlite3").start(),
            vectors=open_vectors(settings, folder, embedder.name),
            keywords=open_keywords(settings.keywords, folder / "bm25", database),
            embedder=embedder,
            write_lock=threading.Lock(),
            files=FileStore(settings.files_dir or folder / "files"),
        )

    def refresh_keywords(self) -> None:
        """Rebuild BM25 from the catalog if the catalog changed since it was built (or the tokenizer did)."""
        with self.write_lock:
            self._refresh_keywords_locked()

    def _refresh_keywords_locked(self) -> None:
        # The version is read before the chunks: a replica writing in between then leaves BM25 marked older
        # than what it holds (rebuilt again next time), never newer than it is (stale until the next write).
        version = self.catalog.version
        if self.keywords.version != version:
            self.keywords.rebuild(self.catalog.all_chunks(), version, self.catalog.chunk_kbs())

    def catch_up(self, version: int) -> bool:
        """Read your writes: bring what this process keeps of the stores up to the catalog ``version`` a search
        has just read, before it searches. True when they are there.

        Another replica (or this one, between the files of a batch) may have written since the keyword index was
        built and the vector counts were taken; the follower's poll would catch up within seconds, but a user
        behind a balancer expects an upload that has returned to be found at once, and a delete to be gone.
        The vector counts are dropped (counted again by the next search), the keyword index is rebuilt if it is
        behind. The rebuild waits at most ``CATCH_UP_WAIT_S`` for the write lock: an upload in progress here
        holds it, and the search then runs on what there is (False: its result is not worth caching)."""
        if version == self._caught_up:
            return True
        self.vectors.forget_counts()
        if self.keywords.version != version:
            if not self.write_lock.acquire(timeout=CATCH_UP_WAIT_S):
                return False
            try:
                self._refresh_keywords_locked()
            finally:
                self.write_lock.release()
        if self.keywords.version != version:  # another write came in meanwhile: the next search catches up
            return False
        self._caught_up = version
        return True

    def reconcile(self, progress: Progress = no_progress, leave: Callable[[str], bool] | None = None) -> None:
        """Make vectors and keywords match the catalog (after a crash, an embedder change, or an upgrade
        from before knowledge bases: vectors with a missing or wrong ``kb`` tag are re-tagged in place).
        The chunks without vectors in a base ``leave`` names are left to the background (``ragapp.enrich``)."""
        with self.write_lock, self.catalog.database.mutex(WRITES):
            chunks = self.catalog.all_chunks()
            kb_of = self.catalog.chunk_kbs()
            wanted = {c.chunk_id for c in chunks}
            tags = self.vectors.kb_tags()
            present = set(tags)
            stale = sorted(present - wanted)
            if stale:
                log.info("removing %d vectors with no catalog entry", len(stale))
                self.vectors.delete(stale)
            missing = [c for c in chunks if c.chunk_id not in present]
            if leave is not None:
                missing = [c for c in missing if not leave(kb_of.get(c.chunk_id, DEFAULT_KB))]
            if missing:
                log.info("embedding %d chunks missing from the vector index", len(missing))
                n = len(missing)
                vectors = embed_chunks(
                    self.embedder,
                    missing,
                    lambda f, m: progress(IngestProgress(None, "embed", f, m, round(f * n), n)),
                )
                self._add_vectors(missing, vectors, kb_of)
            if self.files is not None:
                for orphan in self.files.orphans(d.doc_id for d in self.catalog.documents()):
                    log.info("removing %s: no document of the catalog is kept in it", orphan.name)
                    orphan.unlink(missing_ok=True)
            retag = {cid: kb for cid, kb in kb_of.items() if cid in present and tags[cid] != kb}
            if retag:
                log.info("re-tagging %d vectors with their knowledge base", len(retag))
                self.vectors.set_kbs(retag)
        self.refresh_keywords()

    def _add_vectors(self, chunks: Sequence[Chunk], vectors: np.ndarray, kb_of: dict[str, str]) -> None:
        self.vectors.add(
            [c.chunk_id for c in chunks],
            vectors,
            [c.doc_id for c in chunks],
            [language_of(c.text) for c in chunks],
            [kb_of.get(c.chunk_id, DEFAULT_KB) for c in chunks],
        )

    def embed_missing(self, chunk_ids: Sequence[str]) -> int:
        """Embed those of ``chunk_ids`` the catalog holds and the vector index lacks, and add them (reconcile's
        work, a batch at a time: the background enrichment's ``vectors`` step). The embedding runs outside the
        write lock, so uploads and searches go on meanwhile; the vectors go in under it, for the chunks still in
        the catalog then (one deleted meanwhile is skipped). Returns how many of ``chunk_ids`` now have a vector."""
        present = self.vectors.has(chunk_ids)
        todo = [c for cid, c in self.catalog.chunks(chunk_ids).items() if cid not in present]
        if todo:
            vectors = embed_chunks(self.embedder, todo, lambda _f, _m: None)
            with self.write_lock, self.catalog.database.mutex(WRITES):
                kept = self.catalog.chunks(c.chunk_id for c in todo)
                docs = {d: self.catalog.document(d) for d in {c.doc_id for c in kept.values()}}
                kb_of = {cid: doc.kb for cid, c in kept.items() if (doc := docs[c.doc_id]) is not None}
                rows = [i for i, c in enumerate(todo) if c.chunk_id in kept]
                self._add_vectors([todo[i] for i in rows], vectors[rows], kb_of)
        return len(self.vectors.has(chunk_ids))


# Held while an upload writes its vectors and then the catalog, and while a start reconciles the two: until the
# catalog commits, the new vectors look like leftovers of a crash to a reconcile in another replica.
WRITES = "catalog:writes"


def embed_chunks(embedder: Embedder, chunks: Sequence[Chunk], progress: BatchProgress, batch: int = 32) -> np.ndarray:
    """Vectors for ``chunks``, in order, reporting progress per batch. Writes nothing."""
    parts = []
    for start in range(0, len(chunks), batch):
        part = chunks[start : start + batch]
        parts.append(embedder.embed_passages([index_text(c) for c in part]))
        progress((start + len(part)) / len(chunks), f"embedded {start + len(part)}/{len(chunks)} chunks")
    return np.concatenate(parts) if parts else np.zeros((0, 1), dtype=np.float32)
