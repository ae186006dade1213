"""Vector index: an embedded, persistent Chroma collection holding one vector per chunk.

Embeddings are always passed in: Chroma must never embed on its own (it would try to download a model).
One collection per embedder, so switching models never mixes vector spaces.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np


class ChromaVectorIndex:
    def __init__(self, directory: Path, embedder_name: str) -> None:
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        directory.mkdir(parents=True, exist_ok=True)
        self._client = chromadb.PersistentClient(
            path=str(directory), settings=ChromaSettings(anonymized_telemetry=False)
        )
        name = "chunks-" + re.sub(r"[^a-zA-Z0-9._-]", "-", embedder_name)[:60]
        self._collection = self._client.get_or_create_collection(
            name=name, metadata={"hnsw:space": "cosine"}, embedding_function=None
        )

    def add(
        self, chunk_ids: list[str], vectors: np.ndarray, doc_ids: list[str], languages: list[str] | None = None
    ) -> None:
        if not chunk_ids:
            return
        languages = languages or ["en"] * len(chunk_ids)
        metadatas = [{"doc_id": d, "lang": lang} for d, lang in zip(doc_ids, languages, strict=True)]
        for start in range(0, len(chunk_ids), 1000):
            end = start + 1000
            self._collection.upsert(
                ids=chunk_ids[start:end],
                embeddings=vectors[start:end].tolist(),
                metadatas=metadatas[start:end],  # type: ignore[arg-type]
            )

    def delete(self, chunk_ids: list[str]) -> None:
        if chunk_ids:
            self._collection.delete(ids=chunk_ids)

    def ids(self) -> set[str]:
        return set(self._collection.get(include=[])["ids"])

    def count(self) -> int:
        return int(self._collection.count())

    def search(
        self, vector: np.ndarray, top_k: int, language: str | None = None, kbs: frozenset[str] | None = None
    ) -> list[tuple[str, float]]:
        """(chunk_id, cosine similarity) pairs, best first; ``language`` keeps only chunks in that language."""
        total = self.count()
        if total == 0:
            return []
        result = self._collection.query(
            query_embeddings=[np.asarray(vector, dtype=np.float32).tolist()],
            n_results=min(top_k, total),
            where={"lang": language} if language else None,
            include=["distances"],
        )
        ids = result["ids"][0]
        distances = (result.get("distances") or [[]])[0]
        return [(cid, 1.0 - float(dist)) for cid, dist in zip(ids, distances, strict=True)]
