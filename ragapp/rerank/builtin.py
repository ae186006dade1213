"""The app's own reranker (``backend = "builtin"``, the default): the cross-encoder trained by
``python -m ragbench.rerank.train`` and shipped in ``ragapp/rerank/weights`` (see its MODEL_CARD.md).

Loaded once, on first use, rebuilt from the packaged MiniLM base plus the shipped differences, then its linear
layers quantised to int8 for speed (scores move by about 0.01; see the model card). Pairs are scored in batches,
truncated to ``max_length`` tokens, and each score is a probability (sigmoid of the logit), so
``min_rerank_score`` reads as "at least this likely to be relevant".

The model was trained on English and Chinese pairs in the same language only. A passage in another language
than the question (a Chinese question over English documents) is not scored: it keeps its fused position and
no rerank score, instead of a score the model never learned to give, and the relevance gate judges it by the
vector channel's cross-language similarity (``ragapp.retrieval.relevance``).
"""

from __future__ import annotations

import dataclasses
import logging
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragapp.config import Settings
from ragapp.core.errors import ModelError
from ragapp.core.lang import language_of
from ragapp.core.types import RetrievedChunk
from ragapp.models.lazy import LazyModel
from ragapp.rerank.base import RERANKERS, Reranker, passage_text
from ragapp.rerank.compact import SHIPPED_DIR, is_compact, load_compact

log = logging.getLogger(__name__)


class CompactReranker:
    enabled = True

    def __init__(self, folder: Path, max_length: int, batch_size: int, quantize: bool = True) -> None:
        self.name = "ragapp-minilm-zh-en" if folder == SHIPPED_DIR else folder.name
        self.folder = folder
        self._max_length = max_length
        self._batch_size = batch_size
        self._model = LazyModel(lambda: _load(folder, quantize))

    def load(self) -> None:
        self._model.get()

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Probability-like relevance of each passage to ``query`` (no language check)."""
        import torch

        model, tokenizer = self._model.get()
        out: list[float] = []
        with torch.inference_mode():
            for start in range(0, len(passages), self._batch_size):
                part = list(passages[start : start + self._batch_size])
                enc = tokenizer(
                    [query] * len(part),
                    part,
                    truncation="only_second",
                    max_length=self._max_length,
                    padding=True,
                    return_tensors="pt",
                )
                out += torch.sigmoid(model(**enc).logits.view(-1)).tolist()
        return out

    def rerank(self, query: str, candidates: Sequence[RetrievedChunk]) -> list[RetrievedChunk]:
        if not candidates:
            return []
        language = language_of(query)
        judged = [i for i, c in enumerate(candidates) if language_of(c.chunk.text) == language]
        if not judged:
            return list(candidates)
        scores = self.score(query, [passage_text(candidates[i].chunk) for i in judged])
        ranked = sorted(
            (dataclasses.replace(candidates[i], rerank_score=s) for i, s in zip(judged, scores, strict=True)),
            key=lambda c: -(c.rerank_score or 0.0),
        )
        out = list(candidates)
        for slot, chunk in zip(judged, ranked, strict=True):  # judged chunks reorder among their own slots
            out[slot] = chunk
        return out


def _load(folder: Path, quantize: bool) -> tuple[Any, Any]:
    try:
        import torch

        model, tokenizer, _config = load_compact(folder)
        if quantize:
            with warnings.catch_warnings():  # torch marks eager dynamic quantisation deprecated; it still works
                warnings.simplefilter("ignore")
                model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
        return model, tokenizer
    except Exception as exc:
        raise ModelError(
            f"Could not load the reranker in {folder} ({exc}). Reinstall with `make setup`, point "
            "RAGAPP_RERANK__MODEL at another cross-encoder, or set RAGAPP_RERANK__BACKEND=none."
        ) from exc


@RERANKERS.register("builtin")
def _builtin(settings: Settings) -> Reranker:
    folder = Path(settings.rerank.model) if settings.rerank.model and is_compact(Path(settings.rerank.model)) else None
    return CompactReranker(folder or SHIPPED_DIR, settings.rerank.max_length, settings.rerank.batch_size)
