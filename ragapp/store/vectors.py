"""Vector index: Chroma collections holding one vector per chunk, embedded (a folder) or on a Chroma server.

Embeddings are always passed in: Chroma must never embed on its own (it would try to download a model).
Collections are per embedder (switching models never mixes vector spaces) and per language: the vector
channel ranks each language on its own (see ``VectorChannel``), and an unfiltered HNSW query on a
language's own collection costs a fraction of a metadata-filtered query on a shared one. Each vector's
metadata holds its document, language and knowledge base (``kb``), so searches can be scoped without
the catalog. The same collections, ids and metadata live in an embedded ``PersistentClient`` folder (the
default) or on a Chroma server (``RAGAPP_STORE__CHROMA_URL``); ``RAGAPP_STORE__CHROMA_PREFIX`` starts every
collection name, so several deployments can share one server without seeing each other's vectors.
"""

from __future__ import annotations

import logging
import re
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import urlsplit

import numpy as np

from ragapp.core.errors import ConfigError
from ragapp.core.lang import LANGUAGES
from ragapp.core.lifecycle import NotStartedError, started
from ragapp.core.types import DEFAULT_KB

if TYPE_CHECKING:
    from ragapp.config import StoreSettings

log = logging.getLogger(__name__)

_BATCH = 1000


SHARED_COUNT_TTL_S = 2.0


