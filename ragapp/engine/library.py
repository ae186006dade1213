"""The library facet: what the knowledge bases hold; adding, re-indexing, removing and moving documents; and
looking inside one (its chunks, how it read, a cited page as it looks). Reading a document checks that the
actor may read its knowledge base, like a question does. Every change is audited (``ragapp.audit``), refusals
too; a document's target reads ``kb/name``."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ragapp.accounts.kb_access import KbAccess
from ragapp.audit import AuditAction, AuditLog
from ragapp.core.access import LOCAL_ACTOR, Action, Actor, require
from ragapp.core.chunks import chunk_id_of
from ragapp.core.errors import AccessDenied, IngestError, LooksUnknown
from ragapp.core.filters import UPLOAD_SOURCE, TagError, clean_tags
from ragapp.core.lang import LANGUAGES, Language
from ragapp.core.types import (
    DEFAULT_KB,
    LOCAL_OWNER,
    Chunk,
    DocumentRecord,
    FileOrigin,
    IngestProgress,
    IngestResult,
    KnowledgeBase,
    ParseReport,
    Said,
    SkippedSection,
)
from ragapp.ingest.page_images import (
    render_image,
    render_pdf_figure,
    render_pdf_page,
    render_pptx_figure,
    render_zip_figure,
)
from ragapp.ingest.parsing import supported_extensions
from ragapp.ingest.pipeline import Ingestor, KnowledgeStore, Progress
from ragapp.qa.suggest import opening_questions
from ragapp.store.written_questions import WrittenQuestions, written_reader
from ragapp.tracing.recorder import TraceRecorder

log = logging.getLogger(__name__)

GONE = Said("library.document_gone")  # unknown, or in a base the actor may not read


@dataclass(frozen=True)
class DocumentView:
    """What one document became: how it read, its chunks in order, and the pages left out."""

    record: DocumentRecord
    report: ParseReport | None  # None for documents added before reports were kept
    chunks: tuple[Chunk, ...]
    skipped: tuple[SkippedSection, ...]
    file_kept: bool  # its file is kept: it can be indexed again, and its pages shown
    meta: dict[str, str] = field(default_factory=dict)  # title, author, dates; source, path, folder
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class PageView:
    """A cited passage where it stands: the page as an image with the passage highlighted (PDFs and images whose
    file is kept), else the section's chunks around it."""

    chunk: Chunk
    title: str
    png: bytes | None = None
    highlighted: int = 0  # places marked on the image
    section: tuple[Chunk, ...] = ()
    url: str = ""  # the live page, for a document a website source fetched


SECTION_WINDOW = 3  # chunks either side of the cited one, when the page cannot be drawn
OPENING_DOCUMENTS = 12  # the newest documents read for the first screen's questions...
OPENING_CHUNKS = 40  # ...each as far as its first chunks: cheap at every page load, whatever the library's size


# A figure's picture, by its file's kind: a PDF's page cropped to it, a deck's picture found at its place on its
# slide, a Word file's or an EPUB's picture file named by the figure (they have no page to crop from).
FIGURE_DRAWERS = {
    ".pdf": render_pdf_figure,
    ".pptx": render_pptx_figure,
    ".docx": render_zip_figure,
    ".epub": render_zip_figure,
}
FIGURE_PATH = "/v1/passages/{chunk_id}/figure"  # the HTTP API's route for a figure's picture (same access check)


def figure_url(chunk: Chunk) -> str | None:
    """Where the HTTP API serves ``chunk``'s figure, cropped from its page (a path on the app's server); None for a
    chunk that is no figure, or a figure that cannot be found again (``Chunk.figure_drawn``)."""
    return FIGURE_PATH.format(chunk_id=chunk.chunk_id) if chunk.figure_drawn else None


def live_url(meta: dict[str, str]) -> str:
    """Where a document lives on the web: a synced source's ``path`` that is an http(s) URL (a website's page;
    an upload's or a folder's path never is); else ""."""
    path = meta.get("path", "")
    synced = meta.get("source", UPLOAD_SOURCE) != UPLOAD_SOURCE
    return path if synced and path.startswith(("http://", "https://")) else ""


def hidden_duplicate(name: str) -> IngestResult:
    """A duplicate of a document its uploader may not read: neither the document nor its base named."""
    said = Said("ingest.duplicate_hidden", {"name": name})
    return IngestResult(name, "duplicate", said.english, said=said)


