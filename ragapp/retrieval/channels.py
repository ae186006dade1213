"""Retrieval channels: each turns a question into ranked chunk ids. Registered by name in ``CHANNELS``;
a third channel is one new class plus a registration.

``retrieve()`` is the public, timed entry point; subclasses implement ``_retrieve()`` only.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ragapp.core.lang import LANGUAGES
from ragapp.core.types import ChannelHit, ChannelResult, Docs, Scope
from ragapp.models.embedders import Embedder
from ragapp.registry import Registry
from ragapp.retrieval.fusion import to_hits
from ragapp.store.keyword_index import KeywordIndex
from ragapp.store.question_index import QuestionHit, QuestionIndex
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

    def __init__(self, embedder: Embedder, index: ChromaVectorIndex, questions: QuestionIndex | None = None) -> None:
        self._embedder = embedder
        self._index = index
        self._questions = questions

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
        hits = to_hits([(cid, -neg) for _r, neg, cid, _l in interleaved], [lang for *_, lang in interleaved])
        if self._questions is None:
            return hits
        return with_questions(hits, self._questions.search_vector(vector, top_k, kbs, docs), top_k)


class KeywordChannel(Channel):
    """Keyword search (bm25s, or PostgreSQL full text: RAGAPP_STORE__KEYWORDS) over jieba-segmented Chinese and
    stemmed English words."""

    name = "keyword"

    def __init__(self, index: KeywordIndex, questions: QuestionIndex | None = None) -> None:
        self._index = index
        self._questions = questions

    def _retrieve(self, query: str, top_k: int, kbs: Scope, docs: Docs = None) -> list[ChannelHit]:
        hits = to_hits(self._index.search(query, top_k, kbs=kbs, docs=docs))
        if self._questions is None:
            return hits
        return with_questions(hits, self._questions.search_keywords(query, top_k, kbs, docs), top_k)


QUESTIONS_GROUP = "questions"  # the score group of hits found through a written question (see ``ChannelHit``)


def with_questions(hits: Sequence[ChannelHit], questions: Sequence[QuestionHit], top_k: int) -> list[ChannelHit]:
    """A channel's own ranking and its ranking of the written questions, interleaved by rank (the chunks' first,
    then the questions', at each rank), each chunk once at its best place, ``top_k`` at most. A chunk placed by
    a question says which (``via``). Interleaving by rank, not by score: a question's match with a question
    scores on another scale than a question's match with a passage (BM25 over a few words, or query-to-query
    cosines that sit higher than query-to-passage ones)."""
    merged: list[tuple[int, int, str, float, str | None, str | None]] = [
        (h.rank, 0, h.chunk_id, h.score, h.group, None) for h in hits
    ] + [(rank, 1, cid, score, QUESTIONS_GROUP, text) for rank, (cid, score, text) in enumerate(questions, start=1)]
    merged.sort(key=lambda m: (m[0], m[1]))
    seen: set[str] = set()
    out: list[ChannelHit] = []
    for _rank, _source, cid, score, group, via in merged:
        if cid in seen:
            continue
        seen.add(cid)
        out.append(ChannelHit(chunk_id=cid, rank=len(out) + 1, score=score, group=group, via=via))
    return out[:top_k]


@dataclass(frozen=True)
class ChannelDeps:
    """What channel factories may draw on."""

    embedder: Embedder
    vectors: ChromaVectorIndex
    keywords: KeywordIndex
    questions: QuestionIndex | None = None  # the written questions, searched too (None: off)


ChannelFactory = Callable[[ChannelDeps], Channel]
CHANNELS: Registry[ChannelFactory] = Registry("retrieval channel")
CHANNELS.register("vector")(lambda deps: VectorChannel(deps.embedder, deps.vectors, deps.questions))
CHANNELS.register("keyword")(lambda deps: KeywordChannel(deps.keywords, deps.questions))
