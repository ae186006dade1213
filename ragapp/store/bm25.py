"""Keyword index: bm25s over the catalog's chunks, persisted next to the catalog version and the tokenizer
version it was built with, and rebuilt when either changes.

One global index serves every knowledge base: a scoped search multiplies the scores by a 0/1 mask over
the chunks (bm25s's ``weight_mask``), so a small knowledge base still gets its full ``top_k`` even when
another one holds every strong match. A document filter masks the same way, by each chunk's document.
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Self

import numpy as np

from ragapp.core.chunks import doc_of_chunk_id
from ragapp.core.lifecycle import NotStartedError
from ragapp.core.types import DEFAULT_KB, Chunk
from ragapp.store.tokenize import TOKENIZER_VERSION, chunk_tokens, query_tokens

log = logging.getLogger(__name__)


class Bm25Index:
    """A bm25s index keyed by chunk id. Queries on an empty index return no hits."""

    def __init__(self, directory: Path) -> None:
        self._dir = directory
        self._lock = threading.RLock()
        self._retriever: object | None = None
        self._chunk_ids: list[str] = []
        self._kbs: np.ndarray = np.array([], dtype=np.str_)  # knowledge base of each chunk, by position
        self._docs: np.ndarray = np.array([], dtype=np.str_)  # document of each chunk, by position
        self._vocab: dict[str, int] = {}
        self._version = -1  # the catalog version indexed; -1: nothing usable, rebuild from the catalog
        self._started = False

    def start(self) -> Self:
        """Read the index saved under the directory, if there is a usable one; a second call does nothing."""
        if not self._started:
            self._load()
            self._started = True
        return self

    @property
    def version(self) -> int:
        """The catalog version the index holds (-1: none: rebuild from the catalog)."""
        if not self._started:
            raise NotStartedError(self)
        return self._version

    def _load(self) -> None:
        meta_path = self._dir / "meta.json"
        if not meta_path.exists():
            return
        try:
            import bm25s

            meta = json.loads(meta_path.read_text("utf-8"))
            if meta.get("tokenizer") != TOKENIZER_VERSION or "kbs" not in meta:
                # Tokens from another tokenizer would never match today's queries: stale, like a new catalog.
                log.info(
                    "BM25 index at %s was built with tokenizer %s (now %s); it will be rebuilt",
                    self._dir,
                    meta.get("tokenizer"),
                    TOKENIZER_VERSION,
                )
                return
            ids = list(meta["chunk_ids"])
            kbs = np.array(meta["kbs"], dtype=np.str_)
            if len(kbs) != len(ids):
                raise ValueError(f"{len(ids)} chunk ids but {len(kbs)} knowledge-base tags")
            # Indexes saved before documents were kept: a chunk's id names its document.
            docs = np.array(meta.get("docs") or [doc_of_chunk_id(cid) for cid in ids], dtype=np.str_)
            retriever = bm25s.BM25.load(str(self._dir / "index")) if ids else None
        except Exception as exc:  # a damaged index is rebuilt from the catalog, never fatal
            log.warning("BM25 index at %s is unreadable (%r); it will be rebuilt", self._dir, exc)
            return
        with self._lock:
            self._retriever, self._chunk_ids, self._kbs, self._docs = retriever, ids, kbs, docs
            self._vocab = dict(getattr(retriever, "vocab_dict", {}) or {})
            self._version = int(meta["version"])

    def rebuild(self, chunks: list[Chunk], version: int, kb_of: Mapping[str, str] | None = None) -> None:
        """Index ``chunks`` (the whole catalog) and persist, tagged with the catalog ``version``.

        ``kb_of`` maps chunk ids to their knowledge base; chunks it does not name are in the default one.
        """
        if not self._started:
            raise NotStartedError(self)
        import bm25s

        corpus = [chunk_tokens(c) for c in chunks]
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
        kbs = [(kb_of or {}).get(cid, DEFAULT_KB) for cid in ids]
        docs = [c.doc_id for c in chunks]
        meta = {"version": version, "tokenizer": TOKENIZER_VERSION, "chunk_ids": ids, "kbs": kbs, "docs": docs}
        (tmp / "meta.json").write_text(json.dumps(meta, ensure_ascii=False), "utf-8")
        with self._lock:
            shutil.rmtree(self._dir, ignore_errors=True)
            tmp.rename(self._dir)
            self._retriever, self._chunk_ids = retriever, ids
            self._kbs, self._docs = np.array(kbs, dtype=np.str_), np.array(docs, dtype=np.str_)
            self._vocab = dict(getattr(retriever, "vocab_dict", {}) or {})
            self._version = version

    def search(
        self, query: str, top_k: int, kbs: frozenset[str] | None = None, docs: frozenset[str] | None = None
    ) -> list[tuple[str, float]]:
        """(chunk_id, score) pairs with score > 0, best first; only chunks of the knowledge bases ``kbs`` and
        the documents ``docs`` (None: all of them)."""
        if not self._started:
            raise NotStartedError(self)
        with self._lock:
            retriever, ids, vocab, tags, owners = self._retriever, self._chunk_ids, self._vocab, self._kbs, self._docs
        tokens = [t for t in query_tokens(query) if t in vocab]
        if retriever is None or not tokens or not ids:
            return []
        mask: np.ndarray | None = None
        # Out-of-scope chunks score 0, and zero scores are dropped below, so whatever comes back is in scope; the
        # top_k are drawn from the chunks in scope alone.
        for allowed, of in ((kbs, tags), (docs, owners)):
            if allowed is not None:
                inside = np.isin(of, list(allowed)).astype(np.float32)
                mask = inside if mask is None else mask * inside
        if mask is not None and not mask.any():
            return []
        k = min(top_k, len(ids))
        docs, scores = retriever.retrieve(  # type: ignore[attr-defined]
            [tokens], k=k, show_progress=False, weight_mask=mask
        )
        hits = [(ids[int(d)], float(s)) for d, s in zip(np.asarray(docs)[0], np.asarray(scores)[0], strict=True)]
        # Zero-score rows still come back from bm25s; they are not matches and must not earn fusion credit.
        return [(cid, score) for cid, score in hits if score > 0]
