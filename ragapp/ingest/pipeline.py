"""Upload -> parse -> chunk -> embed -> catalog + vectors + keywords, top to bottom.

Nothing is written until a file has parsed, chunked and embedded. Then the vectors go in, the catalog
transaction commits (the source of truth), and the keyword index is rebuilt from the catalog. If the
catalog write (or the vector write: a Chroma server may go away) fails the new vectors are removed again, so
a failed file leaves the store as it was. Into a base enriched in the background (``ragapp.enrich``) a file is
stored without vectors, searchable by keywords once the catalog commits: its vectors follow there, derived from
the catalog, so a file that failed has none to follow and a deleted one's are never written.

Files go into a named knowledge base. Content is unique across all of them (the same bytes are stored
once), while a file name is unique within one: a new version replaces the old only in the same base. Replicas
sharing one catalog may race for either: the catalog settles it (see ``Catalog.store_document`` and
``ragapp.ingest.lost_race``), so the loser ends as a duplicate or replaces what the winner stored.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import cast

import numpy as np

from ragapp.config import IngestSettings
from ragapp.core.digest import file_sha256
from ragapp.core.errors import IngestCancelled, IngestError, RagAppError
from ragapp.core.filters import UPLOAD_SOURCE
from ragapp.core.lang import language_of
from ragapp.core.types import (
    DEFAULT_KB,
    Chunk,
    DocumentRecord,
    FileOrigin,
    IngestPhase,
    IngestProgress,
    IngestResult,
    OcrBox,
    ParsedDocument,
    ParseReport,
    Said,
)
from ragapp.ingest.boilerplate import BoilerplateSplit, split_boilerplate
from ragapp.ingest.chunking import chunk_document
from ragapp.ingest.coverage import with_coverage
from ragapp.ingest.enricher import Enricher
from ragapp.ingest.file_meta import file_meta, parse_date
from ragapp.ingest.knowledge_store import (  # re-exported: callers import them from here
    WRITES,
    KnowledgeStore,
    Progress,
    embed_chunks,
    no_progress,
)
from ragapp.ingest.lost_race import already_there, lost_race
from ragapp.ingest.names import MAX_NAME_CHARS as MAX_NAME_CHARS  # re-exported: callers import the rules from here
from ragapp.ingest.names import document_name, kb_name
from ragapp.ingest.parse_context import ParseOptions, ParseProgress, TextBudgetReached
from ragapp.ingest.parsing import parse_file, supported_extensions
from ragapp.ingest.repetition import chunk_budget, mostly_repetition
from ragapp.store.catalog import ContentAlreadyStored, utc_now

log = logging.getLogger(__name__)
DOCUMENT_GONE = Said("library.document_gone")


@dataclass(frozen=True)
class _FileProgress:
    """Progress of file ``index`` of ``count``: a phase and the fraction of this file done -> batch progress."""

    progress: Progress
    name: str
    index: int
    count: int

    def __call__(
        self, phase: IngestPhase, fraction: float, message: str, done: int | None = None, total: int | None = None
    ) -> None:
        overall = (self.index + fraction) / self.count
        self.progress(IngestProgress(self.name, phase, overall, message, done, total, self.index, self.count))


@dataclass(frozen=True)
class _Prepared:
    """A file read, chunked and embedded, not yet stored: what ``Ingestor._commit`` writes."""

    path: Path
    record: DocumentRecord
    chunks: list[Chunk]
    vectors: np.ndarray | None  # None: left to the background enrichment (``ragapp.enrich.vectors``)
    split: BoilerplateSplit
    report: ParseReport
    ocr_boxes: tuple[OcrBox, ...]
    meta: dict[str, str]  # what the file says about itself and where it came from (``document_meta``)


def _cancellable(progress: Progress, cancel: threading.Event | None) -> Progress:
    """``progress``, raising ``IngestCancelled`` once ``cancel`` is set: every stage reports often (a page, a batch
    of chunks), so that is where a cancelled upload stops."""
    if cancel is None:
        return progress

    def checked(update: IngestProgress) -> None:
        if cancel.is_set():
            raise IngestCancelled("The upload was cancelled.")
        progress(update)

    return checked


def origin_meta(origin: FileOrigin | None) -> dict[str, str]:
    """The catalog's metadata of where a file came from (none given: nothing, e.g. when indexing again)."""
    if origin is None:
        return {}
    path = origin.path.replace("\\", "/").lstrip("/")
    meta = {"source": origin.source, "path": path, "folder": path.rpartition("/")[0]}
    if (changed := parse_date(origin.modified_at)) is not None:
        meta["changed"] = changed  # kept apart from the date the file declares: indexing again re-reads that one
    return meta