class ChromaVectorIndex:
    """One collection per language for ``embedder_name``, in ``client`` (embedded or a server's)."""

    def __init__(self, client: Any, embedder_name: str, prefix: str = "") -> None:
        self._client = client
        self._prefix = prefix
        self._base = prefix + "chunks-" + re.sub(r"[^a-zA-Z0-9._-]", "-", embedder_name)[:60]
        self._started: dict[str, Any] | None = None
        self._counts: dict[str, int] = {}
        self._counted_at: dict[str, float] = {}
        # On a server other replicas write too, so counts kept here go stale: there a collection is only skipped
        # as empty while its count is younger than ``SHARED_COUNT_TTL_S`` (a query of an empty collection over
        # HTTP costs as much as one with hits, about 3 ms on loopback).
        self.shared = False

    def start(self) -> Self:
        """Create the collections (or find them), move vectors from an older layout into them and count them;
        a second call does nothing. ``embedded`` and ``remote`` start the index they return."""
        if self._started is None:
            self._started = {
                lang: self._client.get_or_create_collection(
                    name=f"{self._base}-{lang}", metadata={"hnsw:space": "cosine"}, embedding_function=None
                )
                for lang in LANGUAGES
            }
            self._migrate_shared_collection(self._base)
            self._recount()
        return self

    @property
    def _collections(self) -> dict[str, Any]:
        return started(self, self._started)

    @property
    def client(self) -> Any:
        """The Chroma client (embedded or a server's) and the prefix of this deployment's collections: users'
        memories keep their vectors in a collection of their own beside these (``ragapp.store.memory_vectors``)."""
        return self._client

    @property
    def prefix(self) -> str:
        return self._prefix

    @classmethod
    def embedded(cls, directory: Path, embedder_name: str, prefix: str = "") -> ChromaVectorIndex:
        """Collections in a Chroma folder inside this process (created if missing)."""
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        directory.mkdir(parents=True, exist_ok=True)
        client = chromadb.PersistentClient(path=str(directory), settings=ChromaSettings(anonymized_telemetry=False))
        return cls(client, embedder_name, prefix).start()

    @classmethod
    def remote(cls, store: StoreSettings, embedder_name: str) -> ChromaVectorIndex:
        """Collections on the Chroma server at ``store.chroma_url``.

        Raises:
            ConfigError: the URL is malformed or the server does not answer (the message names both).
        """
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        url = store.chroma_url
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                f"RAGAPP_STORE__CHROMA_URL={url!r} is not a server address: use http://host:port or https://host."
            )
        ssl = parts.scheme == "https"
        token = store.chroma_token.get_secret_value()
        options: dict[str, Any] = {"anonymized_telemetry": False}
        if token:  # sent as "Authorization: Bearer <token>", the header Chroma's token auth reads by default
            options["chroma_client_auth_provider"] = "chromadb.auth.token_authn.TokenAuthClientProvider"
            options["chroma_client_auth_credentials"] = token
        try:
            client = chromadb.HttpClient(
                host=parts.hostname,
                port=parts.port or (443 if ssl else 8000),
                ssl=ssl,
                settings=ChromaSettings(**options),
                tenant=store.chroma_tenant,
                database=store.chroma_database,
            )
            index = cls(client, embedder_name, store.chroma_prefix).start()
        except Exception as exc:
            raise ConfigError(
                f"The Chroma server at {url} (RAGAPP_STORE__CHROMA_URL) did not answer: {exc}. Start it (e.g. "
                "`chroma run --path <folder> --port 8000`), fix the address or the token, or leave the setting "
                "empty to keep the vectors in the state folder."
            ) from exc
        log.info("vectors on the Chroma server at %s", url)
        index.shared = True
        return index

    def _migrate_shared_collection(self, name: str) -> None:
        """Move vectors from the single collection of earlier versions into the per-language ones."""
        if name not in {c.name for c in self._client.list_collections()}:
            return
        old = self._client.get_collection(name, embedding_function=None)
        total = old.count()
        log.info("moving %d vectors into per-language collections", total)
        for offset in range(0, total, _BATCH):
            got = old.get(include=["embeddings", "metadatas"], limit=_BATCH, offset=offset)
            metas = [dict(m or {}) for m in (got.get("metadatas") or [])]
            embeddings = got.get("embeddings")
            if embeddings is None or not got["ids"]:
                continue
            vectors = np.asarray(embeddings, dtype=np.float32)
            self.add(
                list(got["ids"]),
                vectors,
                [str(m.get("doc_id", "")) for m in metas],
                [str(m.get("lang", "en")) for m in metas],
                [str(m.get("kb", DEFAULT_KB)) for m in metas],
            )
        self._client.delete_collection(name)

    def forget_counts(self) -> None:
        """On a shared server, count every collection again before the next search skips it as empty: the
        catalog says another replica has written (see ``KnowledgeStore.catch_up``)."""
        self._counted_at = dict.fromkeys(self._collections, float("-inf"))

    def _recount(self) -> None:
        self._counts = self._count_each()
        self._counted_at = {lang: time.monotonic() for lang in self._collections}

    def _count_each(self) -> dict[str, int]:
        return {lang: int(c.count()) for lang, c in self._collections.items()}

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
        languages = [lang if lang in self._collections else "en" for lang in (languages or ["en"] * len(chunk_ids))]
        kbs = kbs or [DEFAULT_KB] * len(chunk_ids)
        rows: dict[str, list[int]] = defaultdict(list)
        for i, lang in enumerate(languages):
            rows[lang].append(i)
        for lang, positions in rows.items():
            for start in range(0, len(positions), _BATCH):
                part = positions[start : start + _BATCH]
                self._collections[lang].upsert(
                    ids=[chunk_ids[i] for i in part],
                    embeddings=vectors[part].tolist(),
                    metadatas=[{"doc_id": doc_ids[i], "lang": lang, "kb": kbs[i]} for i in part],
                )
        self._recount()

    def delete(self, chunk_ids: list[str]) -> None:
        if chunk_ids:
            for collection in self._collections.values():
                collection.delete(ids=chunk_ids)
            self._recount()

    def ids(self) -> set[str]:
        return {cid for c in self._collections.values() for cid in c.get(include=[])["ids"]}

    def has(self, chunk_ids: Iterable[str]) -> set[str]:
        """Those of ``chunk_ids`` that have a vector (read by id, a batch at a time: not the whole index)."""
        ids = list(dict.fromkeys(chunk_ids))
        found: set[str] = set()
        for collection in self._collections.values():
            for start in range(0, len(ids), _BATCH):
                found.update(collection.get(ids=ids[start : start + _BATCH], include=[])["ids"])
        return found

    def kb_tags(self) -> dict[str, str | None]:
        """Every vector's knowledge base tag, by chunk id (None: written before knowledge bases existed)."""
        tags: dict[str, str | None] = {}
        for collection in self._collections.values():
            found = collection.get(include=["metadatas"])
            metadatas = found.get("metadatas")
            for i, cid in enumerate(found["ids"]):
                kb = (metadatas[i] or {}).get("kb") if metadatas else None
                tags[cid] = kb if isinstance(kb, str) else None
        return tags

    def set_kbs(self, kb_of: Mapping[str, str]) -> None:
        """Re-tag existing vectors with their knowledge base (metadata only: nothing is re-embedded)."""
        ids = list(kb_of)
        for collection in self._collections.values():
            for start in range(0, len(ids), _BATCH):
                mine = collection.get(ids=ids[start : start + _BATCH], include=[])["ids"]
                by_kb: dict[str, list[str]] = defaultdict(list)
                for cid in mine:
                    by_kb[kb_of[cid]].append(cid)
                for kb, batch in by_kb.items():
                    # Chroma merges updated metadata into the stored one, so doc_id and lang are kept.
                    collection.update(ids=batch, metadatas=[{"kb": kb}] * len(batch))

    def count(self) -> int:
        if self._started is None:
            raise NotStartedError(self)
        return sum(self._count_each().values() if self.shared else self._counts.values())

    def _count_for_search(self, lang: str) -> int:
        """How many vectors ``lang``'s collection holds, as far as a search needs to know (0: skip it): exact in
        this process's own store; on a shared server the last count, counted again while it is 0 and at least
        ``SHARED_COUNT_TTL_S`` old (a collection that had vectors is searched, and Chroma answers fewer hits than
        asked for when it has fewer)."""
        count = self._counts.get(lang, 0)
        if not self.shared or count > 0:
            return count
        if time.monotonic() - self._counted_at[lang] >= SHARED_COUNT_TTL_S:
            self._counts[lang] = count = int(self._collections[lang].count())
            self._counted_at[lang] = time.monotonic()
        return count

    def search(
        self,
        vector: np.ndarray,
        top_k: int,
        language: str | None = None,
        kbs: frozenset[str] | None = None,
        docs: frozenset[str] | None = None,
    ) -> list[tuple[str, float]]:
        """(chunk_id, cosine similarity) pairs, best first. ``language`` keeps only chunks in that language,
        ``kbs`` only chunks of those knowledge bases, ``docs`` only chunks of those documents (None: all).
        Chroma applies the filter before the nearest-neighbour search, so a filter still gets ``top_k`` hits."""
        if (kbs is not None and not kbs) or (docs is not None and not docs):
            return []
        langs = [language] if language else list(self._collections)
        query = [np.asarray(vector, dtype=np.float32).tolist()]
        hits: list[tuple[str, float]] = []
        for lang in langs:
            total = self._count_for_search(lang)
            if total == 0:  # skipping a collection known to be empty saves a query
                continue
            wanted = top_k if self.shared else min(top_k, total)  # a shared count may be out of date
            result = self._collections[lang].query(
                query_embeddings=query, n_results=wanted, where=_where(kbs, docs), include=["distances"]
            )
            distances = (result.get("distances") or [[]])[0]
            hits += [(cid, 1.0 - float(d)) for cid, d in zip(result["ids"][0], distances, strict=True)]
        if len(langs) > 1:
            hits.sort(key=lambda hit: -hit[1])
        return hits[:top_k]


def open_vectors(store: StoreSettings, folder: Path, embedder_name: str) -> ChromaVectorIndex:
    """The vector index the settings ask for: on the Chroma server if ``store.chroma_url`` is set, otherwise
    embedded under ``folder / "chroma"``."""
    if store.chroma_url:
        return ChromaVectorIndex.remote(store, embedder_name)
    return ChromaVectorIndex.embedded(folder / "chroma", embedder_name, store.chroma_prefix)


def _where(kbs: frozenset[str] | None, docs: frozenset[str] | None = None) -> dict[str, Any] | None:
    """The Chroma metadata filter for a knowledge-base scope and a set of documents (None: no filter)."""
    conditions = [
        {field: values[0]} if len(values) == 1 else {field: {"$in": values}}
        for field, values in (("kb", sorted(kbs or ())), ("doc_id", sorted(docs or ())))
        if values
    ]
    if not conditions:
        return None
    return conditions[0] if len(conditions) == 1 else {"$and": conditions}
