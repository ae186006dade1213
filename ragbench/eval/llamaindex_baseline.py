"""LlamaIndex's own ``QueryFusionRetriever`` over our channels, for a side-by-side of the fusion step.

Both sides see exactly the same per-channel results (our vector and keyword channels wrapped as LlamaIndex
retrievers), so any difference in the scores comes from fusion alone: LlamaIndex's RRF (k fixed at 60,
weights ignored, dedup by node text) and its ``dist_based_score`` (scores scaled by mean +/- 3 std, then
a weighted sum) against ours.
"""

from __future__ import annotations

import time
from typing import Any

from ragapp.config import Settings
from ragapp.ingest.pipeline import KnowledgeStore
from ragapp.retrieval.channels import CHANNELS, Channel, ChannelDeps
from ragbench.eval.runner import Ranker

MODES = ("reciprocal_rerank", "dist_based_score")


def _wrap(channel: Channel, store: KnowledgeStore, depth: int) -> Any:
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

    class ChannelRetriever(BaseRetriever):  # type: ignore[misc]
        def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
            hits = channel.retrieve(query_bundle.query_str, depth).hits
            chunks = store.catalog.chunks(h.chunk_id for h in hits)
            return [
                NodeWithScore(
                    node=TextNode(
                        id_=h.chunk_id, text=chunks[h.chunk_id].text, metadata={"doc_id": chunks[h.chunk_id].doc_id}
                    ),
                    score=h.score,
                )
                for h in hits
                if h.chunk_id in chunks
            ]

    return ChannelRetriever()


def llamaindex_rankers(
    store: KnowledgeStore, settings: Settings, depth: int
) -> dict[str, tuple[Ranker, dict[str, Any]]]:
    """``llamaindex-<mode>`` -> ranker over the vector and keyword channels, fused by LlamaIndex."""
    from llama_index.core.llms.mock import MockLLM
    from llama_index.core.retrievers import QueryFusionRetriever
    from llama_index.core.retrievers.fusion_retriever import FUSION_MODES

    deps = ChannelDeps(embedder=store.embedder, vectors=store.vectors, keywords=store.keywords)
    retrievers = [_wrap(CHANNELS.get(name)(deps), store, depth) for name in ("vector", "keyword")]
    rankers: dict[str, tuple[Ranker, dict[str, Any]]] = {}
    for mode in MODES:
        fusion = QueryFusionRetriever(
            retrievers,
            llm=MockLLM(),  # never called with num_queries=1; keeps LlamaIndex from reaching for OpenAI
            mode=FUSION_MODES(mode),
            similarity_top_k=depth,
            num_queries=1,
            use_async=False,
        )

        def rank(query: str, fusion: Any = fusion) -> tuple[list[str], dict[str, float]]:
            start = time.perf_counter()
            nodes = fusion.retrieve(query)
            return [n.node.metadata["doc_id"] for n in nodes], {"total": time.perf_counter() - start}

        rankers[f"llamaindex-{mode}"] = (rank, {"mode": mode, "similarity_top_k": depth, "num_queries": 1})
    return rankers
