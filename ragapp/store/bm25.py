"""Keyword index: bm25s over the catalog's chunks, persisted next to the catalog version it was built
from, and rebuilt only when that version changes."""

from __future__ import annotations

import json
import logging
import shutil
import threading
from pathlib import Path

import numpy as np

from ragapp.ingest.chunking import index_text
from ragapp.store.tokenize import tokenize
from ragapp.types import Chunk

log = logging.getLogger(__name__)


class Bm25Index:
    """A bm25s index keyed by chunk id. Queries on an empty index return no hits."""

    def __init__(self, directory: Path) -> None:
        self._dir = directory
        self._lock = threading.RLock()
        self._retriever: object | None = None
        self._chunk_ids: list[str] = []
        self._vocab: dict[str, int] = {}
        self.version = -1
        self._load()

    def _load(self) -> None:
        meta_path = self._dir / "meta.json"
        if not meta_path.exists():
            return
        try:
            import bm25s

            meta = json.loads(meta_path.read_text("utf-8"))
            ids = list(meta["chunk_ids"])
            retriever = bm25s.BM25.load(str(self._dir / "index")) if ids else None
        except Exception as exc:  # a damaged index is rebuilt from the catalog, never fatal
            log.warning("BM25 index at %s is unreadable (%r); it will be rebuilt", self._dir, exc)
            return
        with self._lock:
            self._retriever, self._chunk_ids, self.version = retriever, ids, int(meta["version"])
            self._vocab = dict(getattr(retriever, "vocab_dict", {}) or {})

    def rebuild(self, chunks: list[Chunk], version: int) -> None:
        """Index ``chunks`` (the whole catalog) and persist, tagged with the catalog ``version``."""
        import bm25s

        corpus = [tokenize(index_text(c)) for c in chunks]
        # bm25s rejects an all-empty corpus; keep a placeholder token so empty chunks still line up.
        corpus = [tokens or ["\u2400"] for tokens in corpus]
        retriever = bm25s.BM25() if chunks else None
        if retriever is not None:
            retriever.index(corpus, show_progress=False)
        tmp = self._dir.with_name(self._dir.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        if retriever is not None:
            retriever.save(str(tmp / "index"))
        ids = [c.chunk_id for c in chunks]
        (tmp / "meta.json").write_text(json.dumps({"version": version, "chunk_ids": ids}), "utf-8")
        with self._lock:
            shutil.rmtree(self._dir, ignore_errors=True)
            tmp.rename(self._dir)
            self._retriever, self._chunk_ids, self.version = retriever, ids, version
            self._vocab = dict(getattr(retriever, "vocab_dict", {}) or {})

    def search(self, query: str, top_k: int, kbs: frozenset[str] | None = None) -> list[tuple[str, float]]:
        """(chunk_id, score) pairs with score > 0, best first."""
        with self._lock:
            retriever, ids, vocab = self._retriever, self._chunk_ids, self._vocab
        tokens = [t for t in tokenize(query) if t in vocab]
        if retriever is None or not tokens or not ids:
            return []
        k = min(top_k, len(ids))
        docs, scores = retriever.retrieve([tokens], k=k, show_progress=False)  # type: ignore[attr-defined]
        hits = [(ids[int(d)], float(s)) for d, s in zip(np.asarray(docs)[0], np.asarray(scores)[0], strict=True)]
        # Zero-score rows still come back from bm25s; they are not matches and must not earn fusion credit.
        return [(cid, score) for cid, score in hits if score > 0]
