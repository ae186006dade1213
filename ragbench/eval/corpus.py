"""Index a BEIR corpus with the app's own parts (chunking, embedder, Chroma, bm25s, catalog), so the
evaluation measures what users get.

The store lives in a folder named after everything that shapes it (corpus file, chunking, embedder), so
``--cache`` reuses it across runs and a change of any of those builds a fresh one. Embedding is resumable:
vectors are written batch by batch, and a rerun embeds only the chunks Chroma does not have yet. A run that
searches by keyword only never embeds the corpus.
"""

from __future__ import annotations

import hashlib
import logging
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from ragapp.config import Settings
from ragapp.core.chunks import index_text
from ragapp.core.lang import language_of
from ragapp.core.types import Chunk, DocumentRecord, ParsedDocument, Section
from ragapp.ingest.chunking import chunk_document
from ragapp.ingest.pipeline import KnowledgeStore
from ragapp.models.embedders import load_embedder
from ragapp.store.catalog import Catalog, utc_now
from ragbench.eval.beir import Passage

log = logging.getLogger(__name__)

READY_KEY = "eval_corpus_ready"
EMBED_BATCH = 256  # vectors written to Chroma per step; an interrupted build resumes from the last one


@dataclass(frozen=True)
class IndexReport:
    folder: Path
    documents: int
    chunks: int
    reused: bool
    seconds: dict[str, float]  # chunk, embed, keywords


def corpus_key(corpus_file: Path, settings: Settings, embedder_name: str) -> str:
    # The content's hash, not the file's time: the same data copied or mounted again keeps its index.
    parts = [
        str(corpus_file.resolve()),
        str(corpus_file.stat().st_size),
        _sha256(corpus_file),
        str(settings.ingest.chunk_size),
        str(settings.ingest.chunk_overlap),
        embedder_name,
    ]
    if settings.embedding.max_chars:  # (absent otherwise, so caches built before the setting stay valid)
        parts.append(f"max_chars={settings.embedding.max_chars}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]


def _sha256(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def passage_chunks(passage: Passage, settings: Settings) -> list[Chunk]:
    """A BEIR passage as the app would chunk an uploaded file named after its title."""
    doc = ParsedDocument(name=f"{passage.title}.txt", file_type="txt", sections=(Section(passage.text),))
    return chunk_document(doc, passage.doc_id, settings.ingest.chunk_size, settings.ingest.chunk_overlap)


def content_hash(passage: Passage) -> str:
    """The catalog's content hash of a passage (what tells a store of this corpus from another)."""
    return hashlib.sha256(f"{passage.doc_id}\n{passage.text}".encode()).hexdigest()


def passage_record(passage: Passage, name: str, chunks: int) -> DocumentRecord:
    """A passage's catalog record, as an upload of a text file called ``name`` writes it."""
    size = len(passage.text.encode())
    return DocumentRecord(passage.doc_id, name, "txt", content_hash(passage), size, None, chunks, utc_now())


def build_index(
    corpus: Sequence[Passage],
    corpus_file: Path,
    settings: Settings,
    cache: Path | None,
    name: str,
    *,
    embed: bool = True,
) -> tuple[KnowledgeStore, IndexReport]:
    """Open the cached store for this corpus and settings, building (or finishing) it if needed.

    ``embed`` False (only keyword search will run): the catalog and BM25 are built, the vectors are not (a
    later run that needs them embeds them then); ``reused`` then means the catalog was there already."""
    embedder = load_embedder(settings)  # cheap: models load lazily
    key = corpus_key(corpus_file, settings, embedder.name)
    root = cache if cache is not None else Path(tempfile.mkdtemp(prefix="ragapp-eval-"))
    folder = root / f"{name}-{key}"
    store = KnowledgeStore.open(folder, embedder)
    seconds: dict[str, float] = {}
    ready = store.catalog.get_meta(READY_KEY) == key  # READY_KEY: catalog, vectors and keywords all built
    if not ready:
        if store.catalog.document_count() == 0:
            start = time.perf_counter()
            _write_catalog(store.catalog, corpus, settings)
            seconds["chunk"] = time.perf_counter() - start
        if embed:
            start = time.perf_counter()
            _embed_missing(store)
            seconds["embed"] = time.perf_counter() - start
        start = time.perf_counter()
        store.refresh_keywords()
        seconds["keywords"] = time.perf_counter() - start
        if embed:
            store.catalog.set_meta(READY_KEY, key)
    else:
        store.refresh_keywords()  # a tokenizer change since the cache was built means a rebuild
    reused = ready or (not embed and "chunk" not in seconds)
    report = IndexReport(folder, store.catalog.document_count(), store.catalog.chunk_count(), reused, seconds)
    return store, report


def _write_catalog(catalog: Catalog, corpus: Sequence[Passage], settings: Settings) -> None:
    with catalog.transaction() as conn:
        for passage in tqdm(corpus, desc="chunking", unit="doc", leave=False):
            chunks = passage_chunks(passage, settings)
            if not chunks:
                continue
            catalog.add_document(conn, passage_record(passage, f"{passage.title}.txt", len(chunks)), chunks)


def _embed_missing(store: KnowledgeStore) -> None:
    present = store.vectors.ids()
    missing = [c for c in store.catalog.all_chunks() if c.chunk_id not in present]
    if not missing:
        return
    with tqdm(total=len(missing), desc="embedding", unit="chunk") as bar:
        for start in range(0, len(missing), EMBED_BATCH):
            part = missing[start : start + EMBED_BATCH]
            vectors = store.embedder.embed_passages([index_text(c) for c in part])
            store.vectors.add(
                [c.chunk_id for c in part],
                vectors,
                [c.doc_id for c in part],
                [language_of(c.text) for c in part],
            )
            bar.update(len(part))