def _content_type(name: str, origin: FileOrigin | None, again: DocumentRecord | None) -> str | None:
    """What a file's content is when its name does not say: its origin's type (a web page's Content-Type), or,
    indexing a document again, the type it was read as (a page named by a URL without an extension)."""
    if origin is not None and origin.file_type:
        return origin.file_type
    if again is not None and Path(name).suffix.lower() not in supported_extensions():
        return again.file_type
    return None


def _too_many_chunks(name: str, count: int, limit: int, at_least: bool = False) -> IngestError:
    code = "ingest.too_many_chunks_least" if at_least else "ingest.too_many_chunks"
    return IngestError(said=Said(code, {"name": name, "count": count, "limit": limit}))


def check_chunk_floor(doc: ParsedDocument, name: str, settings: IngestSettings) -> None:
    """Refuse ``doc`` when it is sure to make over ``max_chunks`` chunks, before the splitter spends a minute on
    it (49 MB of text: 81 s). No chunk is longer than ``chunk_size``: the text's length gives a floor on the
    count."""
    least = sum(len(section.text) for section in doc.sections) // settings.chunk_size
    if least > settings.max_chunks:
        raise _too_many_chunks(name, least, settings.max_chunks, at_least=True)


def parse_to_the_floor(
    path: Path,
    name: str,
    doc_id: str,
    settings: IngestSettings,
    options: ParseOptions,
    progress: ParseProgress | None = None,
    file_type: str | None = None,
) -> tuple[ParsedDocument, BoilerplateSplit]:
    """The file parsed, and parsed without its boilerplate (tables of contents, indexes and licences match many
    questions and answer none: left out unless ``keep_boilerplate``); refused (``IngestError``) when it is sure to
    make too many chunks. A parser that stops at ``options.text_budget`` has the file refused on what it read,
    or, where the boilerplate leaves too little of that, reads it again whole."""

    def without_boilerplate(doc: ParsedDocument) -> BoilerplateSplit:
        return BoilerplateSplit(doc) if settings.keep_boilerplate else split_boilerplate(doc, doc_id)

    partial: ParsedDocument | None = None
    try:
        parsed = parse_file(path, name, options, progress, file_type=file_type)
    except TextBudgetReached as cut:
        partial = cut.partial
    if partial is not None:
        check_chunk_floor(without_boilerplate(partial).doc, name, settings)
        parsed = parse_file(path, name, replace(options, text_budget=None), progress, file_type=file_type)
    split = without_boilerplate(parsed)
    check_chunk_floor(split.doc, name, settings)
    return parsed, split


def text_budget(settings: IngestSettings) -> int:
    """Characters of parsed text past which a file is sure to make over ``max_chunks`` chunks, twice over: a
    parser reading a stream may stop there (``parse_context.TextBudgetReached``). Twice, as the boilerplate left
    out after the parse (a table of contents, an index) may take up to half of that text and the file still be
    refused. A 49 MB page of tiny paragraphs is refused after reading half of it: 15 s instead of 26 s."""
    return 2 * (settings.max_chunks + 1) * settings.chunk_size


