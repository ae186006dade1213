"""LlamaIndex's default in-memory ``VectorStoreIndex`` build over the embed sample, for a side-by-side.

Both sides embed the same strings with the same embedder: the nodes are the app's chunks, each holding
exactly the text the app embeds (``index_text``), and the app's embedder is wrapped as a LlamaIndex
``BaseEmbedding``. Everything else is LlamaIndex's default (embedding batch of 10, ``SimpleVectorStore``
in memory, nothing persisted).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from tqdm import tqdm

from ragapp.core.chunks import index_text
from ragapp.core.types import Chunk
from ragapp.models.embedders import Embedder


def _wrap(embedder: Embedder, bar: Any) -> Any:
    from llama_index.core.embeddings import BaseEmbedding
    from pydantic import PrivateAttr

    class AppEmbedding(BaseEmbedding):  # type: ignore[misc]
        """The app's embedder behind LlamaIndex's embedding interface; counts the time spent inside it."""

        _embedder: Any = PrivateAttr()
        _bar: Any = PrivateAttr()
        _seconds: float = PrivateAttr(default=0.0)

        def __init__(self) -> None:
            super().__init__(model_name=embedder.name)
            self._embedder, self._bar = embedder, bar

        def _embed(self, texts: list[str]) -> list[list[float]]:
            start = time.perf_counter()
            vectors = self._embedder.embed_passages(texts)
            self._seconds += time.perf_counter() - start
            self._bar.update(len(texts))
            return [list(map(float, v)) for v in vectors]

        def _get_query_embedding(self, query: str) -> list[float]:
            return [float(x) for x in self._embedder.embed_queries([query])[0]]

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._embed([text])[0]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return self._embed(texts)

        @property
        def seconds(self) -> float:
            return self._seconds

    return AppEmbedding()


def time_llamaindex_build(chunks: Sequence[Chunk], embedder: Embedder) -> dict[str, Any]:
    """Seconds LlamaIndex takes to build ``VectorStoreIndex(nodes, embed_model=...)`` over ``chunks``."""
    from llama_index.core import VectorStoreIndex
    from llama_index.core.schema import TextNode

    nodes = [TextNode(id_=c.chunk_id, text=index_text(c)) for c in chunks]
    embedder.embed_passages(["warm up"])  # the model is loaded already; this keeps both sides alike
    with tqdm(total=len(nodes), desc="LlamaIndex build", unit="chunk") as bar:
        embed_model = _wrap(embedder, bar)
        start = time.perf_counter()
        index = VectorStoreIndex(nodes, embed_model=embed_model)
        seconds = time.perf_counter() - start
    stored = len(index.index_struct.nodes_dict)
    return {
        "chunks": len(nodes),
        "nodes_indexed": stored,
        "seconds": round(seconds, 3),
        "embed_seconds": round(embed_model.seconds, 3),
        "embed_batch_size": embed_model.embed_batch_size,
        "chunks_per_s": round(len(nodes) / seconds, 2) if seconds else 0.0,
    }
