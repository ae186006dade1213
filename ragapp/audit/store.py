"""The audit log's table, in a SQLite file in the state dir or the deployment's shared PostgreSQL database.

Append-only: this module has ``append`` and reads, and one delete, the retention sweep of rows older than
``audit.retention_days`` (``sweep``). Nothing in the code updates a row, and the database refuses it too: a
trigger on both SQLite and PostgreSQL aborts any ``UPDATE`` of ``audit_log`` (a test scans the code for any other
statement that changes the table).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Self

from ragapp.audit.model import AuditQuery, AuditRecord
from ragapp.core.lifecycle import started
from ragapp.db import Database, open_tables

_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, actor TEXT NOT NULL, role TEXT NOT NULL,
    client TEXT NOT NULL, action TEXT NOT NULL, target TEXT NOT NULL, outcome TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS audit_log_at ON audit_log (at);
CREATE INDEX IF NOT EXISTS audit_log_actor_at ON audit_log (actor, at);
CREATE INDEX IF NOT EXISTS audit_log_action_at ON audit_log (action, at)
"""
# One statement with ``;`` inside its body: run on its own (``statements`` would split it).
_SQLITE_NO_UPDATE = """
CREATE TRIGGER IF NOT EXISTS audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only: its rows are never changed'); END
"""
# The times compare as strings, byte by byte as in SQLite.
_STEPS = [
    """
CREATE TABLE audit_log (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, at TEXT COLLATE "C" NOT NULL, actor TEXT NOT NULL,
    role TEXT NOT NULL, client TEXT NOT NULL, action TEXT NOT NULL, target TEXT NOT NULL, outcome TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_actor_at ON audit_log (actor, at);
CREATE INDEX audit_log_action_at ON audit_log (action, at);
CREATE FUNCTION audit_log_refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'the audit log is append-only: its rows are never changed'; END
$$;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
FOR EACH ROW EXECUTE FUNCTION audit_log_refuse_update()"""
]
_COLUMNS = "id, at, actor, role, client, action, target, outcome, detail"
MAX_LIMIT = 100_000  # rows one query returns at most (a CSV export)


def stamp(when: datetime) -> str:
    """``when`` as the log stores it: UTC, to the microsecond, so the text sorts as the time does (a naive
    time is taken as UTC)."""
    aware = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat(timespec="microseconds")


def _like(text: str) -> str:
    """A LIKE pattern matching ``text`` anywhere, its own ``%`` and ``_`` taken literally."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class AuditStore:
    """``target``: a SQLite file, or the shared ``Database`` (every replica writes to one log). ``clock``: now,
    in UTC (tests move it)."""

    def __init__(self, target: Path | Database, clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self._target = target
        self._clock = clock
        self._started: Database | None = None
        self._owned = False

    def start(self) -> Self:
        """Open the file (given a path) and create or migrate the table; a second call does nothing."""
        if self._started is None:
            db, self._owned = open_tables(self._target, "audit", _SCHEMA, _STEPS)
            if db.dialect == "sqlite":
                db.execute(_SQLITE_NO_UPDATE)
            self._started = db
        return self

    @property
    def _db(self) -> Database:
        return started(self, self._started)

    def now(self) -> datetime:
        return self._clock()

    def append(
        self, actor: str, role: str, client: str, action: str, target: str, outcome: str, detail: dict[str, Any]
    ) -> None:
        """Add one record, stamped now."""
        self._db.execute(
            "INSERT INTO audit_log (at, actor, role, client, action, target, outcome, detail) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                stamp(self._clock()), actor, role, client, action, target, outcome,
                json.dumps(detail, ensure_ascii=False, default=str),
            ),
        )  # fmt: skip

    def _where(self, query: AuditQuery) -> tuple[str, list[Any]]:
        clauses, args = [], []
        for column in ("actor", "action", "outcome"):
            value = getattr(query, column).strip()
            if value:
                clauses.append(f"{column} = ?")
                args.append(value)
        if query.target.strip():
            clauses.append("target LIKE ? ESCAPE '\\'")
            args.append(_like(query.target.strip()))
        if query.since is not None:
            clauses.append("at >= ?")
            args.append(stamp(query.since))
        if query.until is not None:
            clauses.append("at < ?")
            args.append(stamp(query.until))
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", args

    def query(self, query: AuditQuery) -> list[AuditRecord]:
        """The records ``query`` matches, newest first, one page of them."""
        where, args = self._where(query)
        limit, offset = min(max(query.limit, 0), MAX_LIMIT), max(query.offset, 0)
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM audit_log{where} ORDER BY at DESC, id DESC LIMIT ? OFFSET ?",
            (*args, limit, offset),
        )
        return [_record(row) for row in rows]

    def count(self, query: AuditQuery) -> int:
        """How many records ``query`` matches in all (its page aside)."""
        where, args = self._where(query)
        row = self._db.one(f"SELECT COUNT(*) FROM audit_log{where}", args)
        return int(row[0]) if row else 0

    def sweep(self, retention_days: int) -> int:
        """The one delete: records older than ``retention_days`` go (0 keeps everything); returns how many."""
        if retention_days <= 0:
            return 0
        cutoff = stamp(self._clock() - timedelta(days=retention_days))
        return self._db.execute("DELETE FROM audit_log WHERE at < ?", (cutoff,))

    def close(self) -> None:
        """Close the database if it was opened here (a shared one belongs to whoever opened it)."""
        if self._owned and self._started is not None:
            self._started.close()


def _record(row: tuple[Any, ...]) -> AuditRecord:
    try:
        detail = json.loads(row[8] or "{}")
    except ValueError:
        detail = {"unreadable": row[8]}
    return AuditRecord(
        int(row[0]), row[1], row[2], row[3], row[4], row[5], row[6], row[7], detail if isinstance(detail, dict) else {}
    )
