"""Vector index: an embedded, persistent Chroma collection holding one vector per chunk.

Embeddings are always passed in: Chroma must never embed on its own (it would try to download a model).
One collection per embedder, so switching models never mixes vector spaces. Each vector's metadata
holds its document, language and knowledge base (``kb``), so searches can be scoped without the catalog.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ragapp.types import DEFAULT_KB

_BATCH = 1000


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
        self,
        chunk_ids: list[str],
        vectors: np.ndarray,
        doc_ids: list[str],
        languages: list[str] | None = None,
        kbs: list[str] | None = None,
    ) -> None:
        """Upsert one vector per chunk, tagged with its document, language and knowledge base."""
        if not chunk_ids:
            return
        languages = languages or ["en"] * len(chunk_ids)
        kbs = kbs or [DEFAULT_KB] * len(chunk_ids)
        metadatas = [{"doc_id": d, "lang": lang, "kb": kb} for d, lang, kb in zip(doc_ids, languages, kbs, strict=True)]
        for start in range(0, len(chunk_ids), _BATCH):
            end = start + _BATCH
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

    def kb_tags(self) -> dict[str, str | None]:
        """Every vector's knowledge base tag, by chunk id (None: written before knowledge bases existed)."""
        found = self._collection.get(include=["metadatas"])
        metadatas = found.get("metadatas")
        tags: dict[str, str | None] = {}
        for i, cid in enumerate(found["ids"]):
            kb = (metadatas[i] or {}).get("kb") if metadatas else None
            tags[cid] = kb if isinstance(kb, str) else None
        return tags

    def set_kbs(self, kb_of: Mapping[str, str]) -> None:
        """Re-tag existing vectors with their knowledge base (metadata only: nothing is re-embedded)."""
        by_kb: dict[str, list[str]] = defaultdict(list)
        for cid, kb in kb_of.items():
            by_kb[kb].append(cid)
        for kb, ids in by_kb.items():
            for start in range(0, len(ids), _BATCH):
                batch = ids[start : start + _BATCH]
                # Chroma merges updated metadata into the stored one, so doc_id and lang are kept.
                self._collection.update(ids=batch, metadatas=[{"kb": kb}] * len(batch))

    def count(self) -> int:
        return int(self._collection.count())

    def search(
        self, vector: np.ndarray, top_k: int, language: str | None = None, kbs: frozenset[str] | None = None
    ) -> list[tuple[str, float]]:
        """(chunk_id, cosine similarity) pairs, best first. ``language`` keeps only chunks in that language,
        ``kbs`` only chunks of those knowledge bases (None: all of them)."""
        total = self.count()
        if total == 0 or (kbs is not None and not kbs):
            return []
        result = self._collection.query(
            query_embeddings=[np.asarray(vector, dtype=np.float32).tolist()],
            n_results=min(top_k, total),
            where=_where(language, kbs),
            include=["distances"],
        )
        ids = result["ids"][0]
        distances = (result.get("distances") or [[]])[0]
        return [(cid, 1.0 - float(dist)) for cid, dist in zip(ids, distances, strict=True)]


def _where(language: str | None, kbs: frozenset[str] | None) -> dict[str, Any] | None:
    """The Chroma metadata filter for a language and a knowledge-base scope (None: no filter)."""
    conditions: list[dict[str, Any]] = []
    if language:
        conditions.append({"lang": language})
    if kbs is not None:
        names = sorted(kbs)
        conditions.append({"kb": names[0]} if len(names) == 1 else {"kb": {"$in": names}})
    if not conditions:
        return None
    return conditions[0] if len(conditions) == 1 else {"$and": conditions}
