"""Where sync keeps its sources and what it last saw of each file: tables in the catalog's database, so every
replica sharing the catalog shares them (and the lease that lets one replica at a time sync a source)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass

from ragapp.db import Database, SqliteDatabase
from ragapp.sync.sources import Source, SourceStatus, State, SyncReport

_TABLES = """
CREATE TABLE IF NOT EXISTS sync_sources (
    name TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    location TEXT NOT NULL,
    kb TEXT NOT NULL,
    include TEXT NOT NULL DEFAULT '[]',
    exclude TEXT NOT NULL DEFAULT '[]',
    interval_s {real} NOT NULL,
    branch TEXT NOT NULL DEFAULT '',
    paused {int} NOT NULL DEFAULT 0,
    state TEXT NOT NULL DEFAULT 'new',
    last_report TEXT,
    last_run_at TEXT NOT NULL DEFAULT '',
    commit_id TEXT NOT NULL DEFAULT '',
    holder TEXT,
    held_until {real},
    done {int} NOT NULL DEFAULT 0,
    total {int} NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS sync_files (
    source TEXT NOT NULL REFERENCES sync_sources(name) ON DELETE CASCADE,
    rel_path TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    size {int} NOT NULL,
    mtime_ns {int} NOT NULL,
    doc_id TEXT NOT NULL DEFAULT '',
    problem TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (source, rel_path)
);
CREATE INDEX IF NOT EXISTS sync_files_by_doc ON sync_files(doc_id)
"""
# A website's pages: what the next crawl asks the server with, and where a page unchanged since leads.
_PAGES = """
CREATE TABLE IF NOT EXISTS sync_pages (
    source TEXT NOT NULL REFERENCES sync_sources(name) ON DELETE CASCADE,
    url TEXT NOT NULL,
    etag TEXT NOT NULL DEFAULT '',
    last_modified TEXT NOT NULL DEFAULT '',
    links TEXT NOT NULL DEFAULT '[]',
    file_type TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (source, url)
)
"""
# PostgreSQL's steps, only ever appended to (``Database.ensure_schema``).
_POSTGRES_STEPS = (_TABLES.format(real="DOUBLE PRECISION", int="BIGINT"), _PAGES)
COMPONENT = "sync"

_SOURCE_COLUMNS = "name, kind, location, kb, include, exclude, interval_s, branch, paused"
_STATUS_COLUMNS = f"{_SOURCE_COLUMNS}, state, last_run_at, last_report, done, total, commit_id"


@dataclass(frozen=True)
class PageRow:
    """What the last crawl kept of a website's page beside its file row: the validators to ask again with
    (``ETag``, ``Last-Modified``), its links (followed when it has not changed, without reading it) and, for a
    sitemap, "sitemap" or "sitemap-index" as ``file_type``."""

    url: str
    etag: str = ""
    last_modified: str = ""
    links: tuple[str, ...] = ()
    file_type: str = ""


@dataclass(frozen=True)
class FileRow:
    """What the last sync saw of one file, and the document it became ('' when none: refused, ``problem``
    says why; the file is not read again until it changes)."""

    rel_path: str
    content_hash: str
    size: int
    mtime_ns: int
    doc_id: str = ""
    problem: str = ""


def _source(row: tuple[object, ...]) -> Source:
    name, kind, location, kb, include, exclude, interval_s, branch, paused = row[:9]
    return Source(
        str(name), kind, str(location), str(kb),  # type: ignore[arg-type]
        tuple(json.loads(str(include))), tuple(json.loads(str(exclude))), float(interval_s),  # type: ignore[arg-type]
        str(branch), bool(paused),
    )  # fmt: skip


class SyncStore:
    """The sync tables in ``database`` (created on ``start``)."""

    def __init__(self, database: Database) -> None:
        self._db = database

    def start(self) -> SyncStore:
        if isinstance(self._db, SqliteDatabase):
            self._db.script(_TABLES.format(real="REAL", int="INTEGER") + ";" + _PAGES)
        else:
            self._db.ensure_schema(COMPONENT, _POSTGRES_STEPS)
        return self

    # -- sources -----------------------------------------------------------------------------

    def add(self, source: Source) -> bool:
        """Store a new source; False when one of that name exists already."""
        changed = self._db.execute(
            f"INSERT INTO sync_sources ({_SOURCE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (name) DO NOTHING",
            (source.name, source.kind, source.location, source.kb, json.dumps(list(source.include)),
             json.dumps(list(source.exclude)), source.interval_s, source.branch, int(source.paused)),
        )  # fmt: skip
        return changed == 1

    def remove(self, name: str) -> bool:
        with self._db.transaction() as tx:
            tx.execute("DELETE FROM sync_files WHERE source = ?", (name,))
            tx.execute("DELETE FROM sync_pages WHERE source = ?", (name,))
            return tx.execute("DELETE FROM sync_sources WHERE name = ?", (name,)) == 1

    def sources(self) -> list[Source]:
        return [_source(r) for r in self._db.query(f"SELECT {_SOURCE_COLUMNS} FROM sync_sources ORDER BY name")]

    def source(self, name: str) -> Source | None:
        row = self._db.one(f"SELECT {_SOURCE_COLUMNS} FROM sync_sources WHERE name = ?", (name,))
        return None if row is None else _source(row)

    def statuses(self) -> list[SourceStatus]:
        rows = self._db.query(f"SELECT {_STATUS_COLUMNS}, holder, held_until FROM sync_sources ORDER BY name")
        out = []
        for row in rows:
            source = _source(row)
            state, last_run_at, report, done, total, commit, holder, held_until = row[9:]
            shown: State = "paused" if source.paused and state != "running" else state  # type: ignore[assignment]
            if state == "running" and (holder is None or float(held_until or 0) < time.time()):
                shown = "failed"  # the replica running it died: its lease ran out
            parsed = SyncReport.from_json(json.loads(str(report))) if report else None
            out.append(SourceStatus(source, shown, str(last_run_at), parsed, int(done), int(total), str(commit)))  # type: ignore[call-overload]
        return out

    def set_paused(self, name: str, paused: bool) -> bool:
        return self._db.execute("UPDATE sync_sources SET paused = ? WHERE name = ?", (int(paused), name)) == 1

    def is_paused(self, name: str) -> bool:
        row = self._db.one("SELECT paused FROM sync_sources WHERE name = ?", (name,))
        return row is None or bool(row[0])  # a removed source counts as paused: its sync stops

    def kb_followed(self, kb: str) -> str | None:
        """The source that fills knowledge base ``kb`` (None: none does)."""
        row = self._db.one("SELECT name FROM sync_sources WHERE kb = ?", (kb,))
        return None if row is None else str(row[0])

    # -- the lease: one replica at a time syncs a source ---------------------------------------

    def take(self, name: str, holder: str, lease_s: float) -> bool:
        """Hold ``name``'s lease for ``lease_s`` seconds when nobody holds it (or their lease ran out: the
        replica holding it died). One statement: two replicas trying at once cannot both get it."""
        now = time.time()
        return (
            self._db.execute(
                "UPDATE sync_sources SET holder = ?, held_until = ?, state = 'running', done = 0, total = 0 "
                "WHERE name = ? AND (holder IS NULL OR held_until < ?)",
                (holder, now + lease_s, name, now),
            )
            == 1
        )

    def renew(self, name: str, holder: str, lease_s: float, done: int, total: int) -> bool:
        """Extend the lease and record progress; False when the lease was lost (taken over after running out)."""
        return (
            self._db.execute(
                "UPDATE sync_sources SET held_until = ?, done = ?, total = ? WHERE name = ? AND holder = ?",
                (time.time() + lease_s, done, total, name, holder),
            )
            == 1
        )

    def release(self, name: str, holder: str, state: State, report: SyncReport, finished_at: str) -> None:
        self._db.execute(
            "UPDATE sync_sources SET holder = NULL, held_until = NULL, state = ?, last_report = ?, last_run_at = ?, "
            "commit_id = CASE WHEN ? = '' THEN commit_id ELSE ? END WHERE name = ? AND holder = ?",
            (state, json.dumps(report.to_json()), finished_at, report.commit, report.commit, name, holder),
        )

    def holder(self, name: str) -> str | None:
        row = self._db.one("SELECT holder, held_until FROM sync_sources WHERE name = ?", (name,))
        if row is None or row[0] is None or float(row[1] or 0) < time.time():
            return None
        return str(row[0])

    def commit(self, name: str) -> str:
        row = self._db.one("SELECT commit_id FROM sync_sources WHERE name = ?", (name,))
        return "" if row is None else str(row[0])

    # -- files ---------------------------------------------------------------------------------

    def files(self, source: str) -> dict[str, FileRow]:
        rows = self._db.query(
            "SELECT rel_path, content_hash, size, mtime_ns, doc_id, problem FROM sync_files WHERE source = ?", (source,)
        )
        return {str(r[0]): FileRow(str(r[0]), str(r[1]), int(r[2]), int(r[3]), str(r[4]), str(r[5])) for r in rows}

    def put(self, source: str, rows: Iterable[FileRow]) -> None:
        with self._db.transaction() as tx:
            tx.many(
                "INSERT INTO sync_files (source, rel_path, content_hash, size, mtime_ns, doc_id, problem) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (source, rel_path) DO UPDATE SET "
                "content_hash = excluded.content_hash, size = excluded.size, mtime_ns = excluded.mtime_ns, "
                "doc_id = excluded.doc_id, problem = excluded.problem",
                [(source, r.rel_path, r.content_hash, r.size, r.mtime_ns, r.doc_id, r.problem) for r in rows],
            )

    def drop(self, source: str, rel_paths: Iterable[str]) -> None:
        with self._db.transaction() as tx:
            tx.many("DELETE FROM sync_files WHERE source = ? AND rel_path = ?", [(source, p) for p in rel_paths])

    def move(self, source: str, old: str, new: FileRow) -> None:
        """A renamed file: its row follows it (one transaction)."""
        with self._db.transaction():
            self.drop(source, [old])
            self.put(source, [new])

    def paths_of(self, doc_id: str) -> list[tuple[str, str]]:
        """(source, path) of every synced file whose document is ``doc_id``."""
        rows = self._db.query("SELECT source, rel_path FROM sync_files WHERE doc_id = ?", (doc_id,))
        return [(str(s), str(p)) for s, p in rows]

    # -- a website's pages ---------------------------------------------------------------------

    def pages(self, source: str) -> dict[str, PageRow]:
        rows = self._db.query(
            "SELECT url, etag, last_modified, links, file_type FROM sync_pages WHERE source = ?", (source,)
        )
        return {
            str(r[0]): PageRow(str(r[0]), str(r[1]), str(r[2]), tuple(json.loads(str(r[3]))), str(r[4])) for r in rows
        }

    def put_pages(self, source: str, rows: Iterable[PageRow]) -> None:
        with self._db.transaction() as tx:
            tx.many(
                "INSERT INTO sync_pages (source, url, etag, last_modified, links, file_type) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (source, url) DO UPDATE SET etag = excluded.etag, last_modified = excluded.last_modified, "
                "links = excluded.links, file_type = excluded.file_type",
                [(source, r.url, r.etag, r.last_modified, json.dumps(list(r.links)), r.file_type) for r in rows],
            )

    def drop_pages(self, source: str, urls: Iterable[str]) -> None:
        with self._db.transaction() as tx:
            tx.many("DELETE FROM sync_pages WHERE source = ? AND url = ?", [(source, u) for u in urls])
