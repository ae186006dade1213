"""Retrieval channels: each turns a question into ranked chunk ids. Registered by name in ``CHANNELS``;
a third channel is one new class plus a registration.

``retrieve()`` is the public, timed entry point; subclasses implement ``_retrieve()`` only.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ragapp.core.lang import LANGUAGES
from ragapp.core.types import ChannelHit, ChannelResult, Docs, Scope
from ragapp.models.embedders import Embedder
from ragapp.registry import Registry
from ragapp.retrieval.fusion import to_hits
from ragapp.store.keyword_index import KeywordIndex
from ragapp.store.vectors import ChromaVectorIndex


class Channel(ABC):
    name: str

    def retrieve(self, query: str, top_k: int, kbs: Scope = None, docs: Docs = None) -> ChannelResult:
        """The ``top_k`` best chunks for ``query`` among the knowledge bases ``kbs`` (None: all of them) and the
        documents ``docs`` (None: any; a filter's documents, searched before anything is cut)."""
        start = time.perf_counter()
        hits = self._retrieve(query, top_k, kbs, docs)
        return ChannelResult(self.name, tuple(hits), time.perf_counter() - start)

    @abstractmethod
    def _retrieve(self, query: str, top_k: int, kbs: Scope, docs: Docs = None) -> list[ChannelHit]: ...

    def close(self) -> None:  # noqa: B027 (most channels hold nothing: closing them does nothing)
        """Let go of what the channel holds open (a connection); the local channels hold nothing."""


class VectorChannel(Channel):
    """Dense retrieval: cosine similarity in Chroma, balanced across languages.

    Multilingual embedders score a same-language passage higher than an equally relevant passage in another
    language (with multilingual-e5, a Chinese question meets unrelated Chinese text at ~0.87 and its English
    answer at ~0.84). Ranking each language on its own and interleaving the lists by rank lets the best
    English passage compete with the best Chinese one. Scores stay raw cosines, for the relevance gate.
    """

    name = "vector"

    def __init__(self, embedder: Embedder, index: ChromaVectorIndex) -> None:
        self._embedder = embedder
        self._index = index

    def retrieve(self, query: str, top_k: int, kbs: Scope = None, docs: Docs = None) -> ChannelResult:
        # Timed in two steps: on a CPU the query embedding usually costs more than the search itself.
        start = time.perf_counter()
        vector = self._embedder.embed_queries([query])[0]
        embedded = time.perf_counter()
        hits = self._search(vector, top_k, kbs, docs)
        done = time.perf_counter()
        stages = {"embed": embedded - start, "search": done - embedded}
        return ChannelResult(self.name, tuple(hits), done - start, stages)

    def _retrieve(self, query: str, top_k: int, kbs: Scope, docs: Docs = None) -> list[ChannelHit]:
        return self._search(self._embedder.embed_queries([query])[0], top_k, kbs, docs)

    def _search(self, vector: np.ndarray, top_k: int, kbs: Scope, docs: Docs) -> list[ChannelHit]:
        per_language = [self._index.search(vector, top_k, language=lang, kbs=kbs, docs=docs) for lang in LANGUAGES]
        interleaved = sorted(
            (rank, -score, cid, lang)
            for lang, hits in zip(LANGUAGES, per_language, strict=True)
            for rank, (cid, score) in enumerate(hits)
        )[:top_k]
        return to_hits([(cid, -neg) for _r, neg, cid, _l in interleaved], [lang for *_, lang in interleaved])


class KeywordChannel(Channel):
    """Keyword search (bm25s, or PostgreSQL full text: RAGAPP_STORE__KEYWORDS) over jieba-segmented Chinese and
    stemmed English words."""

    name = "keyword"

    def __init__(self, index: KeywordIndex) -> None:
        self._index = index

    def _retrieve(self, query: str, top_k: int, kbs: Scope, docs: Docs = None) -> list[ChannelHit]:
        return to_hits(self._index.search(query, top_k, kbs=kbs, docs=docs))


@dataclass(frozen=True)
class ChannelDeps:
    """What channel factories may draw on."""

    embedder: Embedder
    vectors: ChromaVectorIndex
    keywords: KeywordIndex


ChannelFactory = Callable[[ChannelDeps], Channel]
CHANNELS: Registry[ChannelFactory] = Registry("retrieval channel")
CHANNELS.register("vector")(lambda deps: VectorChannel(deps.embedder, deps.vectors))
CHANNELS.register("keyword")(lambda deps: KeywordChannel(deps.keywords))
