"""The library facet: what the knowledge bases hold, and adding, removing and moving documents."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ragapp.core.access import LOCAL_ACTOR, Action, Actor, require
from ragapp.core.errors import AccessDenied
from ragapp.core.types import (
    DEFAULT_KB,
    LOCAL_OWNER,
    DocumentRecord,
    IngestProgress,
    IngestResult,
    KnowledgeBase,
    SkippedSection,
)
from ragapp.engine.kb_access import KbAccess
from ragapp.ingest.parsing import supported_extensions
from ragapp.ingest.pipeline import Ingestor, KnowledgeStore, Progress
from ragapp.tracing.recorder import TraceRecorder


class Library:
    def __init__(
        self, store: KnowledgeStore, ingestor: Ingestor, recorder: TraceRecorder, access: KbAccess | None = None
    ) -> None:
        self._store = store
        self._ingestor = ingestor
        self._recorder = recorder
        self._access = access  # None: accounts off

    def _may_edit(self, actor: Actor, kb: str) -> None:
        if self._access is not None and not self._access.may_edit(actor, kb):
            raise AccessDenied(f"You may not change the knowledge base {kb!r}; ask an administrator.")

    def _kb_of(self, doc_id: str) -> str | None:
        record = self._store.catalog.document(doc_id)
        return record.kb if record is not None else None

    def ingest(
        self,
        files: Sequence[tuple[Path, str]],
        progress: Progress | None = None,
        kb: str = DEFAULT_KB,
        owner: str = LOCAL_OWNER,
        *,
        actor: Actor = LOCAL_ACTOR,
    ) -> list[IngestResult]:
        """Add files given as (path on disk, name to show) to knowledge base ``kb``. Never raises for a bad
        file; raises ``IngestError`` for an invalid ``kb`` name and ``AccessDenied`` for an ``actor`` who may
        not upload, before anything is stored."""
        require(actor, Action.UPLOAD)
        self._may_edit(actor, kb)
        shown = progress or (lambda _update: None)

        def run(traced: Progress) -> list[IngestResult]:
            def both(update: IngestProgress) -> None:
                traced(update)
                shown(update)

            return self._ingestor.ingest_files(files, both, kb)

        return self._recorder.ingest(run, owner=owner, files=[name for _path, name in files])

    def delete(self, doc_id: str, *, actor: Actor = LOCAL_ACTOR) -> str:
        """Remove a document from the catalog, the vectors and the keyword index; returns its name."""
        require(actor, Action.DELETE)
        if (kb := self._kb_of(doc_id)) is not None:
            self._may_edit(actor, kb)
        return self._ingestor.delete(doc_id)

    def move(self, doc_id: str, kb: str, *, actor: Actor = LOCAL_ACTOR) -> str:
        """Put a document in knowledge base ``kb`` (nothing is re-embedded); returns its name."""
        require(actor, Action.MOVE)
        self._may_edit(actor, kb)
        if (current := self._kb_of(doc_id)) is not None:
            self._may_edit(actor, current)
        return self._ingestor.move(doc_id, kb)

    def documents(self, *, actor: Actor = LOCAL_ACTOR) -> list[DocumentRecord]:
        """Every document, or with accounts on those in the knowledge bases ``actor`` may read."""
        documents = self._store.catalog.documents()
        if self._access is None:
            return documents
        readable = self._access.readable(actor, {d.kb for d in documents})
        return [d for d in documents if d.kb in readable]

    def skipped(self, doc_id: str) -> list[SkippedSection]:
        """The pages of a document left out of retrieval as boilerplate, with the reason for each."""
        return self._store.catalog.skipped_sections(doc_id)

    def skipped_counts(self) -> dict[str, int]:
        """How many pages each document had left out, by doc id (documents with none are absent)."""
        return self._store.catalog.skipped_counts()

    def knowledge_bases(self, *, actor: Actor = LOCAL_ACTOR) -> list[KnowledgeBase]:
        """The knowledge bases that hold documents (those ``actor`` may read), with document and chunk counts."""
        bases = self._store.catalog.knowledge_bases()
        if self._access is None:
            return bases
        readable = self._access.readable(actor, [kb.name for kb in bases])
        return [kb for kb in bases if kb.name in readable]

    def supported_extensions(self) -> list[str]:
        return supported_extensions()
