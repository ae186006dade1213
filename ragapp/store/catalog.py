"""The SQLite catalog: documents and chunks. It is the source of truth; the vector and keyword
indexes are derived from it and can be rebuilt from it.

Every write bumps ``version``, so derived indexes (BM25, caches) know when they are stale.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from ragapp.types import Chunk, DocumentRecord

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
    added_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    text TEXT NOT NULL,
    page INTEGER,
    heading TEXT
);
CREATE INDEX IF NOT EXISTS chunks_by_doc ON chunks(doc_id, ordinal);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

_CHUNK_COLUMNS = "c.chunk_id, c.doc_id, c.ordinal, c.text, d.name, c.page, c.heading"


class Catalog:
    """Thread-safe access to the catalog database (one connection, one lock)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.executescript(_SCHEMA)
        self._lock = threading.RLock()

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
                "SELECT doc_id, name, file_type, content_hash, size_bytes, pages, chunk_count, added_at "
                f"FROM documents {where} ORDER BY added_at DESC, name",
                params,
            ).fetchall()
        return [DocumentRecord(*row) for row in rows]

    def document_by_hash(self, content_hash: str) -> DocumentRecord | None:
        found = self.documents("WHERE content_hash = ?", (content_hash,))
        return found[0] if found else None

    def documents_named(self, name: str) -> list[DocumentRecord]:
        return self.documents("WHERE name = ?", (name,))

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
                found.update((row[0], Chunk(*row)) for row in rows)
        return found

    def all_chunks(self) -> list[Chunk]:
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_CHUNK_COLUMNS} FROM chunks c JOIN documents d USING(doc_id) "
                "ORDER BY d.added_at, c.doc_id, c.ordinal"
            ).fetchall()
        return [Chunk(*row) for row in rows]

    def chunk_count(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])

    # -- writes --------------------------------------------------------------------------------

    def add_document(self, conn: sqlite3.Connection, record: DocumentRecord, chunks: list[Chunk]) -> None:
        """Insert inside a ``transaction()`` so the caller can roll back with the other stores."""
        conn.execute(
            "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.doc_id,
                record.name,
                record.file_type,
                record.content_hash,
                record.size_bytes,
                record.pages,
                record.chunk_count,
                record.added_at,
            ),
        )
        conn.executemany(
            "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?)",
            [(c.chunk_id, c.doc_id, c.ordinal, c.text, c.page, c.heading) for c in chunks],
        )

    def delete_document(self, conn: sqlite3.Connection, doc_id: str) -> list[str]:
        """Delete inside a ``transaction()``; returns the ids of the chunks removed."""
        ids = [r[0] for r in conn.execute("SELECT chunk_id FROM chunks WHERE doc_id = ?", (doc_id,))]
        conn.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,))
        return ids


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")
