"""The Engine facade, and ``build_engine``: the one place where parts are chosen and wired.

The UI (and tests, and the eval commands) talk to ``Engine`` only. It never imports gradio.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ragapp.agent.auto import choose_mode
from ragapp.agent.runner import AgentRunner
from ragapp.config import RetrievalSettings, Settings
from ragapp.errors import RagAppError
from ragapp.ingest.parsing import supported_extensions
from ragapp.ingest.pipeline import Ingestor, KnowledgeStore, Progress
from ragapp.models.embedders import load_embedder
from ragapp.models.llm import LLM, LLMS
from ragapp.models.llm_backends import load_builtin_llms
from ragapp.qa.pipeline import AnswerPipeline, Clarified
from ragapp.rerank import builtin as _builtin  # noqa: F401  (registers "builtin")
from ragapp.rerank import cross_encoder as _cross_encoder  # noqa: F401  (registers "cross_encoder")
from ragapp.rerank.base import RERANKERS, PassthroughReranker
from ragapp.retrieval.channels import CHANNELS, ChannelDeps
from ragapp.retrieval.pipeline import RetrievalPipeline, RetrievalResult
from ragapp.router.decide import RoutingDecision
from ragapp.router.router import IntentRouter
from ragapp.router.store import IntentStore
from ragapp.router.tree import Format, IntentNode, IntentTree, parse_tree
from ragapp.tracing.cases import CaseReport, evaluate_cases
from ragapp.tracing.events import EngineEvent, ModeEvent
from ragapp.tracing.llamaindex import install as install_llamaindex_spans
from ragapp.tracing.llm import recording
from ragapp.tracing.recorder import TraceRecorder
from ragapp.tracing.store import TestCase, TestCaseStore, TraceStore, TraceSummary
from ragapp.types import DEFAULT_KB, ChatTurn, DocumentRecord, IngestResult, KnowledgeBase, Scope

log = logging.getLogger(__name__)

Mode = Literal["workflow", "agent", "auto"]
DEMO_LOADED_KEY = "demo_loaded"
DEMO_KB = "demo"  # the knowledge base the demo files go into
LOCAL_OWNER = "local"  # whose traces and test cases, when the caller names nobody (scripts, the CLI)


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
        store: KnowledgeStore,
        retrieval: RetrievalPipeline,
        llm: LLM,
        intents: IntentStore,
        traces: TraceStore | None = None,
        cases: TestCaseStore | None = None,
    ) -> None:
        self.settings = settings
        self._traces = traces
        self._cases = cases
        self._recorder = TraceRecorder(traces, enabled=settings.traces.enabled)
        self._store = store
        self._ingestor = Ingestor(store, settings.ingest)
        self._retrieval = retrieval
        self._llm = llm
        self._intents = intents
        self._router = IntentRouter(
            intents, llm, settings.workflow, settings.workflow.step_timeout_s, self._best_source
        )
        self._answers = AnswerPipeline(retrieval, llm, self._router, settings)
        self._agent = AgentRunner(llm, retrieval, store.catalog, self._answers, settings)

    # -- questions -----------------------------------------------------------------------------

    def ask(
        self,
        question: str,
        history: Sequence[ChatTurn] = (),
        kbs: Scope = None,
        *,
        summary: str = "",
        clarified: Clarified | None = None,
        mode: Mode | None = None,
        owner: str = LOCAL_OWNER,
    ) -> Iterator[EngineEvent]:
        """Stream the events of answering ``question`` from the knowledge bases ``kbs`` (None: all of them):
        stages, the rewritten question, routing, notices, retrieved chunks, tokens, answer. An unknown
        knowledge base simply holds nothing.

        ``history`` holds the recent turns and ``summary`` the older ones folded (a ``MemoryEvent`` says when
        to fold more). After a ``ClarifyEvent``, call again with ``clarified`` holding the user's pick.

        ``mode``: workflow, agent (tool calls, step by step) or auto (agent for comparisons and multi-hop
        questions); None: the configured default. A resumed clarification always continues the workflow.

        Each call leaves a trace owned by ``owner`` (see ``traces``)."""
        events = self._ask(question, history, kbs, summary, clarified, mode)
        shown = "workflow" if clarified is not None else (mode or self.settings.agent.mode)
        return self._recorder.chat(events, owner=owner, question=question, mode=shown)

    def _ask(
        self,
        question: str,
        history: Sequence[ChatTurn],
        kbs: Scope,
        summary: str,
        clarified: Clarified | None,
        mode: Mode | None,
    ) -> Iterator[EngineEvent]:
        mode = mode or self.settings.agent.mode
        if clarified is None and mode == "auto":
            chosen, why = choose_mode(question)
            yield ModeEvent(chosen, f"Auto chose {chosen}: {why}")
            mode = chosen
        if clarified is None and mode == "agent":
            yield from self._agent.ask(question, history, kbs, summary=summary)
            return
        yield from self._answers.ask(question, history, kbs, summary=summary, clarified=clarified)

    def retrieve(self, question: str, kbs: Scope = None) -> RetrievalResult:
        return self._retrieval.retrieve(question, kbs)

    # -- knowledge -----------------------------------------------------------------------------

    def ingest(
        self,
        files: Sequence[tuple[Path, str]],
        progress: Progress | None = None,
        kb: str = DEFAULT_KB,
        owner: str = LOCAL_OWNER,
    ) -> list[IngestResult]:
        """Add files given as (path on disk, name to show) to knowledge base ``kb``. Never raises for a bad
        file; raises ``IngestError`` for an invalid ``kb`` name, before anything is stored."""
        shown = progress or (lambda _f, _m: None)

        def run(traced: Progress) -> list[IngestResult]:
            def both(fraction: float, message: str) -> None:
                traced(fraction, message)
                shown(fraction, message)

            return self._ingestor.ingest_files(files, both, kb)

        return self._recorder.ingest(run, owner=owner, files=[name for _path, name in files])

    def delete(self, doc_id: str) -> str:
        return self._ingestor.delete(doc_id)

    def move(self, doc_id: str, kb: str) -> str:
        """Put a document in knowledge base ``kb`` (nothing is re-embedded); returns its name."""
        return self._ingestor.move(doc_id, kb)

    def documents(self) -> list[DocumentRecord]:
        return self._store.catalog.documents()

    def knowledge_bases(self) -> list[KnowledgeBase]:
        """The knowledge bases that hold documents, by name, with their document and chunk counts."""
        return self._store.catalog.knowledge_bases()

    # -- the intent tree -------------------------------------------------------------------------
    # Every edit validates the whole resulting tree and raises ``IntentTreeError`` (nothing changed) or
    # returns the new tree.

    def intent_tree(self) -> IntentTree:
        return self._intents.tree()

    def save_intent(self, node: IntentNode, replacing: str | None = None) -> IntentTree:
        """Add ``node`` or update the node ``replacing`` (a new code renames it, a new parent moves it)."""
        return self._intents.save(node, replacing)

    def delete_intent(self, code: str) -> int:
        """Delete an intent and everything under it; returns how many nodes went."""
        return self._intents.delete(code)

    def move_intent(self, code: str, parent: str | None) -> IntentTree:
        return self._intents.move(code, parent)

    def import_intents(self, text: str, fmt: Format | None = None) -> IntentTree:
        """Replace the whole tree with one read from YAML or JSON; a bad file changes nothing."""
        return self._intents.replace(parse_tree(text, fmt))

    def export_intents(self, fmt: Format = "yaml") -> str:
        from ragapp.router.tree import dump_tree

        return dump_tree(self._intents.tree(), fmt)

    def test_intent(self, question: str, kbs: Scope = None) -> RoutingDecision:
        """How ``question`` would be routed: every leaf's score and the decision, with the reason."""
        return self._router.test(question.strip(), kbs)

    def _best_source(self, question: str, kbs: Scope) -> str | None:
        """The knowledge base of the best relevant passage for ``question`` (None: nothing relevant)."""
        found = self._retrieval.retrieve(question, kbs).chunks
        document = self._store.catalog.document(found[0].chunk.doc_id) if found else None
        return document.kb if document is not None else None

    # -- traces and test cases ----------------------------------------------------------------------
    # Every call names its owner (a browser session or a login): nobody sees another user's traces or cases.

    def traces(self, owner: str, **filters: str | int | None) -> list[TraceSummary]:
        """Recent traces of ``owner``, newest first; filters: text, status, mode, kind, limit."""
        if self._traces is None:
            return []
        self._traces.flush(timeout=2.0)  # the request that just ended may still be queued
        return self._traces.list(owner, **filters)  # type: ignore[arg-type]

    def trace(self, trace_id: str, owner: str) -> dict[str, Any] | None:
        if self._traces is None:
            return None
        self._traces.flush(timeout=2.0)  # a trace of the request that just ended may still be queued
        return self._traces.get(trace_id, owner)

    def save_test_case(
        self,
        owner: str,
        question: str,
        expected: Sequence[str],
        kbs: Sequence[str] | None = None,
        trace_id: str | None = None,
    ) -> TestCase:
        """Keep ``question`` with the documents (names) that should answer it. Raises ``ValueError`` for a
        blank question or no documents."""
        if self._cases is None:
            raise RagAppError("Test cases are not available (no state folder).")
        return self._cases.add(owner, question, expected, kbs, trace_id)

    def test_cases(self, owner: str) -> list[TestCase]:
        return self._cases.list(owner) if self._cases is not None else []

    def delete_test_case(self, owner: str, case_id: int) -> bool:
        return self._cases.delete(owner, case_id) if self._cases is not None else False

    def run_test_cases(self, owner: str, changes: dict[str, Any] | None = None, k: int = 10) -> list[CaseReport]:
        """Score ``owner``'s test cases with the current retrieval settings and, given ``changes`` (retrieval
        setting -> value; ``rerank`` False turns the reranker off, True tries the shipped one when none is on), with
        those changes too, side by side."""
        cases = self.test_cases(owner)
        current = self._retrieval.settings
        reports = [
            evaluate_cases(cases, self._retrieval.retrieve, "current settings", k, _knobs(current, self._retrieval))
        ]
        changes = dict(changes or {})
        rerank = changes.pop("rerank", None)
        if changes or rerank is not None:
            settings = current.model_copy(update=changes)
            reranker = None  # the engine's own
            if rerank is False:
                reranker = PassthroughReranker()
            elif rerank is True and not self._retrieval.reranker.enabled:  # try the shipped one
                reranker = RERANKERS.get("builtin")(self.settings)
            variant = self._retrieval.variant(RetrievalSettings.model_validate(settings.model_dump()), reranker)
            try:
                reports.append(evaluate_cases(cases, variant.retrieve, "with changes", k, _knobs(settings, variant)))
            finally:
                variant.close()
        return reports

    def supported_extensions(self) -> list[str]:
        return supported_extensions()

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
            if self.settings.workflow.route and self._intents.tree().leaves():
                # Reads the classifier's candidate list into its cached prefix (~15 s on 2 cores for the demo
                # tree), so the first question does not wait for it.
                self._router.test("hello")

    def close(self) -> None:
        if self._traces is not None:
            self._traces.close()
        if self._cases is not None:
            self._cases.close()
        self._agent.close()
        self._retrieval.close()
        self._intents.close()
        self._store.catalog.close()


