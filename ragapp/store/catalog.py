"""The catalog: documents and chunks. It is the source of truth; the vector and keyword indexes are derived
from it and can be rebuilt from it.

It lives in a SQLite file (the default) or in the PostgreSQL database that several replicas share; every
statement below is written once for both (see ``ragapp.db``), only the table definitions differ.

Every write bumps ``version``, so derived indexes (BM25, caches) know when they are stale, and the count of changes
to the knowledge bases it touched (``kb_versions``), so what rests on one knowledge base alone knows when it is. With
replicas both are read from the database each time: another replica may have written since.

Each document belongs to one named knowledge base (``documents.kb``); catalogs from before knowledge
bases existed gain the column on open, with every old document in ``default``.

``skipped_sections`` lists the pages of each document left out as boilerplate (never in ``chunks``, so
the derived indexes never see them); older catalogs gain the empty table on open.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from ragapp.core.errors import DuplicateDocumentError
from ragapp.core.filters import DocumentFilter
from ragapp.core.lifecycle import started
from ragapp.core.types import Chunk, DocumentRecord, Figure, KnowledgeBase, OcrBox, ParseReport, Scope, SkippedSection
from ragapp.db import Database, Rows, SqliteDatabase, Transaction
from ragapp.store import doc_meta
from ragapp.store.catalog_schema import prepare

# The version is text (meta holds text); both engines add to it in place, so concurrent writers never lose a bump.
_BUMP = (
    "INSERT INTO meta (key, value) VALUES ('version', '1') ON CONFLICT (key) "
    "DO UPDATE SET value = CAST(CAST(meta.value AS INTEGER) + 1 AS TEXT)"
)

_DOC_COLUMNS = "doc_id, name, file_type, content_hash, size_bytes, pages, chunk_count, added_at, kb"

_CHUNK_COLUMNS = (
    "c.chunk_id, c.doc_id, c.ordinal, c.text, d.name, c.page, c.heading, c.ocr_confidence, c.has_table, c.figure"
)

_BATCH = 500  # ids per IN (...): under SQLite's variable limit


def _chunk(row: tuple[object, ...]) -> Chunk:
    chunk_id, doc_id, ordinal, text, source, page, heading, ocr_confidence, has_table, figure = row
    return Chunk(
        str(chunk_id), str(doc_id), int(ordinal), str(text), str(source),  # type: ignore[call-overload]
        page, heading, ocr_confidence, bool(has_table),  # type: ignore[arg-type]
        figure=_figure(figure),
    )  # fmt: skip


def _figure(stored: object) -> Figure | None:
    """A figure's place and caption, stored as JSON text (one column, read with its chunk)."""
    if not stored:
        return None
    return Figure(**json.loads(str(stored)))


def _chunk_row(c: Chunk) -> tuple[object, ...]:
    figure = None if c.figure is None else json.dumps(asdict(c.figure), ensure_ascii=False)
    return (c.chunk_id, c.doc_id, c.ordinal, c.text, c.page, c.heading, c.ocr_confidence, int(c.has_table), figure)


class ContentAlreadyStored(DuplicateDocumentError):
    """The same bytes are in the catalog already: stored a moment ago by another upload (on this replica or
    another one) that won the race. ``existing`` is that document (None if it has gone again since)."""

    def __init__(self, content_hash: str, existing: DocumentRecord | None) -> None:
        where = f" as {existing.name} in '{existing.kb}'" if existing is not None else ""
        super().__init__(f"This file is already in the knowledge base{where}; nothing changed.")
        self.content_hash = content_hash
        self.existing = existing


def _unique_violation(exc: BaseException) -> bool:
    """Whether ``exc`` is a UNIQUE or PRIMARY KEY violation, from either driver (by its SQLSTATE, so the store never
    imports psycopg: the driver stays behind ``ragapp.db``)."""
    if isinstance(exc, sqlite3.IntegrityError):
        return getattr(exc, "sqlite_errorname", "") in {"SQLITE_CONSTRAINT_UNIQUE", "SQLITE_CONSTRAINT_PRIMARYKEY"}
    return getattr(exc, "sqlstate", None) == "23505"  # psycopg.errors.UniqueViolation