class Library:
    def __init__(
        self,
        store: KnowledgeStore,
        ingestor: Ingestor,
        recorder: TraceRecorder,
        access: KbAccess | None = None,
        audit: AuditLog | None = None,
    ) -> None:
        self._store = store
        self._ingestor = ingestor
        self._recorder = recorder
        self._access = access  # None: accounts off
        self._audit = audit or AuditLog.off()

    def _may_edit(self, actor: Actor, kb: str) -> None:
        if self._access is not None and not self._access.may_edit(actor, kb):
            raise AccessDenied(said=Said("access.kb_edit", {"kb": kb}))

    def _kb_of(self, doc_id: str, actor: Actor) -> str | None:
        """The document's base (None: no such document); one ``actor`` may not read looks like none, before
        any refusal could name the base."""
        record = self._store.catalog.document(doc_id)
        if record is not None and self._access is not None and not self._access.may_read(actor, record.kb):
            raise LooksUnknown(said=GONE)
        return record.kb if record is not None else None

    def _target(self, doc_id: str) -> str:
        """How the audit log names a document: ``kb/name`` (its id, once it is gone)."""
        record = self._store.catalog.document(doc_id)
        return f"{record.kb}/{record.name}" if record is not None else doc_id

    def ingest(
        self,
        files: Sequence[tuple[Path, str] | tuple[Path, str, FileOrigin]],
        progress: Progress | None = None,
        kb: str = DEFAULT_KB,
        owner: str = LOCAL_OWNER,
        *,
        actor: Actor = LOCAL_ACTOR,
        cancel: threading.Event | None = None,
        inline: bool = False,
    ) -> list[IngestResult]:
        """Add files given as (path on disk, name to show[, where it came from]) to knowledge base ``kb`` (see
        ``Ingestor.ingest_files``). Never raises for a bad
        file; raises ``IngestError`` for an invalid ``kb`` name and ``AccessDenied`` for an ``actor`` who may
        not upload, before anything is stored. Setting ``cancel`` stops the batch cleanly (see
        ``Ingestor.ingest_files``). ``inline``: embedded before it returns, even into a base enriched in the
        background (the demo files, so the first question finds them by meaning)."""
        names = [item[1] for item in files]
        with self._audit.attempt(actor, AuditAction.UPLOAD, kb, files=names[:50], count=len(names)) as note:
            require(actor, Action.UPLOAD)
            self._may_edit(actor, kb)
            shown = progress or (lambda _update: None)

            def run(traced: Progress) -> list[IngestResult]:
                def both(update: IngestProgress) -> None:
                    traced(update)
                    shown(update)

                return self._unnamed(self._ingestor.ingest_files(files, both, kb, cancel, inline), actor)

            results = self._recorder.ingest(run, owner=owner, files=names)
            note["results"] = {s: sum(r.status == s for r in results) for s in sorted({r.status for r in results})}
        return results

    def _unnamed(self, results: list[IngestResult], actor: Actor) -> list[IngestResult]:
        """``results`` with each duplicate of a document ``actor`` may not read unnamed: content is stored once
        across all bases, so the file cannot be added, but neither the document nor its base is told."""
        if self._access is None:
            return results
        shown = []
        for result in results:
            duplicate = result.doc_id if result.status == "duplicate" else None
            record = self._store.catalog.document(duplicate) if duplicate else None
            shown.append(
                hidden_duplicate(result.name) if record and not self._access.may_read(actor, record.kb) else result
            )
        return shown

    def check_upload(self, kb: str | None, *, actor: Actor = LOCAL_ACTOR) -> None:
        """Raise ``AccessDenied`` as ``ingest`` would for ``actor`` uploading to ``kb``, before any file is read
        (the HTTP API checks before it accepts an upload it would run later; ``kb`` None: the role only, before
        the form naming the base is read); a refusal is audited."""
        with self._audit.refusals(actor, AuditAction.UPLOAD, kb or ""):
            require(actor, Action.UPLOAD)
            if kb is not None:
                self._may_edit(actor, kb)

    def reindex(
        self, doc_id: str, progress: Progress | None = None, owner: str = LOCAL_OWNER, *, actor: Actor = LOCAL_ACTOR
    ) -> IngestResult:
        """Parse, chunk and embed a document again from its kept file, in place (after a parser or embedder
        change). Raises ``IngestError`` when it is gone or its file was not kept."""
        with self._audit.attempt(actor, AuditAction.REINDEX, self._target(doc_id), doc_id=doc_id) as note:
            require(actor, Action.UPLOAD)
            if (kb := self._kb_of(doc_id, actor)) is not None:
                self._may_edit(actor, kb)
            shown = progress or (lambda _update: None)
            name = record.name if (record := self._store.catalog.document(doc_id)) else doc_id

            def run(traced: Progress) -> list[IngestResult]:
                def both(update: IngestProgress) -> None:
                    traced(update)
                    shown(update)

                return [self._ingestor.reindex(doc_id, both)]

            (result,) = self._recorder.ingest(run, owner=owner, files=[name])
            note["result"] = result.status
        return result

    def _readable(self, doc_id: str, actor: Actor, unknown: Said = GONE) -> DocumentRecord:
        """The document, if ``actor`` may read its base; else the error an unknown one gets (``unknown``)."""
        record = self._store.catalog.document(doc_id)
        if record is None:
            raise IngestError(said=unknown)
        if self._access is not None and not self._access.may_read(actor, record.kb):
            raise LooksUnknown(said=unknown)
        return record

    def document_view(self, doc_id: str, *, actor: Actor = LOCAL_ACTOR) -> DocumentView:
        """Everything about how one document was indexed."""
        require(actor, Action.CHAT)
        record = self._readable(doc_id, actor)
        catalog = self._store.catalog
        chunks = tuple(catalog.document_chunks(doc_id))
        files = self._store.files
        return DocumentView(
            record, catalog.parse_report(doc_id), chunks, tuple(catalog.skipped_sections(doc_id)),
            files is not None and files.find(doc_id) is not None, catalog.document_meta(doc_id),
            tuple(catalog.tags(doc_id)),
        )  # fmt: skip

    def set_tags(self, doc_id: str, tags: Sequence[str], *, actor: Actor = LOCAL_ACTOR) -> tuple[str, ...]:
        """Make ``tags`` the document's (cleaned: trimmed, lower case, each once); returns them as stored. Only
        someone who may change the document's knowledge base may tag it.

        Raises:
            IngestError: the document is gone, or a tag breaks the rules (the message says which).
            AccessDenied: ``actor`` may not change the document's knowledge base.
        """
        with self._audit.attempt(actor, AuditAction.TAG, self._target(doc_id), doc_id=doc_id) as note:
            require(actor, Action.UPLOAD)
            record = self._readable(doc_id, actor)
            self._may_edit(actor, record.kb)
            try:
                cleaned = clean_tags(tags)
            except TagError as exc:
                raise IngestError(str(exc), exc.said) from None
            if not self._store.catalog.set_tags(doc_id, cleaned):
                raise IngestError(said=GONE)
            note["tags"] = list(cleaned)
        return cleaned

    def tags(self, *, actor: Actor = LOCAL_ACTOR) -> list[str]:
        """Every tag on a document ``actor`` may read, by name (what the Chat's filter offers)."""
        catalog = self._store.catalog
        if self._access is None:
            return [tag for tag, _n in catalog.all_tags()]
        return sorted({t for d in self.documents(actor=actor) for t in catalog.tags(d.doc_id)})

    def page_view(self, chunk_id: str, highlights: Sequence[str] = (), *, actor: Actor = LOCAL_ACTOR) -> PageView:
        """The cited chunk on its page: the page drawn, ``highlights`` (the supporting sentences; the whole chunk
        when none) marked. A document whose file or page cannot be drawn gets the chunks around it instead."""
        require(actor, Action.CHAT)
        catalog = self._store.catalog
        chunk = self._readable_chunk(chunk_id, actor)
        title = chunk.source + (f" · {chunk.location}" if chunk.location else "")
        url = live_url(catalog.document_meta(chunk.doc_id))
        passages = [h for h in highlights if h.strip()] or [chunk.text]
        kept = self._store.files.find(chunk.doc_id) if self._store.files is not None else None
        draw = FIGURE_DRAWERS.get(kept.suffix.lower()) if kept is not None else None
        if kept is not None and draw is not None and chunk.figure is not None and chunk.figure_drawn:
            try:  # the figure's picture
                return PageView(chunk, title, draw(kept, chunk.page, chunk.figure), 1, url=url)
            except Exception as exc:  # a picture that will not draw still has its words to show
                log.warning("could not draw the figure %s of %s: %r", chunk.chunk_id, chunk.source, exc)
        elif kept is not None and chunk.page is not None:
            boxes = catalog.ocr_boxes(chunk.doc_id, chunk.page)
            try:
                if kept.suffix.lower() == ".pdf":
                    png, marked = render_pdf_page(kept, chunk.page, passages, boxes)
                    return PageView(chunk, title, png, marked, url=url)
                if boxes:  # an image read by OCR
                    png, marked = render_image(kept, passages, boxes)
                    return PageView(chunk, title, png, marked)
            except Exception as exc:  # a page that will not draw still has its text to show
                log.warning("could not draw page %s of %s: %r", chunk.page, chunk.source, exc)
        window = catalog.chunk_window(chunk_id, SECTION_WINDOW)
        same = tuple(c for c in window if (c.page, c.heading) == (chunk.page, chunk.heading)) or (chunk,)
        return PageView(chunk, title, section=same, url=url)

    def _readable_chunk(self, chunk_id: str, actor: Actor) -> Chunk:
        """The chunk ``chunk_id``, where ``actor`` may read it; gone and closed are worded alike."""
        gone = Said("library.passage_gone")
        chunk = self._store.catalog.chunks([chunk_id]).get(chunk_id)
        if chunk is None:
            raise IngestError(said=gone)
        self._readable(chunk.doc_id, actor, gone)
        return chunk

    def figure_image(self, chunk_id: str, width: int = 1000, *, actor: Actor = LOCAL_ACTOR) -> tuple[Chunk, bytes]:
        """A cited figure as a PNG, cropped from its page, and its chunk; access is checked as for ``page_view``.

        Raises:
            IngestError: the chunk is gone, is no figure, or its file is not kept (the message says which).
            LooksUnknown: the chunk is in a knowledge base ``actor`` may not read (worded as gone).
        """
        require(actor, Action.CHAT)
        chunk = self._readable_chunk(chunk_id, actor)
        kept = self._store.files.find(chunk.doc_id) if self._store.files is not None else None
        drawn = kept is not None and kept.suffix.lower() in FIGURE_DRAWERS
        if chunk.figure is None or not chunk.figure_drawn or kept is None or not drawn:
            raise IngestError(said=Said("library.no_figure", {"id": chunk_id}))
        return chunk, FIGURE_DRAWERS[kept.suffix.lower()](kept, chunk.page, chunk.figure, width)

    def passage(self, chunk_id: str, around: int = 1, *, actor: Actor = LOCAL_ACTOR) -> tuple[Chunk, tuple[Chunk, ...]]:
        """A chunk and its document's chunks around it (``around`` on each side), for a reader or a tool that
        wants its context; ``IngestError`` for an id no longer there, and the same words (``LooksUnknown``) for
        one in a base ``actor`` may not read: chunk ids come from the bytes, so a different answer would tell
        whether a known file is in a closed base."""
        require(actor, Action.CHAT)
        catalog = self._store.catalog
        gone = Said("library.no_passage", {"id": chunk_id})
        chunk = catalog.chunks([chunk_id]).get(chunk_id)
        if chunk is None:
            raise IngestError(said=gone)
        self._readable(chunk.doc_id, actor, gone)
        return chunk, tuple(catalog.chunk_window(chunk_id, around))

    def delete(self, doc_id: str, *, actor: Actor = LOCAL_ACTOR) -> str:
        """Remove a document from the catalog, the vectors and the keyword index; returns its name."""
        with self._audit.attempt(actor, AuditAction.DELETE, self._target(doc_id), doc_id=doc_id):
            require(actor, Action.DELETE)
            if (kb := self._kb_of(doc_id, actor)) is not None:
                self._may_edit(actor, kb)
            return self._ingestor.delete(doc_id)

    def move(self, doc_id: str, kb: str, *, actor: Actor = LOCAL_ACTOR) -> str:
        """Put a document in knowledge base ``kb`` (nothing is re-embedded); returns its name."""
        with self._audit.attempt(actor, AuditAction.MOVE, self._target(doc_id), doc_id=doc_id, to=kb):
            require(actor, Action.MOVE)
            self._may_edit(actor, kb)
            if (current := self._kb_of(doc_id, actor)) is not None:
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

    def opening_questions(self, *, actor: Actor = LOCAL_ACTOR) -> dict[Language, list[str]]:
        """Questions the knowledge bases ``actor`` may read can answer, by language, for the first screen: made
        from the newest documents' first sections, their written questions first, then their headings
        (``ragapp.qa.suggest.opening_questions``)."""
        catalog = self._store.catalog
        newest = sorted(self.documents(actor=actor), key=lambda d: d.added_at, reverse=True)[:OPENING_DOCUMENTS]
        firsts = [catalog.chunk_window(chunk_id_of(d.doc_id, 0), OPENING_CHUNKS) for d in newest]
        written = written_reader(WrittenQuestions(catalog.database))  # written at ingest, when that is on
        return {lang: opening_questions(firsts, lang == "zh", written=written) for lang in LANGUAGES}

    def supported_extensions(self) -> list[str]:
        return supported_extensions()
