"""The SQLite catalog: documents and chunks. It is the source of truth; the vector and keyword
indexes are derived from it and can be rebuilt from it.

Every write bumps ``version``, so derived indexes (BM25, caches) know when they are stale.

Each document belongs to one named knowledge base (``documents.kb``); catalogs from before knowledge
bases existed gain the column on open, with every old document in ``default``.

``skipped_sections`` lists the pages of each document left out as boilerplate (never in ``chunks``, so
the derived indexes never see them); older catalogs gain the empty table on open.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from ragapp.core.types import DEFAULT_KB, Chunk, DocumentRecord, KnowledgeBase, OcrBox, ParseReport, SkippedSection

_SCHEMA = """
PRAGMA foreign_keys = ON;
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    file_type TEXT NOT NULL,
    content_hash TEXT NOT NULL UNIQUE,
    size_bytes INTEGER NOT NULL,
    pages INTEGER,
    chunk_count INTEGER NOT NULL,
    added_at TEXT NOT NULL,
    kb TEXT NOT NULL DEFAULT 'default'
);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    text TEXT NOT NULL,
    page INTEGER,
    heading TEXT,
    ocr_confidence REAL,
    has_table INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS chunks_by_doc ON chunks(doc_id, ordinal);
CREATE TABLE IF NOT EXISTS skipped_sections (
    doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    page INTEGER,
    heading TEXT,
    reason TEXT NOT NULL,
    preview TEXT NOT NULL,
    PRIMARY KEY (doc_id, ordinal)
);
CREATE TABLE IF NOT EXISTS parse_reports (
    doc_id TEXT PRIMARY KEY REFERENCES documents(doc_id) ON DELETE CASCADE,
    report TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ocr_boxes (
    doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    page INTEGER NOT NULL,
    text TEXT NOT NULL,
    x0 REAL NOT NULL, y0 REAL NOT NULL, x1 REAL NOT NULL, y1 REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS ocr_boxes_by_page ON ocr_boxes(doc_id, page);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
# Run after the migrations, since older catalogs lack the columns they index.
_INDEXES = """
CREATE INDEX IF NOT EXISTS documents_by_kb ON documents(kb, name);
"""

_DOC_COLUMNS = "doc_id, name, file_type, content_hash, size_bytes, pages, chunk_count, added_at, kb"

_CHUNK_COLUMNS = "c.chunk_id, c.doc_id, c.ordinal, c.text, d.name, c.page, c.heading, c.ocr_confidence, c.has_table"


def _chunk(row: tuple[object, ...]) -> Chunk:
    chunk_id, doc_id, ordinal, text, source, page, heading, ocr_confidence, has_table = row
    return Chunk(
        str(chunk_id), str(doc_id), int(ordinal), str(text), str(source),  # type: ignore[call-overload]
        page, heading, ocr_confidence, bool(has_table),  # type: ignore[arg-type]
    )  # fmt: skip


class Catalog:
    """Thread-safe access to the catalog database (one connection, one lock)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.executescript(_SCHEMA)
        self._migrate()
        self._conn.executescript(_INDEXES)
        self._lock = threading.RLock()

    def _migrate(self) -> None:
        columns = {row[1] for row in self._conn.execute("PRAGMA table_info(documents)")}
        if "kb" not in columns:  # a catalog from before knowledge bases: its documents go to the default one
            self._conn.execute(f"ALTER TABLE documents ADD COLUMN kb TEXT NOT NULL DEFAULT '{DEFAULT_KB}'")
        chunk_columns = {row[1] for row in self._conn.execute("PRAGMA table_info(chunks)")}
        if "ocr_confidence" not in chunk_columns:  # from before OCR and tables: no chunk was either
            self._conn.execute("ALTER TABLE chunks ADD COLUMN ocr_confidence REAL")
            self._conn.execute("ALTER TABLE chunks ADD COLUMN has_table INTEGER NOT NULL DEFAULT 0")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """All-or-nothing writes; bumps the version on commit."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
                self._conn.execute(
                    "INSERT INTO meta(key, value) VALUES('version', '1') ON CONFLICT(key) "
                    "DO UPDATE SET value = CAST(value AS INTEGER) + 1"
                )
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    # -- reads ---------------------------------------------------------------------------------

    @property
    def version(self) -> int:
        return int(self.get_meta("version") or 0)

    def get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def documents(self, where: str = "", params: tuple[str, ...] = ()) -> list[DocumentRecord]:
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_DOC_COLUMNS} FROM documents {where} ORDER BY added_at DESC, name", params
            ).fetchall()
        return [DocumentRecord(*row) for row in rows]

    def document_by_hash(self, content_hash: str) -> DocumentRecord | None:
        found = self.documents("WHERE content_hash = ?", (content_hash,))
        return found[0] if found else None

    def documents_named(self, name: str, kb: str | None = None) -> list[DocumentRecord]:
        """Documents called ``name``: in knowledge base ``kb``, or in any when ``kb`` is None."""
        if kb is None:
            return self.documents("WHERE name = ?", (name,))
        return self.documents("WHERE name = ? AND kb = ?", (name, kb))

    def document(self, doc_id: str) -> DocumentRecord | None:
        found = self.documents("WHERE doc_id = ?", (doc_id,))
        return found[0] if found else None

    def knowledge_bases(self) -> list[KnowledgeBase]:
        """Every knowledge base that holds a document, by name, with its document and chunk counts."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT d.kb, COUNT(DISTINCT d.doc_id), COUNT(c.chunk_id) "
                "FROM documents d LEFT JOIN chunks c USING(doc_id) GROUP BY d.kb ORDER BY d.kb"
            ).fetchall()
        return [KnowledgeBase(str(kb), int(docs), int(chunks)) for kb, docs, chunks in rows]

    def chunk_kbs(self) -> dict[str, str]:
        """The knowledge base of every chunk, by chunk id (what the derived indexes filter on)."""
        with self._lock:
            rows = self._conn.execute("SELECT c.chunk_id, d.kb FROM chunks c JOIN documents d USING(doc_id)")
            return {str(cid): str(kb) for cid, kb in rows}

    def document_count(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0])

    def chunks(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        """The chunks among ``chunk_ids`` that still exist; unknown ids are simply absent."""
        ids = list(dict.fromkeys(chunk_ids))
        found: dict[str, Chunk] = {}
        with self._lock:
            for start in range(0, len(ids), 500):  # stay under SQLite's variable limit
                batch = ids[start : start + 500]
                marks = ",".join("?" * len(batch))
                rows = self._conn.execute(
                    f"SELECT {_CHUNK_COLUMNS} FROM chunks c JOIN documents d USING(doc_id) "
                    f"WHERE c.chunk_id IN ({marks})",
                    batch,
                ).fetchall()
                found.update((row[0], _chunk(row)) for row in rows)
        return found

    def chunk_window(self, chunk_id: str, window: int) -> list[Chunk]:
        """The chunk and up to ``window`` neighbours on each side in its document, in reading order; [] if
        the chunk does not exist."""
        with self._lock:
            row = self._conn.execute("SELECT doc_id, ordinal FROM chunks WHERE chunk_id = ?", (chunk_id,)).fetchone()
            if row is None:
                return []
            doc_id, ordinal = row
            rows = self._conn.execute(
                f"SELECT {_CHUNK_COLUMNS} FROM chunks c JOIN documents d USING(doc_id) "
                "WHERE c.doc_id = ? AND c.ordinal BETWEEN ? AND ? ORDER BY c.ordinal",
                (doc_id, ordinal - window, ordinal + window),
            ).fetchall()
        return [_chunk(r) for r in rows]

    def all_chunks(self) -> list[Chunk]:
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_CHUNK_COLUMNS} FROM chunks c JOIN documents d USING(doc_id) "
                "ORDER BY d.added_at, c.doc_id, c.ordinal"
            ).fetchall()
        return [_chunk(row) for row in rows]

    def document_chunks(self, doc_id: str) -> list[Chunk]:
        """The chunks of one document, in order (by the index on doc_id, not a scan of every chunk)."""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_CHUNK_COLUMNS} FROM chunks c JOIN documents d USING(doc_id) "
                "WHERE c.doc_id = ? ORDER BY c.ordinal",
                (doc_id,),
            ).fetchall()
        return [_chunk(row) for row in rows]

    def parse_report(self, doc_id: str) -> ParseReport | None:
        """How the document read (pages with text, OCR'd pages, tables); None for documents from before."""
        with self._lock:
            row = self._conn.execute("SELECT report FROM parse_reports WHERE doc_id = ?", (doc_id,)).fetchone()
        if row is None:
            return None
        try:
            data = json.loads(row[0])
        except ValueError:
            return None
        return ParseReport.from_dict(data) if isinstance(data, dict) else None

    def ocr_boxes(self, doc_id: str, page: int) -> list[OcrBox]:
        """Where OCR read each line of the page (none for a page with a text layer)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT page, text, x0, y0, x1, y1 FROM ocr_boxes WHERE doc_id = ? AND page = ? ORDER BY rowid",
                (doc_id, page),
            ).fetchall()
        return [OcrBox(*row) for row in rows]

    def skipped_sections(self, doc_id: str) -> list[SkippedSection]:
        """The sections of ``doc_id`` left out as boilerplate, in document order."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT doc_id, ordinal, page, heading, reason, preview FROM skipped_sections "
                "WHERE doc_id = ? ORDER BY ordinal",
                (doc_id,),
            ).fetchall()
        return [SkippedSection(*row) for row in rows]

    def skipped_counts(self) -> dict[str, int]:
        """How many sections each document had left out, by doc id (documents with none are absent)."""
        with self._lock:
            rows = self._conn.execute("SELECT doc_id, COUNT(*) FROM skipped_sections GROUP BY doc_id")
            return {str(doc_id): int(n) for doc_id, n in rows}

    def chunk_count(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])

    # -- writes --------------------------------------------------------------------------------

    def add_document(
        self,
        conn: sqlite3.Connection,
        record: DocumentRecord,
        chunks: list[Chunk],
        skipped: Iterable[SkippedSection] = (),
        report: ParseReport | None = None,
        boxes: Iterable[OcrBox] = (),
    ) -> None:
        """Insert inside a ``transaction()`` so the caller can roll back with the other stores."""
        conn.execute(
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
        conn.executemany(
            "INSERT INTO chunks (chunk_id, doc_id, ordinal, text, page, heading, ocr_confidence, has_table) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (c.chunk_id, c.doc_id, c.ordinal, c.text, c.page, c.heading, c.ocr_confidence, int(c.has_table))
                for c in chunks
            ],
        )
        conn.executemany(
            "INSERT INTO skipped_sections VALUES (?, ?, ?, ?, ?, ?)",
            [(s.doc_id, s.ordinal, s.page, s.heading, s.reason, s.preview) for s in skipped],
        )
        conn.executemany(
            "INSERT INTO ocr_boxes (doc_id, page, text, x0, y0, x1, y1) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(record.doc_id, b.page, b.text, b.x0, b.y0, b.x1, b.y1) for b in boxes],
        )
        if report is not None:
            conn.execute(
                "INSERT INTO parse_reports (doc_id, report) VALUES (?, ?)",
                (record.doc_id, json.dumps(report.to_dict())),
            )

    def delete_document(self, conn: sqlite3.Connection, doc_id: str) -> list[str]:
        """Delete inside a ``transaction()`` (its chunks and skipped sections go by cascade); returns the ids
        of the chunks removed."""
        ids = [r[0] for r in conn.execute("SELECT chunk_id FROM chunks WHERE doc_id = ?", (doc_id,))]
        conn.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,))
        return ids

    def move_document(self, conn: sqlite3.Connection, doc_id: str, kb: str) -> list[str]:
        """Put a document in knowledge base ``kb``, inside a ``transaction()``; returns its chunk ids."""
        conn.execute("UPDATE documents SET kb = ? WHERE doc_id = ?", (kb, doc_id))
        return [r[0] for r in conn.execute("SELECT chunk_id FROM chunks WHERE doc_id = ? ORDER BY ordinal", (doc_id,))]


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")
