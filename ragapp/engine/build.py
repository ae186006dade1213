"""``build_engine``: the one place where parts are chosen and wired.

Each part comes from its registry by the name in the settings, unless the caller hands in a ready one through
``Parts`` (tests hand in a scripted LLM; an evaluation command may share one embedder between engines).
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from ragapp.accounts.service import Accounts, open_accounts
from ragapp.agent.runner import AgentRunner
from ragapp.audit import SYSTEM_ACTOR, open_audit
from ragapp.config import Settings
from ragapp.core.errors import ConfigError, RagAppError
from ragapp.core.types import DEFAULT_KB, IngestResult
from ragapp.db import Database, open_database
from ragapp.engine.admin import Admin
from ragapp.engine.answer_cache import AnswerCache
from ragapp.engine.chat import Chat
from ragapp.engine.conversations import Conversations
from ragapp.engine.engine import Engine
from ragapp.engine.enrichment import Enrichment
from ragapp.engine.intents import Intents
from ragapp.engine.library import Library
from ragapp.engine.memories import Memories
from ragapp.engine.observability import Observability
from ragapp.engine.procedural import ProceduralMemory
from ragapp.engine.sync import Sync
from ragapp.enrich.questions import question_index
from ragapp.enrich.runner import EnrichRunner, build_steps, in_background
from ragapp.enrich.state import EnrichState
from ragapp.ingest.follower import CatalogFollower
from ragapp.ingest.pipeline import Ingestor, KnowledgeStore
from ragapp.models.embedders import Embedder, load_embedder
from ragapp.models.llm import LLM, LLMS
from ragapp.models.recording import recording
from ragapp.qa.pipeline import AnswerPipeline
from ragapp.rerank.base import RERANKERS, Reranker
from ragapp.retrieval.channels import CHANNELS, Channel, ChannelDeps
from ragapp.retrieval.pipeline import RetrievalPipeline
from ragapp.retrieval.remote import RemoteChannel
from ragapp.router.fast import EmbeddingClassifier, FastRule
from ragapp.router.router import IntentRouter
from ragapp.router.store import IntentStore
from ragapp.router.tree import parse_tree
from ragapp.store.answer_cache import AnswerCacheStore
from ragapp.store.catalog import Catalog
from ragapp.store.conversations import ConversationStore
from ragapp.store.memories import MemoryStore
from ragapp.store.memory_vectors import MemoryVectors
from ragapp.store.owner_signature import Signer
from ragapp.store.procedural import ProceduralStore
from ragapp.store.written_questions import WrittenQuestions, written_reader
from ragapp.sync.service import open_sync
from ragapp.testcases.store import TestCaseStore
from ragapp.tracing.llamaindex import install as install_llamaindex_spans
from ragapp.tracing.recorder import TraceRecorder
from ragapp.tracing.store import TraceStore

log = logging.getLogger(__name__)

DEMO_LOADED_KEY = "demo_loaded"
DEMO_KB = "demo"  # the knowledge base the demo files go into

# The modules whose import registers the built-in parts (LLM backends, rerankers, agent tools). Each registers
# at import and imports its heavy runtime (llama_cpp, openai, torch) only when a part is built.
BUILTIN_MODULES = (
    "ragapp.models.llm_llama_cpp",
    "ragapp.models.llm_openai",
    "ragapp.rerank.builtin",
    "ragapp.rerank.cross_encoder",
    "ragapp.agent.tools.search_knowledge",
    "ragapp.agent.tools.list_knowledge_bases",
    "ragapp.agent.tools.read_chunk",
    "ragapp.enrich.vectors",  # the enrichment steps, in the order they run: vectors first
    "ragapp.enrich.questions",  # then the questions written for each chunk (off unless questions.enabled)
)


def load_builtins() -> None:
    """Register every built-in part in its registry. Safe to call repeatedly: Python imports each module once."""
    for module in BUILTIN_MODULES:
        importlib.import_module(module)


@dataclass(frozen=True)
class Parts:
    """Ready parts to use instead of building them from the settings; None: build from the settings."""

    llm: LLM | None = None
    embedder: Embedder | None = None
    reranker: Reranker | None = None
    channels: Sequence[Channel] | None = None


def build_engine(settings: Settings, parts: Parts | None = None) -> Engine:
    """Open (or create) the stores under ``settings.paths.state_dir`` and wire the parts."""
    parts = parts or Parts()
    load_builtins()
    if settings.traces.enabled:
        install_llamaindex_spans()
    state = settings.paths.state_dir
    state.mkdir(parents=True, exist_ok=True)
    embedder = parts.embedder or load_embedder(settings)
    database = _shared_database(settings)

    def where(name: str) -> Path | Database:
        """A store's home: the shared PostgreSQL database, else its own SQLite file in the state dir."""
        return database if database is not None else state / f"{name}.sqlite3"

    store = KnowledgeStore.open(state, embedder, settings.store, database=database)
    store.reconcile(leave=partial(in_background, settings.enrich))  # their vectors: the enrichment's work
    if parts.channels is not None:
        channels = list(parts.channels)
    else:
        # The written questions are searched too when they are on (``ragapp.enrich.questions``).
        questions = question_index(store) if settings.questions.enabled else None
        deps = ChannelDeps(embedder=embedder, vectors=store.vectors, keywords=store.keywords, questions=questions)
        channels = [CHANNELS.get(name)(deps) for name in settings.retrieval.channels]
        timeout = settings.retrieval.channel_timeout_s
        channels += [RemoteChannel(source, timeout) for source in settings.retrieval.remotes]
    reranker = parts.reranker or RERANKERS.get(settings.rerank.backend)(settings)

    def catch_up(version: int) -> bool:
        """``store.catch_up``, and no search cached while a base is being indexed: its vectors come in under
        the same catalog version, so a cached result would keep missing them (``enricher``: built below)."""
        return store.catch_up(version) and not enricher.indexing()

    retrieval = RetrievalPipeline(channels, store.catalog, reranker, settings.retrieval, catch_up)
    llm = recording(parts.llm or LLMS.get(settings.llm.backend)(settings))
    catalog = store.catalog
    # Each store opens (and creates or migrates) its tables in start(); Engine.close closes them.
    intent_store = IntentStore(  # the bases that hold documents, by name, then "default"
        where("intents"), known_kbs=lambda: [*(kb.name for kb in catalog.knowledge_bases()), DEFAULT_KB]
    ).start()
    traces = TraceStore(where("traces"), settings.traces.max_traces, settings.traces.max_age_days).start()
    cases = TestCaseStore(where("traces")).start()
    conversations = Conversations(ConversationStore(where("conversations")).start(), catalog)
    follower = CatalogFollower(store, settings.store.keyword_poll_s) if database is not None else None
    recorder = TraceRecorder(traces, enabled=settings.traces.enabled)
    kept = settings.answer_cache
    answer_store = (
        AnswerCacheStore(where("answer_cache"), kept.max_entries, kept.max_age_days).start() if kept.enabled else None
    )
    answer_cache = AnswerCache(
        answer_store,
        settings,
        lambda kbs: f"{sorted(catalog.kb_versions(kbs).items())}.{intent_store.version}",
        lambda question: embedder.embed_queries([question])[0].tolist(),
    )

    learned = settings.procedural
    procedural = (
        ProceduralMemory(learned, ProceduralStore(where("procedural"), learned.max_outcomes).start(), traces)
        if learned.enabled
        else None
    )

    def holding_kbs() -> list[str]:
        """The knowledge bases that hold documents."""
        return [kb.name for kb in catalog.knowledge_bases()]

    def best_source(question: str, kbs: frozenset[str] | None) -> str | None:
        """The knowledge base of the best relevant passage for ``question`` (None: nothing relevant)."""
        found = retrieval.retrieve(question, kbs).chunks
        document = catalog.document(found[0].chunk.doc_id) if found else None
        return document.kb if document is not None else None

    # Users' memories: rows beside the conversations, vectors in a Chroma collection of their own.
    memory_store = MemoryStore(where("memories")).start() if settings.memory.enabled else None
    memory_vectors = (
        MemoryVectors(store.vectors.client, embedder.name, store.vectors.prefix) if settings.memory.enabled else None
    )
    memories = Memories(settings, memory_store, memory_vectors, embedder, llm)
    w = settings.workflow
    fast = EmbeddingClassifier(embedder, FastRule(w.fast_route_min_similarity, w.fast_route_margin))
    # The embedder calibrates every routing decision's scores; it routes on its own only with fast_route on.
    router = IntentRouter(intent_store, llm, w, w.step_timeout_s, best_source, fast, holding_kbs)
    answers = AnswerPipeline(retrieval, llm, router, settings)
    agent = AgentRunner(llm, retrieval, catalog, answers, settings)
    accounts = _accounts(settings, database, holding_kbs)
    access = accounts.kb if accounts is not None else None
    steps = build_steps({"store": store, "settings": settings, "llm": llm, "embedder": embedder, "reranker": reranker})
    enrich_state = EnrichState(catalog.database).start()
    # Answers first: the worker waits while the chat writes one (``chat`` is built below, asked at run time).
    enricher = EnrichRunner(store, enrich_state, settings.enrich, steps, answering=lambda: chat.in_flight.busy())
    ingestor = Ingestor(store, settings.ingest, enricher)
    sync = open_sync(store, ingestor, settings)
    audit = open_audit(settings, database)  # every facet that changes something records through it
    chat = Chat(
        settings, answers, agent, retrieval, recorder, access, audit, answer_cache, memories, procedural,
        window=catalog.chunk_window, indexing=enricher.indexing,
        written=written_reader(WrittenQuestions(catalog.database)),
    )  # fmt: skip
    engine = Engine(
        settings,
        chat=chat,
        library=Library(store, ingestor, recorder, access, audit),
        intents=Intents(intent_store, router, audit, partial(documents_in, catalog)),
        observability=Observability(settings, retrieval, traces, cases, access, procedural, chat.ask_case),
        conversations=conversations,
        memories=memories,
        store=store,
        retrieval=retrieval,
        llm=llm,
        # Syncs and enrichment first (they write through the rest); the shared database last: the stores above
        # write through it.
        closers=tuple(
            c
            for c in (
                enricher,
                sync,
                follower,
                agent,
                retrieval,
                intent_store,
                answer_cache,
                memory_store,
                procedural,
                catalog,
                database,
            )
            if c is not None
        ),
        accounts=accounts,
        signer=Signer.in_folder(settings.paths.state_dir),
        admin=Admin(settings, accounts, agent.mcp_servers, audit),
        database=database,
        sync=Sync(sync, access, audit),
        audit=audit,
        enrichment=Enrichment(enricher, access, audit),
    )
    if settings.paths.load_demo and catalog.get_meta(DEMO_LOADED_KEY) is None:
        load_demo(engine, settings.paths.demo_dir)
        catalog.set_meta(DEMO_LOADED_KEY, "1")
    if settings.paths.load_demo:
        seed_demo_intents(intent_store, settings.paths.demo_intents)
    if follower is not None:
        follower.start()
    sync.start()  # the scheduler's thread, when there is a source to follow
    enricher.start()  # the background enrichment's thread (none with enrich.background off)
    return engine


