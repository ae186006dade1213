"""A cross-encoder stage for any model sentence-transformers' ``CrossEncoder`` can load: a local folder,
or a hub id when the user has network access. Loaded once, lazily; pairs are scored in batches."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragapp.config import Settings
from ragapp.core.errors import ConfigError, ModelError
from ragapp.core.types import RetrievedChunk
from ragapp.models.lazy import LazyModel
from ragapp.rerank.base import RERANKERS, Reranker, passage_text
from ragapp.rerank.compact import is_compact


class CrossEncoderReranker:
    enabled = True

    def __init__(self, model: str, max_length: int, batch_size: int) -> None:
        self.name = model.rstrip("/").rsplit("/", 1)[-1]
        self._batch_size = batch_size
        self._model = LazyModel(lambda: _load(model, max_length))

    def rerank(self, query: str, candidates: Sequence[RetrievedChunk]) -> list[RetrievedChunk]:
        if not candidates:
            return []
        pairs = [(query, passage_text(c.chunk)) for c in candidates]
        scores = self._model.get().predict(pairs, batch_size=self._batch_size, show_progress_bar=False)
        scored = [dataclasses.replace(c, rerank_score=float(s)) for c, s in zip(candidates, scores, strict=True)]
        return sorted(scored, key=lambda c: -(c.rerank_score or 0.0))


def _load(model: str, max_length: int) -> Any:
    try:
        from sentence_transformers import CrossEncoder

        return CrossEncoder(model, max_length=max_length, device="cpu")
    except Exception as exc:
        raise ModelError(
            f"Could not load the cross-encoder {model!r} ({exc}). Point RAGAPP_RERANK__MODEL at a local "
            "model folder, or set RAGAPP_RERANK__BACKEND=none."
        ) from exc


@RERANKERS.register("cross_encoder")
def _cross_encoder(settings: Settings) -> Reranker:
    if not settings.rerank.model:
        raise ConfigError("RAGAPP_RERANK__BACKEND=cross_encoder needs RAGAPP_RERANK__MODEL (a local folder or hub id).")
    if is_compact(Path(settings.rerank.model)):  # weights written by ragbench.rerank.train
        from ragapp.rerank.builtin import CompactReranker

        return CompactReranker(Path(settings.rerank.model), settings.rerank.max_length, settings.rerank.batch_size)
    return CrossEncoderReranker(settings.rerank.model, settings.rerank.max_length, settings.rerank.batch_size)