class Ingestor:
    def __init__(self, store: KnowledgeStore, settings: IngestSettings, enricher: Enricher | None = None) -> None:
        self._store = store
        self._settings = settings
        self._enricher = enricher  # None: everything inline, no background enrichment
        self._parse_options = ParseOptions(
            ocr=settings.ocr, ocr_dpi=settings.ocr_dpi, ocr_max_pages=settings.ocr_max_pages,
            pdf_tables=settings.pdf_tables, ocr_latin=settings.ocr_latin, ocr_threads=settings.ocr_threads,
            join_broken_words=settings.join_broken_words, figures=settings.figures,
            text_budget=text_budget(settings),
        )  # fmt: skip

    @property
    def max_file_bytes(self) -> int:
        """The largest file ingested (``max_file_mb``), in bytes."""
        return int(self._settings.max_file_mb * 1024 * 1024)

    def check_size(self, name: str, size: int) -> None:
        """Refuse a file of ``size`` bytes before it is read, when it is over the upload limit (a synced file is
        checked before it is even copied).

        Raises:
            IngestError: it is over ``max_file_mb``; the message gives both sizes and the setting.
        """
        if size > self._settings.max_file_mb * 1024 * 1024:
            limit = float(self._settings.max_file_mb)
            raise IngestError(said=Said("ingest.too_large", {"name": name, "size": size / 1e6, "limit": limit}))

    def ingest_files(
        self,
        files: Sequence[tuple[Path, str] | tuple[Path, str, FileOrigin]],
        progress: Progress = no_progress,
        kb: str = DEFAULT_KB,
        cancel: threading.Event | None = None,
        inline: bool = False,
    ) -> list[IngestResult]:
        """Ingest (path, display name) pairs into knowledge base ``kb``; one bad file never stops the others.
        A third item, a ``FileOrigin``, says where the file came from (a synced folder: its source, path there
        and time of change); without one it is an upload, its path the display name.
        Setting ``cancel`` stops the batch at the next page, batch or file: the files done stay, the one in
        flight leaves nothing behind (nothing is written before a file is embedded), the rest are not read.
        Into a base whose enrichment runs in the background the chunks are stored without vectors (searchable by
        keywords at once; ``ragapp.enrich.vectors`` embeds them later), unless ``inline``.

        Raises:
            IngestError: ``kb`` is not a valid name (checked before anything is read or stored).
        """
        kb = kb_name(kb)
        later = not inline and self._enricher is not None and self._enricher.background(kb)
        results: list[IngestResult] = []
        for index, (path, given, *more) in enumerate(files):
            name = document_name(given, path)
            origin = more[0] if more else FileOrigin(UPLOAD_SOURCE, name)
            if cancel is not None and cancel.is_set():
                results.append(IngestResult(name, "cancelled", f"{name}: not added, the upload was cancelled."))
                continue
            file_progress = _FileProgress(_cancellable(progress, cancel), name, index, len(files))
            try:
                results.append(self._ingest_one(path, name, kb, file_progress, origin=origin, later=later))
            except IngestCancelled:
                log.info("ingest of %s cancelled", name)
                results.append(IngestResult(name, "cancelled", f"{name}: stopped; nothing of it was added."))
            except RagAppError as exc:
                log.info("ingest of %s refused: %s", name, exc)
                said = exc.said if isinstance(exc, IngestError) else None
                results.append(IngestResult(name=name, status="failed", message=str(exc), said=said))
            except Exception as exc:  # never let one file take the batch (or the app) down
                log.exception("unexpected failure ingesting %s", name)
                results.append(IngestResult(name=name, status="failed", message=f"{name}: unexpected error ({exc!r})."))
        # every file's turn is over (index == count): the batch's last step
        progress(IngestProgress(None, "index", 1.0, "updating keyword index", index=len(files), count=len(files)))
        self._store.refresh_keywords()
        return results

    def reindex(self, doc_id: str, progress: Progress = no_progress) -> IngestResult:
        """Parse, chunk and embed a document again from its kept file (after a parser or embedder change), in
        place: same id, name and knowledge base. Until the new chunks are stored, the old ones answer."""
        catalog = self._store.catalog
        doc = catalog.document(doc_id)
        if doc is None:
            raise IngestError(said=DOCUMENT_GONE)
        kept = self._store.files.find(doc_id) if self._store.files is not None else None
        if kept is None:
            raise IngestError(said=Said("ingest.file_not_kept", {"name": doc.name}))
        result = self._ingest_one(kept, doc.name, doc.kb, _FileProgress(progress, doc.name, 0, 1), again=doc)
        progress(IngestProgress(None, "index", 1.0, "updating keyword index"))
        self._store.refresh_keywords()
        return result

    def _ingest_one(
        self,
        path: Path,
        name: str,
        kb: str,
        progress: _FileProgress,
        again: DocumentRecord | None = None,
        origin: FileOrigin | None = None,
        later: bool = False,
    ) -> IngestResult:
        """``path`` read, chunked and embedded (``_prepare``), then stored (``_commit``); ``again``: the
        document's own record, when it is indexed again under the same ids (its origin is kept then); ``later``:
        its vectors are left to the background (never for ``again``: until the new chunks are embedded, the
        old ones answer)."""
        prepared = self._prepare(path, name, kb, progress, again, origin, later and again is None)
        if isinstance(prepared, IngestResult):
            return prepared
        progress("store", 0.97, "storing", len(prepared.chunks), len(prepared.chunks))  # may wait for the write lock
        return self._commit(prepared, again)

    def _prepare(
        self,
        path: Path,
        name: str,
        kb: str,
        progress: _FileProgress,
        again: DocumentRecord | None,
        origin: FileOrigin | None = None,
        later: bool = False,
    ) -> _Prepared | IngestResult:
        """Everything before the stores are touched: the limits, the duplicate check, parsing (OCR included),
        boilerplate, chunks and their vectors (none when ``later``); or the result, for a file already there."""
        size = path.stat().st_size
        self.check_size(name, size)
        content_hash = file_sha256(path)
        existing = self._store.catalog.document_by_hash(content_hash)
        if existing is not None and again is None:
            return IngestResult(
                name=name,
                status="duplicate",
                message=(there := already_there(name, existing)).english,
                doc_id=existing.doc_id,
                chunks=existing.chunk_count,
                said=there,
            )
        progress("parse", 0.02, "reading")
        scanned = False  # OCR takes most of a scanned document's time: embedding's share starts later then
        reached = 0.02  # the share never goes back: OCR's own count starts after the pages were read

        def parse_progress(phase: str, fraction: float, message: str, done: int | None, total: int | None) -> None:
            nonlocal scanned, reached
            scanned = scanned or phase == "ocr"
            shown: IngestPhase = cast(IngestPhase, phase) if phase in ("ocr", "tables", "figures") else "parse"
            reached = max(reached, 0.02 + (0.6 if phase == "ocr" else 0.08) * fraction)
            progress(shown, reached, message, done, total)

        file_type = _content_type(name, origin, again)
        doc_id = content_hash[:16]
        parsed, split = parse_to_the_floor(
            path, name, doc_id, self._settings, self._parse_options, parse_progress, file_type
        )  # fmt: skip
        progress("chunk", 0.62 if scanned else 0.1, "chunking")
        chunks = chunk_document(split.doc, doc_id, self._settings.chunk_size, self._settings.chunk_overlap)
        if not chunks:
            raise IngestError(said=Said("ingest.no_text", {"name": name}))
        if len(chunks) > self._settings.max_chunks:
            raise _too_many_chunks(name, len(chunks), self._settings.max_chunks)
        budget = chunk_budget([c.text for c in chunks], self._settings.text_bytes_per_chunk)
        if budget.over:  # before a quarter of an hour goes into embedding the same row again and again
            raise mostly_repetition(name, budget)
        # How much of its text reached the chunks, once the file is sure to be kept: the coverage reads the file
        # again (a sheet of 20 million cells: twice its parse), which a refused file need not wait for.
        report = with_coverage(path, parsed, chunks, split.skipped)
        record = DocumentRecord(
            doc_id=doc_id,
            name=name,
            file_type=parsed.file_type,
            content_hash=content_hash,
            size_bytes=size,
            pages=parsed.pages,
            chunk_count=len(chunks),
            added_at=utc_now(),
            kb=kb,
        )
        n = len(chunks)
        start = 0.62 if scanned else 0.1
        vectors = None  # later: the background embeds them
        if not later:
            progress("embed", start, f"{n} chunks", 0, n)  # chunked: embedding starts
            vectors = embed_chunks(
                self._store.embedder,
                chunks,
                lambda f, m: progress("embed", start + (0.97 - start) * f, m, round(f * n), n),
            )
        meta = file_meta(path, file_type or Path(name).suffix.lstrip(".") or parsed.file_type) | origin_meta(origin)
        return _Prepared(path, record, chunks, vectors, split, report, parsed.ocr_boxes, meta)

    def _commit(self, prepared: _Prepared, again: DocumentRecord | None) -> IngestResult:
        """``prepared`` into the stores, under the write lock (across replicas too): the kept file, the vectors,
        then the catalog in one transaction; a failure at any step leaves the knowledge base as it was."""
        record, chunks, catalog = prepared.record, prepared.chunks, self._store.catalog
        name, kb, doc_id = record.name, record.kb, record.doc_id
        # Across replicas too: a replica starting now must not take these vectors for leftovers (reconcile).
        with self._store.write_lock, catalog.database.mutex(WRITES):
            winner = catalog.document_by_hash(record.content_hash)
            if winner is not None and again is None:  # a concurrent upload of the same file won
                there = already_there(name, winner)
                return IngestResult(name, "duplicate", there.english, doc_id, len(chunks), said=there)
            files = self._store.files
            if again is None and files is not None:
                files.keep(doc_id, prepared.path, Path(name).suffix)
            try:
                if again is not None:  # same ids: the old vectors go first (a chunk may change language)
                    self._store.vectors.delete([c.chunk_id for c in catalog.document_chunks(again.doc_id)])
                if prepared.vectors is not None:
                    self._store.vectors.add(
                        [c.chunk_id for c in chunks],
                        prepared.vectors,
                        [doc_id] * len(chunks),
                        [language_of(c.text) for c in chunks],
                        [kb] * len(chunks),
                    )
            except Exception as exc:  # e.g. the Chroma server went away: the catalog never heard of this file
                self._undo_vectors([c.chunk_id for c in chunks], again is not None)
                if again is None and files is not None:
                    files.remove(doc_id)
                raise IngestError(said=Said("ingest.vectors_refused", {"name": name, "error": str(exc)})) from exc
            try:
                with catalog.transaction() as tx:
                    replaced = catalog.store_document(
                        tx, record, chunks, prepared.split.skipped, prepared.report, prepared.ocr_boxes,
                        again=again is not None, meta=prepared.meta,
                    )  # fmt: skip
            except ContentAlreadyStored as lost:  # another replica stored the same file since the check above
                return lost_race(self._store, name, kb, lost, chunks)
            except Exception:
                self._store.vectors.delete([c.chunk_id for c in chunks])
                if again is not None:  # the old chunks are still the catalog's: give them their vectors back
                    self._reembed_missing()
                elif files is not None:
                    files.remove(doc_id)
                raise
            if prepared.vectors is None and self._enricher is not None:  # under the lock: before a search sees it
                self._enricher.wake(kb)
            if again is None:
                self._store.vectors.delete([cid for old in replaced for cid in old.chunk_ids])
                if files is not None:
                    for old in replaced:
                        files.remove(old.record.doc_id)
        if again is None and replaced and self._enricher is not None:
            self._enricher.forget([cid for old in replaced for cid in old.chunk_ids])
        if again is not None:
            return IngestResult(name, "replaced", f"{name}: indexed again ({len(chunks)} chunks).", doc_id, len(chunks))
        notes = tuple(note for note in (prepared.split.note, prepared.report.coverage_said()) if note is not None)
        counts = "; ".join([f"{len(chunks)} chunks", *(note.english for note in notes)])
        if replaced:
            message = f"{name}: replaced the earlier version in '{kb}' ({counts})."
            return IngestResult(name, "replaced", message, doc_id, len(chunks), kb, notes)
        return IngestResult(name, "added", f"{name}: added to '{kb}' ({counts}).", doc_id, len(chunks), kb, notes)

    def _undo_vectors(self, chunk_ids: list[str], reindexing: bool) -> None:
        """Best effort after a failed vector write: the part that got in goes, a reindexed document gets its old
        vectors back. What the store refuses now, the next start's ``reconcile`` puts right."""
        try:
            self._store.vectors.delete(chunk_ids)
            if reindexing:
                self._reembed_missing()
        except Exception:
            log.warning("vectors not cleaned up after a failed write; the next start reconciles them", exc_info=True)

    def _reembed_missing(self) -> None:
        """Vectors for the catalog's chunks that have none (called holding the write lock)."""
        present = self._store.vectors.ids()
        missing = [c for c in self._store.catalog.all_chunks() if c.chunk_id not in present]
        if missing:
            kb_of = self._store.catalog.chunk_kbs()
            vectors = embed_chunks(self._store.embedder, missing, lambda _f, _m: None)
            self._store.vectors.add(
                [c.chunk_id for c in missing], vectors, [c.doc_id for c in missing],
                [language_of(c.text) for c in missing], [kb_of.get(c.chunk_id, DEFAULT_KB) for c in missing],
            )  # fmt: skip

    def delete(self, doc_id: str) -> str:
        """Remove a document everywhere; returns its name."""
        catalog = self._store.catalog
        doc = catalog.document(doc_id)
        if doc is None:
            raise IngestError(said=DOCUMENT_GONE)
        with self._store.write_lock:
            with catalog.transaction() as tx:
                chunk_ids = catalog.delete_document(tx, doc_id)
            self._store.vectors.delete(chunk_ids)
            if self._store.files is not None:
                self._store.files.remove(doc_id)
        if self._enricher is not None:
            self._enricher.forget(chunk_ids)
        self._store.refresh_keywords()
        return doc.name

    def move(self, doc_id: str, kb: str) -> str:
        """Put a document in knowledge base ``kb`` (catalog and vector tags; nothing is re-embedded).

        Returns:
            The document's name.

        Raises:
            IngestError: the document is gone, ``kb`` is not a valid name, or ``kb`` already holds a
                document of the same name.
        """
        kb = kb_name(kb)
        catalog = self._store.catalog
        with self._store.write_lock:
            doc = catalog.document(doc_id)
            if doc is None:
                raise IngestError(said=DOCUMENT_GONE)
            if doc.kb == kb:
                return doc.name
            with catalog.transaction() as tx:
                catalog.lock_kb(tx, kb)  # another replica may be putting a document of that name there
                if catalog.documents_named(doc.name, kb):
                    raise IngestError(said=Said("library.name_taken", {"kb": kb, "name": doc.name}))
                chunk_ids = catalog.move_document(tx, doc_id, kb)
            self._store.vectors.set_kbs(dict.fromkeys(chunk_ids, kb))
        self._store.refresh_keywords()
        return doc.name

    def rename(self, doc_id: str, name: str, origin: FileOrigin | None = None) -> str:
        """Call a document ``name`` within its knowledge base (a synced file that moved: nothing is re-embedded);
        ``origin``: where its file now is, which its metadata (source, path, folder, changed) then says.

        Returns:
            The name it had.

        Raises:
            IngestError: the document is gone, or its knowledge base already holds a document called ``name``.
        """
        catalog = self._store.catalog
        with self._store.write_lock:
            doc = catalog.document(doc_id)
            if doc is None:
                raise IngestError(said=DOCUMENT_GONE)
            name = document_name(name, Path(doc.name))
            if doc.name == name and origin is None:
                return doc.name
            with catalog.transaction() as tx:
                catalog.lock_kb(tx, doc.kb)  # another replica may be putting a document of that name there
                if name != doc.name and catalog.documents_named(name, doc.kb):
                    raise IngestError(said=Said("library.name_taken", {"kb": doc.kb, "name": name}))
                catalog.rename_document(tx, doc_id, name, origin_meta(origin))
        self._store.refresh_keywords()
        return doc.name
