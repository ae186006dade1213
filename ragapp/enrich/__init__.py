"""Work done on stored chunks after an upload has returned: the background enrichment of a knowledge base.

An upload is searchable by keywords once its catalog rows commit; what takes long (the chunks' vectors, the
questions written for them) follows here, step by step, in the background. A step's work is derived from the
stores, never from a job list: what is still to do is whatever the catalog holds that the step's output lacks.
So a restart resumes where it stopped, a changed chunk (a new chunk id) is simply new work, and a deleted
chunk's output is dropped by ``forget``. Steps register themselves in ``STEPS`` (one module each); the runner
(``ragapp.enrich.runner``) walks them per knowledge base, a batch at a time, yielding to questions being answered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from ragapp.registry import Registry

if TYPE_CHECKING:
    from ragapp.ingest.knowledge_store import KnowledgeStore


class EnrichStep(Protocol):
    """One kind of enrichment: idempotent, resumable, done in small batches."""

    name: str  # "vectors", "questions": shown in progress and settings
    order: int  # steps run in ascending order over a base (vectors 0, questions 10), whatever imported first

    def pending(self, store: KnowledgeStore, kb: str) -> list[str]:
        """The chunk ids of ``kb`` this step has still to do (cheap: read from the stores, no model call)."""
        ...

    def run(self, store: KnowledgeStore, chunk_ids: Sequence[str]) -> int:
        """Do one batch and write its output; returns how many of ``chunk_ids`` are now done. A chunk that
        went away meanwhile is skipped, not an error."""
        ...

    def forget(self, store: KnowledgeStore, chunk_ids: Sequence[str]) -> None:
        """Drop this step's output for chunks no longer in the catalog (deleted or replaced documents)."""
        ...


# name -> factory; a factory gets the engine's parts it needs through keyword arguments it declares.
STEPS: Registry[Callable[..., EnrichStep]] = Registry("enrichment step")
