"""PostgreSQL through psycopg 3 and its connection pool: every replica of a deployment points at one database.

Statements arrive with SQLite's ``?`` placeholders and are sent with psycopg's ``%s`` (a literal ``%`` doubled).
"""

from __future__ import annotations

import logging
import threading
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg_pool import ConnectionPool

from ragapp.core.errors import ConfigError
from ragapp.db.base import Database, Rows, Transaction

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 10.0


@lru_cache(maxsize=1024)
def _pg(sql: str) -> str:
    return sql.replace("%", "%%").replace("?", "%s")


def redacted(url: str) -> str:
    """``url`` without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


class _PostgresTransaction(Transaction):
    dialect = "postgres"

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def execute(self, sql: str, args: Sequence[Any] = ()) -> int:
        cursor = self._conn.execute(_pg(sql), tuple(args))
        return max(cursor.rowcount, 0)

    def query(self, sql: str, args: Sequence[Any] = ()) -> Rows:
        return self._conn.execute(_pg(sql), tuple(args)).fetchall()

    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            with self._conn.cursor() as cursor:
                cursor.executemany(_pg(sql), [tuple(r) for r in rows])

    def lock(self, name: str) -> None:
        # A transaction-scoped advisory lock: released at commit or rollback, and by the server if the replica
        # holding it dies. crc32 gives every replica the same key for a name.
        self._conn.execute("SELECT pg_advisory_xact_lock(%s)", (zlib.crc32(name.encode()),))


class PostgresDatabase(Database):
    dialect = "postgres"

    def __init__(self, url: str, *, pool_size: int = 8) -> None:
        self.where = redacted(url)
        self._local = threading.local()
        # autocommit: a statement outside ``transaction`` commits alone; ``transaction`` opens a real one.
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max(1, pool_size),
            kwargs={"autocommit": True, "connect_timeout": int(CONNECT_TIMEOUT_S)},
            open=False,
            name="ragapp",
        )
        try:
            self._pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
        except Exception as exc:  # psycopg_pool.PoolTimeout, with the server's reason in the log
            self._pool.close()
            raise ConfigError(
                f"PostgreSQL at {self.where} did not answer or refused the login ({exc}): check "
                "RAGAPP_STORE__DATABASE_URL and that the server is running."
            ) from None

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        current: _PostgresTransaction | None = getattr(self._local, "tx", None)
        if current is not None:  # nested: part of the outer transaction
            yield current
            return
        with self._pool.connection() as conn, conn.transaction():
            tx = _PostgresTransaction(conn)
            self._local.tx = tx
            try:
                yield tx
            finally:
                self._local.tx = None

    @contextmanager
    def mutex(self, name: str) -> Iterator[None]:
        # A connection of its own holds a transaction with the advisory lock while the block runs: the block's
        # statements use other connections, and the lock goes if this process dies.
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (zlib.crc32(name.encode()),))
            yield

    # A statement on its own runs on an autocommit connection: one round trip, no BEGIN/COMMIT around it.
    def execute(self, sql: str, args: Sequence[Any] = ()) -> int:
        if getattr(self._local, "tx", None) is not None:
            return super().execute(sql, args)
        with self._pool.connection() as conn:
            return max(conn.execute(_pg(sql), tuple(args)).rowcount, 0)

    def query(self, sql: str, args: Sequence[Any] = ()) -> Rows:
        if getattr(self._local, "tx", None) is not None:
            return super().query(sql, args)
        with self._pool.connection() as conn:
            return conn.execute(_pg(sql), tuple(args)).fetchall()

    def close(self) -> None:
        self._pool.close()
