"""What a store sees of its database: statements, transactions, versioned schemas."""

from __future__ import annotations

import abc
import logging
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Literal

log = logging.getLogger(__name__)

Dialect = Literal["sqlite", "postgres"]
Rows = list[tuple[Any, ...]]

_VERSIONS = "CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL)"


class Transaction(abc.ABC):
    """Statements inside one all-or-nothing transaction (``?`` placeholders)."""

    dialect: Dialect

    @abc.abstractmethod
    def execute(self, sql: str, args: Sequence[Any] = ()) -> int:
        """Run one statement; returns how many rows it changed."""

    @abc.abstractmethod
    def query(self, sql: str, args: Sequence[Any] = ()) -> Rows:
        """Run one statement; returns its rows."""

    @abc.abstractmethod
    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement once per row of arguments."""

    @abc.abstractmethod
    def lock(self, name: str) -> None:
        """Hold the named lock until the transaction ends: writers that must not interleave (two replicas
        editing the intent tree) take the same name. SQLite's write transactions already exclude each other."""

    def one(self, sql: str, args: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        rows = self.query(sql, args)
        return rows[0] if rows else None


class Database(abc.ABC):
    """A thread-safe handle shared by the stores of one process. Statements outside ``transaction`` commit on
    their own."""

    dialect: Dialect
    where: str  # for messages and logs: the file, or the server without its password

    @abc.abstractmethod
    def transaction(self) -> AbstractContextManager[Transaction]:
        """A transaction that commits when the block ends and rolls back when it raises. Nested blocks in one
        thread join the outer one."""

    @abc.abstractmethod
    def close(self) -> None: ...

    @contextmanager
    def mutex(self, name: str) -> Iterator[None]:
        """Hold the named lock across processes while the block runs, outside any transaction of the block's
        own (for work that is not only SQL: writing vectors, then the catalog). One process per SQLite file
        needs nothing more than its own locks, so only PostgreSQL takes one."""
        yield

    def execute(self, sql: str, args: Sequence[Any] = ()) -> int:
        with self.transaction() as tx:
            return tx.execute(sql, args)

    def query(self, sql: str, args: Sequence[Any] = ()) -> Rows:
        with self.transaction() as tx:
            return tx.query(sql, args)

    def one(self, sql: str, args: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        rows = self.query(sql, args)
        return rows[0] if rows else None

    def ensure_schema(self, component: str, steps: Sequence[str]) -> int:
        """Apply the steps of ``component``'s schema it has not had yet, each once, in order; returns the version
        now in place (the number of steps). A step is one or more statements separated by ``;``. Steps are only
        ever appended: a released step never changes, so every database walks the same path."""
        with self.transaction() as tx:
            tx.execute(_VERSIONS)
        with self.transaction() as tx:
            tx.lock(f"schema:{component}")
            row = tx.one("SELECT version FROM schema_versions WHERE component = ?", (component,))
            current = int(row[0]) if row else 0
            if current > len(steps):
                raise RuntimeError(
                    f"{self.where} holds version {current} of the {component} schema; this app knows {len(steps)}. "
                    "Upgrade the app (a newer one wrote it)."
                )
            for number, step in enumerate(steps[current:], start=current + 1):
                for statement in statements(step):
                    tx.execute(statement)
                log.info("%s: %s schema now at version %d", self.where, component, number)
            tx.execute(
                "INSERT INTO schema_versions (component, version) VALUES (?, ?) "
                "ON CONFLICT (component) DO UPDATE SET version = excluded.version",
                (component, len(steps)),
            )
        return len(steps)


def statements(script: str) -> Iterator[str]:
    """The statements of a script, split at ``;``, except inside a ``$$`` dollar-quoted body (a PostgreSQL
    function's); our DDL never has ``;`` inside any other literal."""
    current = ""
    for n, part in enumerate(script.split("$$")):
        if n % 2:  # inside $$ ... $$: kept whole
            current += f"$${part}$$"
            continue
        first, *rest = part.split(";")
        current += first
        for piece in rest:
            if current.strip():
                yield current.strip()
            current = piece
    if current.strip():
        yield current.strip()