@dataclass(frozen=True)
class Replaced:
    """A document that ``store_document`` deleted to make way for the new one, and the ids of its chunks."""

    record: DocumentRecord
    chunk_ids: list[str]


class Catalog:
    """Thread-safe access to the catalog: a SQLite file of its own (given a path) or a shared ``Database``."""

    def __init__(self, target: Path | Database) -> None:
        self._target = target
        # A database handed in belongs to whoever opened it (every store of a deployment shares it): not closed here.
        self._owned = not isinstance(target, Database)
        self._started: Database | None = None

    def start(self) -> Self:
        """Open the file (given a path) and create or migrate the tables; a second call does nothing."""
        if self._started is None:
            db = self._target if isinstance(self._target, Database) else SqliteDatabase(self._target)
            prepare(db)
            self._started = db
        return self

    @property
    def _db(self) -> Database:
        return started(self, self._started)

    @property
    def database(self) -> Database:
        """Where the catalog lives: its own SQLite file, or the database it shares with the other stores."""
        return self._db

    def close(self) -> None:
        if self._owned and self._started is not None:
            self._started.close()

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """All-or-nothing writes; bumps the version on commit. Inside another transaction of the same database
        (in this thread) it is part of that one."""
        with self._db.transaction() as tx:
            yield tx
            tx.execute(_BUMP)

    # -- reads ---------------------------------------------------------------------------------

    @property
    def version(self) -> int:
        """The number of committed writes, read afresh each time (one indexed lookup): another replica may
        have written since the last call."""
        return int(self.get_meta("version") or 0)

    def kb_versions(self, kbs: Scope = None) -> dict[str, int]:
        """The count of changes to each knowledge base of ``kbs`` (None: every one ever written to), read afresh;
        a knowledge base never written to counts 0. Triggers keep the counts (``catalog_schema``)."""
        counts = {str(kb): int(n) for kb, n in self._db.query("SELECT kb, version FROM kb_versions")}
        return counts if kbs is None else {kb: counts.get(kb, 0) for kb in kbs}

    def get_meta(self, key: str) -> str | None:
        row = self._db.one("SELECT value FROM meta WHERE key = ?", (key,))
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self._db.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def documents(self, where: str = "", params: Sequence[Any] = ()) -> list[DocumentRecord]:
        return _documents(self._db.query, where, params)

    def document_by_hash(self, content_hash: str) -> DocumentRecord | None:
        found = self.documents("WHERE content_hash = ?", (content_hash,))
        return found[0] if found else None

    def documents_named(self, name: str, kb: str | None = None) -> list[DocumentRecord]:
        """Documents called ``name``: in knowledge base ``kb``, or in any when ``kb`` is None."""
        return _documents(self._db.query, *_named(name, kb))

    def document(self, doc_id: str) -> DocumentRecord | None:
        found = self.documents("WHERE doc_id = ?", (doc_id,))
        return found[0] if found else None

    def knowledge_bases(self) -> list[KnowledgeBase]:
        """Every knowledge base that holds a document, by name, with its document and chunk counts."""
        rows = self._db.query(
            "SELECT d.kb, COUNT(DISTINCT d.doc_id), COUNT(c.chunk_id) "
            "FROM documents d LEFT JOIN chunks c USING (doc_id) GROUP BY d.kb ORDER BY d.kb"
        )
        return [KnowledgeBase(str(kb), int(docs), int(chunks)) for kb, docs, chunks in rows]

    def chunk_kbs(self) -> dict[str, str]:
        """The knowledge base of every chunk, by chunk id (what the derived indexes filter on)."""
        rows = self._db.query("SELECT c.chunk_id, d.kb FROM chunks c JOIN documents d USING (doc_id)")
        return {str(cid): str(kb) for cid, kb in rows}

    def document_count(self) -> int:
        row = self._db.one("SELECT COUNT(*) FROM documents")
        return int(row[0]) if row else 0

    def chunks(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        """The chunks among ``chunk_ids`` that still exist; unknown ids are simply absent."""
        ids = list(dict.fromkeys(chunk_ids))
        found: dict[str, Chunk] = {}
        with self._db.transaction() as tx:  # one snapshot for every batch
            for start in range(0, len(ids), _BATCH):
                batch = ids[start : start + _BATCH]
                marks = ",".join("?" * len(batch))
                rows = tx.query(
                    f"SELECT {_CHUNK_COLUMNS} FROM chunks c JOIN documents d USING (doc_id) "
                    f"WHERE c.chunk_id IN ({marks})",
                    batch,
                )
                found.update((str(row[0]), _chunk(row)) for row in rows)
        return found

    def chunk_window(self, chunk_id: str, window: int) -> list[Chunk]:
        """The chunk and up to ``window`` neighbours on each side in its document, in reading order; [] if
        the chunk does not exist."""
        with self._db.transaction() as tx:
            row = tx.one("SELECT doc_id, ordinal FROM chunks WHERE chunk_id = ?", (chunk_id,))
            if row is None:
                return []
            doc_id, ordinal = row
            rows = tx.query(
                f"SELECT {_CHUNK_COLUMNS} FROM chunks c JOIN documents d USING (doc_id) "
                "WHERE c.doc_id = ? AND c.ordinal BETWEEN ? AND ? ORDER BY c.ordinal",
                (doc_id, ordinal - window, ordinal + window),
            )
        return [_chunk(r) for r in rows]

    def all_chunks(self) -> list[Chunk]:
        rows = self._db.query(
            f"SELECT {_CHUNK_COLUMNS} FROM chunks c JOIN documents d USING (doc_id) "
            "ORDER BY d.added_at, c.doc_id, c.ordinal"
        )
        return [_chunk(row) for row in rows]

    def document_chunks(self, doc_id: str) -> list[Chunk]:
        """The chunks of one document, in order (by the index on doc_id, not a scan of every chunk)."""
        rows = self._db.query(
            f"SELECT {_CHUNK_COLUMNS} FROM chunks c JOIN documents d USING (doc_id) "
            "WHERE c.doc_id = ? ORDER BY c.ordinal",
            (doc_id,),
        )
        return [_chunk(row) for row in rows]

    def parse_report(self, doc_id: str) -> ParseReport | None:
        """How the document read (pages with text, OCR'd pages, tables); None for documents from before."""
        row = self._db.one("SELECT report FROM parse_reports WHERE doc_id = ?", (doc_id,))
        if row is None:
            return None
        try:
            data = json.loads(row[0])
        except ValueError:
            return None
        return ParseReport.from_dict(data) if isinstance(data, dict) else None

    def ocr_boxes(self, doc_id: str, page: int) -> list[OcrBox]:
        """Where OCR read each line of the page (none for a page with a text layer), in the order OCR read them."""
        rows = self._db.query(
            "SELECT page, text, x0, y0, x1, y1 FROM ocr_boxes WHERE doc_id = ? AND page = ? ORDER BY line",
            (doc_id, page),
        )
        return [OcrBox(*row) for row in rows]

    def skipped_sections(self, doc_id: str) -> list[SkippedSection]:
        """The sections of ``doc_id`` left out as boilerplate, in document order."""
        rows = self._db.query(
            "SELECT doc_id, ordinal, page, heading, reason, preview FROM skipped_sections "
            "WHERE doc_id = ? ORDER BY ordinal",
            (doc_id,),
        )
        return [SkippedSection(*row) for row in rows]

    def skipped_counts(self) -> dict[str, int]:
        """How many sections each document had left out, by doc id (documents with none are absent)."""
        rows = self._db.query("SELECT doc_id, COUNT(*) FROM skipped_sections GROUP BY doc_id")
        return {str(doc_id): int(n) for doc_id, n in rows}

    def chunk_count(self) -> int:
        row = self._db.one("SELECT COUNT(*) FROM chunks")
        return int(row[0]) if row else 0

    def document_meta(self, doc_id: str) -> dict[str, str]:
        """What the document says about itself and where it came from (``ragapp.core.filters.META_KEYS``)."""
        return doc_meta.read_meta(self._db.query, doc_id)

    def tags(self, doc_id: str) -> list[str]:
        return doc_meta.read_tags(self._db.query, doc_id)

    def all_tags(self) -> list[tuple[str, int]]:
        """Every tag in use and how many documents carry it, by tag."""
        return doc_meta.all_tags(self._db.query)

    def matching(self, where: DocumentFilter, kbs: Scope = None) -> frozenset[str]:
        """The ids of the documents of ``kbs`` (None: all) that ``where`` admits: one query, at this version."""
        return doc_meta.matching(self._db.query, where, kbs)

    # -- writes --------------------------------------------------------------------------------

    def set_tags(self, doc_id: str, tags: Sequence[str]) -> bool:
        """Make ``tags`` (cleaned: ``ragapp.core.filters.clean_tags``) the document's; False if it is gone. Bumps
        the version, so cached searches filtered by tag are stale."""
        with self.transaction() as tx:
            if tx.one("SELECT 1 FROM documents WHERE doc_id = ?", (doc_id,)) is None:
                return False
            doc_meta.write_tags(tx, doc_id, tags)
        return True

    def add_document(
        self,
        tx: Transaction,
        record: DocumentRecord,
        chunks: list[Chunk],
        skipped: Iterable[SkippedSection] = (),
        report: ParseReport | None = None,
        boxes: Iterable[OcrBox] = (),
        meta: Mapping[str, str] | None = None,
    ) -> None:
        """Insert inside a ``transaction()`` so the caller can roll back with the other stores; ``meta``: what
        the file says about itself and where it came from (``document_meta``).

        Raises:
            ContentAlreadyStored: the same content (or document id) is stored already; the transaction must
                end (on PostgreSQL it can run nothing more), which rolls it back.
        """
        try:
            tx.execute(
                f"INSERT INTO documents ({_DOC_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.doc_id,
                    record.name,
                    record.file_type,
                    record.content_hash,
                    record.size_bytes,
                    record.pages,
                    record.chunk_count,
                    record.added_at,
                    record.kb,
                ),
            )
        except Exception as exc:
            if not _unique_violation(exc):
                raise
            # Who won is committed by now (PostgreSQL made this insert wait for it), but this transaction cannot
            # read it: on PostgreSQL it is aborted. The caller looks the winner up once it has rolled back.
            raise ContentAlreadyStored(record.content_hash, None) from exc
        tx.many(
            "INSERT INTO chunks (chunk_id, doc_id, ordinal, text, page, heading, ocr_confidence, has_table, figure) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [_chunk_row(c) for c in chunks],
        )
        tx.many(
            "INSERT INTO skipped_sections (doc_id, ordinal, page, heading, reason, preview) VALUES (?, ?, ?, ?, ?, ?)",
            [(s.doc_id, s.ordinal, s.page, s.heading, s.reason, s.preview) for s in skipped],
        )
        tx.many(
            "INSERT INTO ocr_boxes (doc_id, page, text, x0, y0, x1, y1, line) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(record.doc_id, b.page, b.text, b.x0, b.y0, b.x1, b.y1, line) for line, b in enumerate(boxes)],
        )
        if report is not None:
            tx.execute(
                "INSERT INTO parse_reports (doc_id, report) VALUES (?, ?)",
                (record.doc_id, json.dumps(report.to_dict())),
            )
        doc_meta.write_meta(tx, record.doc_id, meta or {})

    def store_document(
        self,
        tx: Transaction,
        record: DocumentRecord,
        chunks: list[Chunk],
        skipped: Iterable[SkippedSection] = (),
        report: ParseReport | None = None,
        boxes: Iterable[OcrBox] = (),
        *,
        again: bool = False,
        meta: Mapping[str, str] | None = None,
    ) -> list[Replaced]:
        """Add ``record`` inside a ``transaction()`` in place of the documents of the same name in its knowledge
        base (``again``: in place of its own earlier version, same id); returns what it replaced. The new
        version keeps the tags of what it replaces; indexed ``again`` it also keeps the metadata ``meta`` does
        not give anew (where it came from is not in the file).

        The check and the write happen under one lock per knowledge base, so two replicas storing the same
        name at once leave one document of that name, never two.

        Raises:
            ContentAlreadyStored: another upload stored the same content first (the transaction must end).
        """
        self.lock_kb(tx, record.kb)
        if again:
            replaced = _documents(tx.query, "WHERE doc_id = ?", (record.doc_id,))
        else:
            existing = _documents(tx.query, "WHERE content_hash = ?", (record.content_hash,))
            if existing:  # a concurrent upload of the same file, committed since the caller looked
                raise ContentAlreadyStored(record.content_hash, existing[0])
            replaced = _documents(tx.query, *_named(record.name, record.kb))
        tags = [t for old in replaced for t in doc_meta.read_tags(tx.query, old.doc_id)]
        kept = doc_meta.read_meta(tx.query, record.doc_id) if again else {}
        gone = [Replaced(old, self.delete_document(tx, old.doc_id)) for old in replaced]
        self.add_document(tx, record, chunks, skipped, report, boxes, kept | dict(meta or {}))
        doc_meta.write_tags(tx, record.doc_id, tags)
        return gone

    def lock_kb(self, tx: Transaction, kb: str) -> None:
        """Hold knowledge base ``kb``'s name lock until ``tx`` ends: a check for a name there and the write that
        relies on it must not interleave with another replica's."""
        tx.lock(f"catalog:kb:{kb}")

    def delete_document(self, tx: Transaction, doc_id: str) -> list[str]:
        """Delete inside a ``transaction()`` (its chunks and skipped sections go by cascade); returns the ids
        of the chunks removed."""
        ids = [str(r[0]) for r in tx.query("SELECT chunk_id FROM chunks WHERE doc_id = ?", (doc_id,))]
        tx.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,))
        return ids

    def rename_document(self, tx: Transaction, doc_id: str, name: str, meta: Mapping[str, str] | None = None) -> None:
        """Call a document ``name``, inside a ``transaction()`` (its chunks show the new name: they join it);
        ``meta``: metadata keys set anew with it (where a moved file now is)."""
        tx.execute("UPDATE documents SET name = ? WHERE doc_id = ?", (name, doc_id))
        if meta:
            doc_meta.replace_meta(tx, doc_id, meta)

    def move_document(self, tx: Transaction, doc_id: str, kb: str) -> list[str]:
        """Put a document in knowledge base ``kb``, inside a ``transaction()``; returns its chunk ids."""
        tx.execute("UPDATE documents SET kb = ? WHERE doc_id = ?", (kb, doc_id))
        return [str(r[0]) for r in tx.query("SELECT chunk_id FROM chunks WHERE doc_id = ? ORDER BY ordinal", (doc_id,))]


def _documents(run: Callable[[str, Sequence[Any]], Rows], where: str, params: Sequence[Any]) -> list[DocumentRecord]:
    rows = run(f"SELECT {_DOC_COLUMNS} FROM documents {where} ORDER BY added_at DESC, name", tuple(params))
    return [DocumentRecord(*row) for row in rows]


def _named(name: str, kb: str | None) -> tuple[str, tuple[str | None, ...]]:
    """The filter for documents called ``name`` in ``kb`` (any knowledge base when None)."""
    return "WHERE name = ? AND (CAST(? AS TEXT) IS NULL OR kb = ?)", (name, kb, kb)


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")
