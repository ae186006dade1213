"""The written questions as search entries that lead to their chunk, in both channels' terms: a Chroma collection
of their vectors, and a bm25s index of their words.

The vectors sit in one collection beside the chunks' (per embedder, like theirs), each entry tagged with its chunk,
document, knowledge base and language, so a scoped search filters them as it filters the chunks. Questions are
embedded as queries, not passages: a user's question is matched against a written question, the same kind of
text. The keyword index is small (a few questions per chunk) and kept in memory, rebuilt from the catalog's
table whenever its ``questions_version`` moved (another replica may have written): it is a read-side cache, like
the chunks' bm25s, and works the same with PostgreSQL keywords.

Every search returns at most one entry per chunk, its best question (a chunk is counted once however many of its
questions match), as (chunk id, score, question).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragapp.core.types import Docs, Scope
from ragapp.models.embedders import Embedder
from ragapp.store.tokenize import query_tokens, tokenize
from ragapp.store.vectors import _where
from ragapp.store.written_questions import IndexedQuestion, WrittenQuestion, WrittenQuestions

QuestionHit = tuple[str, float, str]  # chunk id, score, the written question that matched
_OVERFETCH = 3  # entries asked for per chunk wanted: a chunk's several questions may all match


class QuestionIndex:
    """The written questions of ``questions`` (the catalog's table) searchable by vector in ``client`` and by
    keywords in memory."""

    def __init__(self, questions: WrittenQuestions, client: Any, embedder: Embedder, prefix: str = "") -> None:
        self.questions = questions
        self._client = client
        self._embedder = embedder
        self._name = prefix + "questions-" + re.sub(r"[^a-zA-Z0-9._-]", "-", embedder.name)[:60]
        self._collection: Any = None
        self._lock = threading.Lock()
        self._keywords: tuple[int, Any, list[IndexedQuestion], dict[str, int]] | None = None

    @property
    def _vectors(self) -> Any:
        if self._collection is None:
            self._collection = self._client.get_or_create_collection(
                name=self._name, metadata={"hnsw:space": "cosine"}, embedding_function=None
            )
        return self._collection

    # -- writes --------------------------------------------------------------------------------

    def add(self, chunk_id: str, doc_id: str, kb: str, questions: Sequence[WrittenQuestion]) -> None:
        """Index ``chunk_id``'s kept questions (replacing what it had)."""
        self.delete([chunk_id])
        kept = [q for q in questions if q.kept]
        if not kept:
            return
        vectors = self._embedder.embed_queries([q.text for q in kept])
        self._vectors.upsert(
            ids=[f"{chunk_id}#q{i}" for i in range(len(kept))],
            embeddings=np.asarray(vectors, dtype=np.float32).tolist(),
            metadatas=[{"chunk_id": chunk_id, "doc_id": doc_id, "kb": kb, "lang": q.lang} for q in kept],
            documents=[q.text for q in kept],
        )

    def delete(self, chunk_ids: Sequence[str]) -> None:
        """Drop the entries of ``chunk_ids``."""
        ids = list(chunk_ids)
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            self._vectors.delete(where={"chunk_id": part[0]} if len(part) == 1 else {"chunk_id": {"$in": part}})

    def chunk_ids(self) -> set[str]:
        """The chunks with entries in the vector collection."""
        got = self._vectors.get(include=["metadatas"])
        return {str((m or {}).get("chunk_id")) for m in got.get("metadatas") or []}

    # -- searches ------------------------------------------------------------------------------

    def search_vector(self, vector: np.ndarray, top_k: int, kbs: Scope = None, docs: Docs = None) -> list[QuestionHit]:
        """The ``top_k`` chunks whose written questions are nearest ``vector`` (a query's), best first."""
        if (kbs is not None and not kbs) or (docs is not None and not docs):
            return []
        total = int(self._vectors.count())
        if total == 0:
            return []
        result = self._vectors.query(
            query_embeddings=[np.asarray(vector, dtype=np.float32).tolist()],
            n_results=min(total, top_k * _OVERFETCH),
            where=_where(kbs, docs),
            include=["distances", "metadatas", "documents"],
        )
        metas = (result.get("metadatas") or [[]])[0]
        texts = (result.get("documents") or [[]])[0]
        distances = (result.get("distances") or [[]])[0]
        hits = [
            (str((m or {}).get("chunk_id")), 1.0 - float(d), str(t))
            for m, t, d in zip(metas, texts, distances, strict=True)
        ]
        return _best_per_chunk(hits, top_k)

    def search_keywords(self, query: str, top_k: int, kbs: Scope = None, docs: Docs = None) -> list[QuestionHit]:
        """The ``top_k`` chunks whose written questions share the most (BM25-weighted) words with ``query``."""
        if (kbs is not None and not kbs) or (docs is not None and not docs):
            return []
        _version, retriever, entries, vocab = self._keyword_index()
        tokens = [t for t in query_tokens(query) if t in vocab]
        if retriever is None or not tokens:
            return []
        mask = np.array(
            [(kbs is None or e.kb in kbs) and (docs is None or e.doc_id in docs) for e in entries], dtype=np.float32
        )
        if not mask.any():
            return []
        found, scores = retriever.retrieve(
            [tokens], k=min(len(entries), top_k * _OVERFETCH), show_progress=False, weight_mask=mask
        )
        hits = [
            (entries[int(i)].chunk_id, float(s), entries[int(i)].text)
            for i, s in zip(np.asarray(found)[0], np.asarray(scores)[0], strict=True)
            if s > 0  # zero-score rows still come back from bm25s: not matches
        ]
        return _best_per_chunk(hits, top_k)

    def _keyword_index(self) -> tuple[int, Any, list[IndexedQuestion], dict[str, int]]:
        """The bm25s index of the kept questions, rebuilt when the table's version moved."""
        version = self.questions.version
        with self._lock:
            if self._keywords is None or self._keywords[0] != version:
                entries = self.questions.indexed()
                retriever = None
                vocab: dict[str, int] = {}
                if entries:
                    import bm25s

                    retriever = bm25s.BM25()
                    retriever.index([tokenize(e.text) or ["\u2400"] for e in entries], show_progress=False)
                    vocab = dict(getattr(retriever, "vocab_dict", {}) or {})
                self._keywords = (version, retriever, entries, vocab)
            return self._keywords


def _best_per_chunk(hits: Sequence[QuestionHit], top_k: int) -> list[QuestionHit]:
    """The hits (best first) with each chunk once, at its best question."""
    seen: set[str] = set()
    out: list[QuestionHit] = []
    for hit in hits:
        if hit[0] not in seen:
            seen.add(hit[0])
            out.append(hit)
    return out[:top_k]
