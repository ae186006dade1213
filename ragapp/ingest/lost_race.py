"""An upload that lost the race to store the same bytes: the same friendly outcome as a sequential duplicate.

Replicas share the catalog, so two of them can both find a file new, embed it, and try to store it; the catalog
takes the first (``ContentAlreadyStored`` for the other). The loser has written vectors and kept the file under
the winner's ids already (ids come from the bytes), on the vector store and files folder replicas may share: what
it wrote over must be made the winner's again, not deleted.
"""

from __future__ import annotations

import logging
from typing import Protocol

import numpy as np

from ragapp.core.chunks import index_text
from ragapp.core.lang import language_of
from ragapp.core.types import Chunk, DocumentRecord, IngestResult, Said
from ragapp.models.embedders import Embedder
from ragapp.store.catalog import Catalog, ContentAlreadyStored
from ragapp.store.files import FileStore
from ragapp.store.vectors import ChromaVectorIndex

log = logging.getLogger(__name__)


class Stores(Protocol):
    """What of a ``KnowledgeStore`` this needs (named structurally: the pipeline imports this module)."""

    catalog: Catalog
    vectors: ChromaVectorIndex
    embedder: Embedder
    files: FileStore | None


def already_there(name: str, existing: DocumentRecord) -> Said:
    return Said("ingest.already_there", {"name": name, "doc": existing.name, "kb": existing.kb})


def lost_race(store: Stores, name: str, kb: str, lost: ContentAlreadyStored, chunks: list[Chunk]) -> IngestResult:
    """Undo what this upload wrote that the winner does not hold, and say the file is already there (called
    holding the write lock)."""
    catalog = store.catalog
    winner = lost.existing or catalog.document_by_hash(lost.content_hash)
    held = catalog.chunks(c.chunk_id for c in chunks)
    try:
        store.vectors.delete([c.chunk_id for c in chunks if c.chunk_id not in held])
        if winner is not None:
            _give_back(store, winner, chunks, held, kb)
    except Exception:
        log.warning("vectors not put right after a lost race; the next start reconciles them", exc_info=True)
    doc_id = chunks[0].doc_id if chunks else lost.content_hash[:16]
    if store.files is not None and catalog.document(doc_id) is None:  # the same path as the winner's file otherwise
        store.files.remove(doc_id)
    log.info("%s: another upload of the same file was stored first", name)
    if winner is None:  # stored and deleted again meanwhile
        said = Said("ingest.lost_race", {"name": name})
        return IngestResult(name, "duplicate", said.english, said=said)
    there = already_there(name, winner)
    return IngestResult(name, "duplicate", there.english, winner.doc_id, winner.chunk_count, said=there)


def _give_back(store: Stores, winner: DocumentRecord, ours: list[Chunk], held: dict[str, Chunk], kb: str) -> None:
    """Make the vectors this upload wrote over the winner's what the winner stored: same text, but the name (which
    ``index_text`` includes) and the knowledge base may differ. The catalog's chunks are the truth."""
    mine = {c.chunk_id: index_text(c) for c in ours}
    stale = [c for c in held.values() if mine[c.chunk_id] != index_text(c)]
    if stale:
        texts = [index_text(c) for c in stale]
        vectors = np.concatenate([store.embedder.embed_passages(texts[i : i + 32]) for i in range(0, len(texts), 32)])
        store.vectors.add(
            [c.chunk_id for c in stale], vectors, [c.doc_id for c in stale],
            [language_of(c.text) for c in stale], [winner.kb] * len(stale),
        )  # fmt: skip
    if winner.kb != kb:
        store.vectors.set_kbs(dict.fromkeys(held, winner.kb))