def _knobs(settings: RetrievalSettings, pipeline: RetrievalPipeline) -> dict[str, Any]:
    """The settings a test-case run is labelled with."""
    keys = ("fusion", "weights", "candidate_limit", "context_top_k", "min_rerank_score")
    return {k: getattr(settings, k) for k in keys} | {"reranker": pipeline.reranker.name}


def build_engine(settings: Settings) -> Engine:
    """Open (or create) the stores under ``settings.paths.state_dir`` and wire the parts."""
    load_builtin_llms()
    if settings.traces.enabled:
        install_llamaindex_spans()
    state = settings.paths.state_dir
    state.mkdir(parents=True, exist_ok=True)
    embedder = load_embedder(settings)
    store = KnowledgeStore.open(state, embedder)
    store.reconcile()
    deps = ChannelDeps(embedder=embedder, vectors=store.vectors, keywords=store.keywords)
    channels = [CHANNELS.get(name)(deps) for name in settings.retrieval.channels]
    reranker = RERANKERS.get(settings.rerank.backend)(settings)
    retrieval = RetrievalPipeline(channels, store.catalog, reranker, settings.retrieval)
    llm = recording(LLMS.get(settings.llm.backend)(settings))
    catalog = store.catalog
    intents = IntentStore(
        state / "intents.sqlite3", known_kbs=lambda: {DEFAULT_KB, *(kb.name for kb in catalog.knowledge_bases())}
    )
    traces = TraceStore(state / "traces.sqlite3", settings.traces.max_traces, settings.traces.max_age_days)
    cases = TestCaseStore(state / "traces.sqlite3")
    engine = Engine(settings, store, retrieval, llm, intents, traces, cases)
    if settings.paths.load_demo and store.catalog.get_meta(DEMO_LOADED_KEY) is None:
        load_demo(engine, settings.paths.demo_dir)
        store.catalog.set_meta(DEMO_LOADED_KEY, "1")
    if settings.paths.load_demo:
        seed_demo_intents(intents, settings.paths.demo_intents)
    return engine


def seed_demo_intents(intents: IntentStore, path: Path) -> None:
    """Write the demo intent tree on first start (later edits, even deleting it all, are kept)."""
    if intents.seeded:
        return
    try:
        tree = parse_tree(path.read_text("utf-8"))
    except (OSError, RagAppError) as exc:  # a broken demo file must not stop the app: routing just stays off
        log.warning("demo intent tree not loaded from %s: %s", path, exc)
        return
    intents.seed(tree)
    log.info("wrote the demo intent tree: %d intents from %s", len(tree), path)


def load_demo(engine: Engine, demo_dir: Path) -> list[IngestResult]:
    """Index the demo files into the "demo" knowledge base (first start only: deleting them later is respected)."""
    extensions = set(engine.supported_extensions())
    files = sorted(p for p in demo_dir.glob("*") if p.suffix.lower() in extensions)
    log.info("indexing the demo knowledge base: %d files from %s", len(files), demo_dir)
    results = engine.ingest([(p, p.name) for p in files], kb=DEMO_KB, owner="system")
    for result in results:
        if result.status == "failed":
            log.warning("demo file not indexed: %s", result.message)
    return results
