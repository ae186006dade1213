"""The Engine: one object over the shared parts, offering them as facets.

- ``chat``: questions in, events out (``Chat``);
- ``library``: documents and knowledge bases (``Library``);
- ``intents``: the intent tree and routing tests (``Intents``);
- ``observability``: traces and test cases (``Observability``);
- ``admin``: users, knowledge-base access and the settings view (``Admin``);
- ``sign_ins``: the browsers signed in, kept in the database (``SignIns``);
- ``sync``: the folders and git repositories knowledge bases follow (``Sync``);
- ``enrichment``: each knowledge base's background indexing, its progress, pause and resume (``Enrichment``);
- ``memories``: each user's long-term memories, to list, edit and delete (``Memories``);
- ``audit``: the audit log, for admins (``AuditView``); every sign-in is recorded here, every change and
  question's scope in the facet that does it.

The UI (and tests, and the evaluation commands) talk to these facets only. Build one with
``ragapp.engine.build.build_engine``.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ragapp.accounts.service import Accounts, open_accounts
from ragapp.audit import AuditAction, AuditLog
from ragapp.config import Settings
from ragapp.core.access import LOCAL_ACTOR, Actor
from ragapp.core.errors import AccessDenied, LoginRefused, LoginThrottled
from ragapp.db import Database
from ragapp.engine.admin import Admin
from ragapp.engine.audit import AuditView
from ragapp.engine.chat import Chat
from ragapp.engine.conversations import Conversations
from ragapp.engine.enrichment import Enrichment
from ragapp.engine.intents import Intents
from ragapp.engine.library import Library
from ragapp.engine.memories import Memories
from ragapp.engine.observability import Observability
from ragapp.engine.sign_ins import SignIns
from ragapp.engine.sync import Sync
from ragapp.ingest.pipeline import KnowledgeStore
from ragapp.models.llm import LLM
from ragapp.models.pool import close_pools
from ragapp.retrieval.pipeline import RetrievalPipeline
from ragapp.store.owner_signature import Signer

log = logging.getLogger(__name__)


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
        sync: Sync | None = None,
        audit: AuditLog | None = None,
        memories: Memories | None = None,
        enrichment: Enrichment | None = None,
    ) -> None:
        self.settings = settings
        self.database = database  # the PostgreSQL database replicas share; None: SQLite files in the state dir
        self.accounts = accounts  # None: accounts off, one local user
        self._keys = accounts  # where API keys are checked; with accounts off, opened on the first key
        self._keys_lock = threading.Lock()
        # Signs the ids browsers keep (owner of traces and test cases); in-memory when none is given (tests).
        self.signer = signer or Signer(secrets.token_bytes(32))
        self.chat = chat
        self.library = library
        self.intents = intents
        self.observability = observability
        self.conversations = conversations
        self.memories = memories or Memories(settings, None, None, None)  # None: memory off
        self.admin = admin or Admin(settings, accounts)
        self.sign_ins = SignIns(accounts.sessions if accounts is not None else None)
        self.sync = sync  # None: an engine built without sync (``build_engine`` always gives one)
        self.enrichment = enrichment  # None: built without background enrichment (``build_engine`` gives one)
        self._audit = audit or AuditLog.off()
        self.audit = AuditView(self._audit)
        self._store = store
        self._retrieval = retrieval
        self._llm = llm
        self._closers = tuple(closers)  # closed in this order, after the facets' stores
        self.warming = False  # True while ``warm_up`` runs (the API's /readyz says not ready yet)

    def actor(self, username: str | None, client: str = "") -> Actor:
        """Who a request from the address ``client`` acts for: with accounts off the local user; else the
        signed-in user as the users file has them now (a changed role or a removed user counts from their next
        action)."""
        if self.accounts is None:
            return LOCAL_ACTOR.at(client)
        actor = self.accounts.actor(username) if username else None
        if actor is None:
            raise AccessDenied("Sign in first.")
        return actor.at(client)

    def key_user(self, key: str) -> str | None:
        """Whose API key ``key`` is (None: nobody's). Keys are kept with the accounts and work with accounts off
        too: then the users file (or the database's accounts table) is opened when the first key comes."""
        with self._keys_lock:
            if self._keys is None:
                self._keys = open_accounts(self.settings, self.database, sign_ins=False)  # nobody signs in
        return self._keys.key_user(key)

    def sign_in(self, name: str, password: str, client: str = "") -> Actor:
        """``name`` signing in from the address ``client``; ``LoginRefused`` when they may not (refusals are
        throttled and logged), ``LoginThrottled`` while that name or address waits after too many."""
        if self.accounts is None:
            raise LoginRefused("Accounts are off: there is nobody to sign in as.")
        try:
            actor = self.accounts.login(name, password, client).at(client)
        except LoginRefused as exc:
            self._audit.record(name, AuditAction.SIGN_IN, name, "refused", _refusal(exc, "password"), client=client)
            raise
        self._audit.record(actor, AuditAction.SIGN_IN, actor.name, detail={"method": "password"})
        return actor

    def sign_in_external(self, name: str, groups: Sequence[str], source: str, client: str = "") -> Actor:
        """``name``, vouched for by the company sign-in ``source`` ("oidc"), with the role their ``groups`` give
        (``Accounts.sign_in_external``); ``LoginRefused`` when they get none."""
        if self.accounts is None:
            raise LoginRefused("Accounts are off: there is nobody to sign in as.")
        try:
            actor = self.accounts.sign_in_external(name, groups, source, client).at(client)
        except LoginRefused as exc:
            self._audit.record(name, AuditAction.SIGN_IN, name, "refused", _refusal(exc, source), client=client)
            raise
        self._audit.record(actor, AuditAction.SIGN_IN, actor.name, detail={"method": source})
        return actor

    def sign_out(self, name: str, client: str = "") -> None:
        """Record that ``name`` signed out from ``client`` (the session itself ends where it is kept)."""
        known = self.accounts.actor(name) if self.accounts is not None else None  # None: removed meanwhile
        self._audit.record(known.at(client) if known else name, AuditAction.SIGN_OUT, name, client=client)

    def login(self, name: str, password: str, client: str = "") -> bool:
        """``sign_in`` as yes or no."""
        try:
            self.sign_in(name, password, client)
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
            self._warm_search()
            warm = getattr(self._llm, "load", None)
            if callable(warm):
                warm()
                if self.settings.workflow.route:
                    self.intents.warm_up()  # the leaves embedded, the classifier's prompt prefix cached
                self.chat.warm_up()  # the answer instructions read, in both languages
        finally:
            self.warming = False

    def _warm_search(self) -> None:
        """One search in each language over every knowledge base, so the first question's search is as fast as
        the tenth: it pays for Chroma's first query, reading the keyword index, jieba's dictionary and loading
        and first running the reranker (a restart on the demo, shared 2-core machine: the first search 4.4 s,
        the later ones 0.1 s; docs/lab-log.md). A failure only means a slower first search."""
        for question in ("How do I get started?", "怎么开始使用？"):
            try:
                self._retrieval.retrieve(question)
            except Exception:
                log.warning("warming up the search failed", exc_info=True)
                return

    def close(self) -> None:
        """Close what ``build_engine`` started: the facets' stores, then ``closers`` in order, then the model pools."""
        self.observability.close()
        self.conversations.close()
        for accounts in {id(a): a for a in (self.accounts, self._keys) if a is not None}.values():
            accounts.close()  # the sign-ins' file, or nothing on the shared database (closed below)
        self._audit.close()
        for part in self._closers:
            part.close()
        close_pools()


def _refusal(exc: LoginRefused, method: str) -> dict[str, object]:
    return {"method": method, "reason": str(exc), "throttled": isinstance(exc, LoginThrottled) or None}
