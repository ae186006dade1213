"""One small seam over the relational stores: SQLite files (the default) or one PostgreSQL database.

Every store (catalog, intents, traces, test cases, conversations) writes its SQL once, with ``?`` placeholders
and the subset both engines speak: ``ON CONFLICT`` upserts, ``RETURNING``, ``CAST(? AS TEXT) IS NULL`` for an
optional filter, no ``rowid``, no ``julianday``, no ``INSERT OR REPLACE``. ``Database.dialect`` says which engine it
is, for the few statements that must differ (mostly table definitions).

``open_database`` picks the engine: a path opens a SQLite file, a ``postgresql://`` URL a pooled PostgreSQL
connection (psycopg 3). Schemas are created and migrated by ``Database.ensure_schema`` from numbered steps,
recorded per component in ``schema_versions``, under a lock so two replicas starting together apply each step
once.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ragapp.db.base import Database, Dialect, Rows, Transaction, statements
from ragapp.db.sqlite import SqliteDatabase


def open_database(target: object, *, pool_size: int = 8) -> Database:
    """A SQLite database at a path, or PostgreSQL at a ``postgresql://`` URL (``pool_size`` connections at most).

    Raises:
        ConfigError: a PostgreSQL URL whose server does not answer, or refuses the login.
    """
    text = str(target)
    if text.startswith(("postgresql://", "postgres://")):
        from ragapp.db.postgres import PostgresDatabase  # psycopg is only needed when PostgreSQL is configured

        return PostgresDatabase(text, pool_size=pool_size)
    return SqliteDatabase(Path(text))


def open_tables(
    target: Path | Database, component: str, sqlite_schema: str, postgres_steps: Sequence[str]
) -> tuple[Database, bool]:
    """A store's database, and whether the store opened it (so closes it): a path opens that SQLite file with
    ``sqlite_schema``, moving an unusable file aside; a shared ``Database`` is used as it is, on PostgreSQL with
    ``component``'s tables from the versioned ``postgres_steps`` (``Database.ensure_schema``)."""
    if not isinstance(target, Database):
        return SqliteDatabase(Path(target), schema=sqlite_schema, recover=True), True
    if target.dialect == "postgres":
        target.ensure_schema(component, postgres_steps)
    else:
        with target.transaction() as tx:
            for statement in statements(sqlite_schema):
                tx.execute(statement)
    return target, False


def order_column(db: Database) -> str:
    """The column that orders rows written in the same second: SQLite's rowid, PostgreSQL's identity ``seq``."""
    return "rowid" if db.dialect == "sqlite" else "seq"


__all__ = [
    "Database",
    "Dialect",
    "Rows",
    "SqliteDatabase",
    "Transaction",
    "open_database",
    "open_tables",
    "order_column",
]
