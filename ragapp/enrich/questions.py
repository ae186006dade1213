"""The "questions" enrichment step: for each chunk the model writes the questions it answers
(``ragapp.enrich.question_writer``), kept in the catalog (``ragapp.store.written_questions``) and indexed as
entries that lead to their chunk (``ragapp.store.question_index``).

What is to do is read from the stores: a chunk of the knowledge base with no ``question_runs`` row. A changed
chunk has a new id, so it is new work, and its old questions went with the old chunk (``ON DELETE CASCADE``);
``forget`` drops the vectors of chunks no longer in the catalog. Until the background runner walks the steps, a
command writes them for one knowledge base: ``python -m ragapp.engine.write_questions --kb manuals --limit 50``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragapp.config import QuestionSettings
from ragapp.enrich import STEPS
from ragapp.enrich.question_writer import QuestionWriter
from ragapp.models.llm import LLM
from ragapp.rerank.base import Reranker
from ragapp.store.question_index import QuestionIndex
from ragapp.store.written_questions import WrittenQuestions

if TYPE_CHECKING:
    from ragapp.ingest.knowledge_store import KnowledgeStore

log = logging.getLogger(__name__)


def question_index(store: KnowledgeStore) -> QuestionIndex:
    """The written questions of ``store``'s catalog, indexed beside its chunks' vectors."""
    vectors = store.vectors
    return QuestionIndex(WrittenQuestions(store.catalog.database), vectors.client, store.embedder, vectors.prefix)


class QuestionsStep:
    """Writes each chunk's questions with ``llm`` (checked with ``reranker``) and indexes the kept ones."""

    name = "questions"
    order = 10  # after the vectors: the slow model's work comes last

    def __init__(self, llm: LLM, reranker: Reranker | None, settings: QuestionSettings) -> None:
        self._settings = settings
        self._writer = QuestionWriter(llm, reranker, settings)
        self._model = getattr(llm, "name", "model")
        self._indexes: dict[int, QuestionIndex] = {}

    def _index(self, store: KnowledgeStore) -> QuestionIndex:
        if id(store) not in self._indexes:
            self._indexes[id(store)] = question_index(store)
        return self._indexes[id(store)]

    def pending(self, store: KnowledgeStore, kb: str) -> list[str]:
        """The chunks of ``kb`` with no questions written (none while the setting is off)."""
        return self._index(store).questions.pending(kb) if self._settings.enabled else []

    def run(self, store: KnowledgeStore, chunk_ids: Sequence[str]) -> int:
        """Write the questions of ``chunk_ids``; a chunk the model failed on stays to do (it is tried again)."""
        index = self._index(store)
        chunks = store.catalog.chunks(chunk_ids)
        done = 0
        for chunk_id in chunk_ids:
            chunk = chunks.get(chunk_id)
            document = store.catalog.document(chunk.doc_id) if chunk is not None else None
            if chunk is None or document is None:
                continue  # gone meanwhile: nothing to write
            written = self._writer.write(chunk)
            if written.error is not None:
                log.warning("no questions for chunk %s: %s", chunk_id, written.error)
                continue
            # The vectors first, then the rows that mark the chunk done: a crash between leaves the chunk to do
            # (its vectors are replaced next time), never a chunk marked done whose questions cannot be found.
            index.add(chunk_id, chunk.doc_id, document.kb, written.questions)
            if index.questions.write(chunk_id, written.questions, self._model):
                done += 1
            else:  # deleted while the model wrote: its vectors go too
                index.delete([chunk_id])
        return done

    def forget(self, store: KnowledgeStore, chunk_ids: Sequence[str]) -> None:
        """Drop the questions (rows and vectors) of ``chunk_ids``."""
        index = self._index(store)
        index.questions.forget(chunk_ids)
        index.delete(chunk_ids)

    def orphans(self, store: KnowledgeStore) -> list[str]:
        """Chunks with question vectors but no longer in the catalog (deleted or replaced documents)."""
        present = self._index(store).chunk_ids()
        return sorted(present - set(store.catalog.chunks(present)))


STEPS.register("questions")(
    lambda *, llm, reranker, settings: QuestionsStep(llm, reranker, settings.questions)  # type: ignore[misc]
)