def documents_in(catalog: Catalog, kb: str) -> list[str]:
    """The documents of ``kb`` as a leaf's description names them: each by its title, else its file name."""
    named = []
    for document in catalog.documents("WHERE kb = ?", (kb,)):
        title = catalog.document_meta(document.doc_id).get("title", "").strip()
        named.append(f"{title} ({document.name})" if title and title != document.name else document.name)
    return named


def seed_demo_intents(intents: IntentStore, path: Path) -> None:
    """Write the demo intent tree on first start (later edits, even deleting it all, are kept)."""
    if intents.seeded:
        return
    try:
        tree = parse_tree(path.read_text("utf-8"))
    except (OSError, RagAppError) as exc:  # a broken demo file must not stop the app: routing just stays off
        log.warning("demo intent tree not loaded from %s: %s", path, exc)
        return
    if intents.seed(tree):  # False: another replica seeded it first
        log.info("wrote the demo intent tree: %d intents from %s", len(tree), path)


def load_demo(engine: Engine, demo_dir: Path) -> list[IngestResult]:
    """Index the demo files into the "demo" knowledge base (first start only: deleting them later is respected)."""
    extensions = set(engine.library.supported_extensions())
    files = sorted(p for p in demo_dir.glob("*") if p.suffix.lower() in extensions)
    log.info("indexing the demo knowledge base: %d files from %s", len(files), demo_dir)
    results = engine.library.ingest(
        [(p, p.name) for p in files], kb=DEMO_KB, owner="system", actor=SYSTEM_ACTOR, inline=True
    )
    for result in results:
        if result.status == "failed":
            log.warning("demo file not indexed: %s", result.message)
    return results


def _shared_database(settings: Settings) -> Database | None:
    """The PostgreSQL database every replica shares (``RAGAPP_STORE__DATABASE_URL``); None: SQLite files."""
    url = settings.store.database_url.get_secret_value().strip()
    return open_database(url, pool_size=settings.store.database_pool) if url else None


def _accounts(settings: Settings, database: Database | None, known_kbs: Callable[[], list[str]]) -> Accounts | None:
    """The sign-in check when accounts are on. Starting with no user to sign in as would lock everyone out,
    so that is refused with the command that fixes it, unless an LDAP directory or an OpenID provider brings the
    users (added as they first sign in)."""
    if not settings.auth.enabled:
        if settings.ldap.enabled:
            raise ConfigError("RAGAPP_LDAP__ENABLED needs accounts on: set RAGAPP_AUTH__ENABLED=true too.")
        return None
    accounts = open_accounts(settings, database, known_kbs)
    if not accounts.store.users() and accounts.directory is None and not settings.oidc.enabled:
        raise ConfigError(
            f"RAGAPP_AUTH__ENABLED is on but {accounts.store.where} has no users: add one first with "
            "`python -m ragapp.users add NAME --role admin`."
        )
    return accounts
