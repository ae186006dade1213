"""The Engine: one object over the shared parts, offering them as facets.

- ``chat``: questions in, events out (``Chat``);
- ``library``: documents and knowledge bases (``Library``);
- ``intents``: the intent tree and routing tests (``Intents``);
- ``observability``: traces and test cases (``Observability``);
- ``admin``: users, knowledge-base access and the settings view (``Admin``).

The UI (and tests, and the evaluation commands) talk to these facets only. Build one with
``ragapp.engine.build.build_engine``.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ragapp.config import Settings
from ragapp.core.access import LOCAL_ACTOR, Actor
from ragapp.core.errors import AccessDenied, LoginRefused
from ragapp.db import Database
from ragapp.engine.accounts import Accounts
from ragapp.engine.admin import Admin
from ragapp.engine.chat import Chat
from ragapp.engine.conversations import Conversations
from ragapp.engine.intents import Intents
from ragapp.engine.library import Library
from ragapp.engine.observability import Observability
from ragapp.ingest.pipeline import KnowledgeStore
from ragapp.models.llm import LLM
from ragapp.retrieval.pipeline import RetrievalPipeline
from ragapp.store.signing import Signer


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
        conversations: Conversations,
        store: KnowledgeStore,
        retrieval: RetrievalPipeline,
        llm: LLM,
        closers: Sequence[Closeable] = (),
        accounts: Accounts | None = None,
        signer: Signer | None = None,
        admin: Admin | None = None,
        database: Database | None = None,
    ) -> None:
        self.settings = settings
        self.database = database  # the PostgreSQL database replicas share; None: SQLite files in the state dir
        self.accounts = accounts  # None: accounts off, one local user
        # Signs the ids browsers keep (owner of traces and test cases); in-memory when none is given (tests).
        self.signer = signer or Signer(secrets.token_bytes(32))
        self.chat = chat
        self.library = library
        self.intents = intents
        self.observability = observability
        self.conversations = conversations
        self.admin = admin or Admin(settings, accounts.store if accounts is not None else None, store.catalog)
        self._store = store
        self._retrieval = retrieval
        self._llm = llm
        self._closers = tuple(closers)  # closed in this order, after the facets' stores
        self.warming = False  # True while ``warm_up`` runs (the API's /readyz says not ready yet)

    def actor(self, username: str | None) -> Actor:
        """Who a request acts for: with accounts off the local user; else the signed-in user as the users file
        has them now (a changed role or a removed user counts from their next action)."""
        if self.accounts is None:
            return LOCAL_ACTOR
        record = self.accounts.store.get(username) if username else None
        if record is None:
            raise AccessDenied("Sign in first.")
        return record.actor

    def login(self, name: str, password: str, client: str = "") -> bool:
        """For Gradio's login page: True when ``name`` signs in (refusals are throttled and logged)."""
        if self.accounts is None:
            return False
        try:
            self.accounts.login(name, password, client)
        except LoginRefused:
            return False
        return True

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
        self.warming = True
        try:
            self._store.embedder.embed_queries(["warm up"])
            warm = getattr(self._llm, "load", None)
            if callable(warm):
                warm()
                if self.settings.workflow.route:
                    self.intents.warm_up()  # the leaves embedded, the classifier's prompt prefix cached
                self.chat.warm_up()  # the answer instructions read, in both languages
        finally:
            self.warming = False

    def close(self) -> None:
        self.observability.close()
        self.conversations.close()
        for part in self._closers:
            part.close()
