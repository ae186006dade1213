"""The vectors of users' memories: one Chroma collection of their own, never the documents' collections.

Kept apart so that a memory can never come back as a retrieved passage (the retrieval channels search only the
``chunks-*`` collections) and a document never as a memory. Each vector's metadata names its owner, and every
query is filtered by it: one user's question never reaches another's memories. Like the documents' vectors,
embeddings are always passed in (Chroma must never embed on its own).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np


class MemoryVectors:
    """The collection ``<prefix>memories-<embedder>`` in ``client`` (the one the documents' vectors use)."""

    def __init__(self, client: Any, embedder_name: str, prefix: str = "") -> None:
        name = prefix + "memories-" + re.sub(r"[^a-zA-Z0-9._-]", "-", embedder_name)[:60]
        self.name = name
        self._collection = client.get_or_create_collection(
            name=name, metadata={"hnsw:space": "cosine"}, embedding_function=None
        )

    def put(self, memory_id: str, owner: str, vector: np.ndarray) -> None:
        self._collection.upsert(
            ids=[memory_id], embeddings=[np.asarray(vector, dtype=np.float32).tolist()], metadatas=[{"owner": owner}]
        )

    def delete(self, memory_ids: list[str]) -> None:
        if memory_ids:
            self._collection.delete(ids=memory_ids)

    def search(self, owner: str, vector: np.ndarray, top_k: int) -> list[tuple[str, float]]:
        """(memory id, cosine similarity) of ``owner``'s memories nearest ``vector``, best first."""
        result = self._collection.query(
            query_embeddings=[np.asarray(vector, dtype=np.float32).tolist()],
            n_results=top_k,
            where={"owner": owner},
            include=["distances"],
        )
        ids = (result.get("ids") or [[]])[0]
        distances = (result.get("distances") or [[]])[0]
        return [(mid, 1.0 - float(d)) for mid, d in zip(ids, distances, strict=True)]
