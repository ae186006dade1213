"""SQLite: one file per store, one connection shared under a lock (writes are short; WAL lets readers of other
processes go on)."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragapp.db.base import Database, Rows, Transaction, statements

log = logging.getLogger(__name__)

# Errors that mean another process holds the file, not that the file is broken: never move it aside then.
_IN_USE = {"SQLITE_BUSY", "SQLITE_LOCKED"}


class _SqliteTransaction(Transaction):
    dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, args: Sequence[Any] = ()) -> int:
        return self._conn.execute(sql, tuple(args)).rowcount

    def query(self, sql: str, args: Sequence[Any] = ()) -> Rows:
        return self._conn.execute(sql, tuple(args)).fetchall()

    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self._conn.executemany(sql, [tuple(r) for r in rows])

    def lock(self, name: str) -> None:
        pass  # BEGIN IMMEDIATE took the file's write lock already


class SqliteDatabase(Database):
    """``recover``: a file that is not a usable database is renamed to ``<name>.corrupt-<timestamp>`` and a fresh
    one started; if even that fails, an in-memory database keeps the app working until it restarts (for traces
    and chats, which must never stop the app; the catalog is never moved aside)."""

    dialect = "sqlite"

    def __init__(self, path: Path, *, schema: str = "", recover: bool = False) -> None:
        self.path = path
        self.where = str(path)
        self._lock = threading.RLock()
        self._local = threading.local()
        self._conn = _open(path, schema, recover)

    @property
    def connection(self) -> sqlite3.Connection:
        """The raw connection, for what only SQLite has (``PRAGMA table_info`` in old-file migrations)."""
        return self._conn

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        with self._lock:
            if getattr(self._local, "open", False):  # nested: part of the outer transaction
                yield _SqliteTransaction(self._conn)
                return
            self._conn.execute("BEGIN IMMEDIATE")
            self._local.open = True
            try:
                yield _SqliteTransaction(self._conn)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")
            finally:
                self._local.open = False

    # A statement on its own needs no BEGIN: in autocommit mode SQLite runs it atomically, and a read then never
    # takes the write lock (WAL lets it go on while another process writes).
    def execute(self, sql: str, args: Sequence[Any] = ()) -> int:
        with self._lock:
            return self._conn.execute(sql, tuple(args)).rowcount

    def query(self, sql: str, args: Sequence[Any] = ()) -> Rows:
        with self._lock:
            return self._conn.execute(sql, tuple(args)).fetchall()

    def script(self, script: str) -> None:
        """Run statements outside any transaction (``PRAGMA``s, and the old files' ``CREATE ... IF NOT EXISTS``)."""
        with self._lock:
            for statement in statements(script):
                self._conn.execute(statement)

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _open(path: Path, schema: str, recover: bool) -> sqlite3.Connection:
    with contextlib.suppress(OSError):  # a folder we cannot create shows up as an open error below
        path.parent.mkdir(parents=True, exist_ok=True)
    if not recover:
        return _connect(str(path), schema)
    try:
        return _connect(str(path), schema)
    except sqlite3.DatabaseError as exc:
        problem: Exception = exc
    if getattr(problem, "sqlite_errorname", "") not in _IN_USE:
        try:
            aside = _move_aside(path)
            log.warning("%s is not a usable database (%s): moved it to %s and started a new one", path, problem, aside)
            return _connect(str(path), schema)
        except (OSError, sqlite3.DatabaseError) as exc:
            problem = exc
    log.warning("could not open %s (%s): keeping records in memory until the app restarts", path, problem)
    return _connect(":memory:", schema)


def _connect(target: str, schema: str) -> sqlite3.Connection:
    # isolation_level=None: we issue BEGIN/COMMIT ourselves, so a statement outside a transaction commits alone.
    conn = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA foreign_keys=ON")
        for statement in statements(schema):
            conn.execute(statement)
    except BaseException:
        conn.close()
        raise
    return conn


def _move_aside(path: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while aside.exists():
        aside = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
        n += 1
    path.rename(aside)
    for suffix in ("-wal", "-shm"):  # a stale journal would be replayed into the new file
        sidecar = path.with_name(path.name + suffix)
        if sidecar.exists():
            sidecar.rename(aside.with_name(aside.name + suffix))
    return aside
