"""The Engine: one object over the shared parts, offering them as facets.

- ``chat``: questions in, events out (``Chat``);
- ``library``: documents and knowledge bases (``Library``);
- ``intents``: the intent tree and routing tests (``Intents``);
- ``observability``: traces and test cases (``Observability``).

The UI (and tests, and the evaluation commands) talk to these facets only. Build one with
``ragapp.engine.build.build_engine``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ragapp.config import Settings
from ragapp.engine.chat import Chat
from ragapp.engine.intents import Intents
from ragapp.engine.library import Library
from ragapp.engine.observability import Observability
from ragapp.ingest.pipeline import KnowledgeStore
from ragapp.models.llm import LLM
from ragapp.retrieval.pipeline import RetrievalPipeline


class Closeable(Protocol):
    def close(self) -> None: ...


@dataclass(frozen=True)
class EngineStatus:
    llm: str
    embedder: str
    reranker: str
    reranking_enabled: bool
    documents: int
    chunks: int


class Engine:
    def __init__(
        self,
        settings: Settings,
        *,
        chat: Chat,
        library: Library,
        intents: Intents,
        observability: Observability,
        store: KnowledgeStore,
        retrieval: RetrievalPipeline,
        llm: LLM,
        closers: Sequence[Closeable] = (),
    ) -> None:
        self.settings = settings
        self.chat = chat
        self.library = library
        self.intents = intents
        self.observability = observability
        self._store = store
        self._retrieval = retrieval
        self._llm = llm
        self._closers = tuple(closers)  # closed in this order, after the facets' stores

    def status(self) -> EngineStatus:
        reranker = self._retrieval.reranker
        return EngineStatus(
            llm=self._llm.name,
            embedder=self._store.embedder.name,
            reranker=reranker.name,
            reranking_enabled=reranker.enabled,
            documents=self._store.catalog.document_count(),
            chunks=self._store.catalog.chunk_count(),
        )

    def warm_up(self) -> None:
        """Load the models now, so the first question does not pay for it."""
        self._store.embedder.embed_queries(["warm up"])
        warm = getattr(self._llm, "load", None)
        if callable(warm):
            warm()
            if self.settings.workflow.route:
                self.intents.warm_up()  # the leaves embedded, the classifier's prompt prefix cached
            self.chat.warm_up()  # the answer instructions read, in both languages

    def close(self) -> None:
        self.observability.close()
        for part in self._closers:
            part.close()
