"""The first enrichment step: the vectors of the chunks an upload stored without them.

What is to do is read from the stores (the base's chunks in the catalog that the vector index lacks); the work
is ``KnowledgeStore.embed_missing``, the same embedding a start's ``reconcile`` does, a batch at a time.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragapp.enrich import STEPS
from ragapp.ingest.knowledge_store import KnowledgeStore


class VectorsStep:
    """Embeds a knowledge base's chunks that have no vector yet."""

    name = "vectors"
    order = 0  # first: a base is searched by meaning once its vectors are there

    def pending(self, store: KnowledgeStore, kb: str) -> list[str]:
        """The chunks of ``kb`` without a vector, in the catalog's order."""
        mine = [cid for cid, where in store.catalog.chunk_kbs().items() if where == kb]
        present = store.vectors.has(mine)
        return [cid for cid in mine if cid not in present]

    def run(self, store: KnowledgeStore, chunk_ids: Sequence[str]) -> int:
        return store.embed_missing(chunk_ids)

    def forget(self, store: KnowledgeStore, chunk_ids: Sequence[str]) -> None:
        """A deleted document's vectors go with it already (``Ingestor.delete``); this drops any a batch wrote
        in a race it lost (what a crash left, the next start's ``reconcile`` removes)."""
        held = store.catalog.chunks(chunk_ids)
        store.vectors.delete([cid for cid in chunk_ids if cid not in held])


@STEPS.register("vectors")
def vectors_step() -> VectorsStep:
    return VectorsStep()
