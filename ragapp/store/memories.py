"""Each user's long-term memories as rows, in a SQLite file or the deployment's shared PostgreSQL database.

A memory is one short text a user asked the assistant to keep ("I use the V2 Pro"), with when and how it came
(said: "remember that ..."; accepted: the user clicked "Remember this" under an answer) and whether screening
took instructions out of it (``ragapp.qa.remember``). Every statement names the owner: no call reads or changes
another owner's rows. Whether memory is on for an owner is kept here too (``memory_settings``). The vectors
that recall them live in their own Chroma collection (``ragapp.store.memory_vectors``); these rows are the
truth, a vector without its row is never recalled.
"""

from __future__ import annotations

import builtins
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, Self

from ragapp.core.lifecycle import started
from ragapp.db import Database, open_tables, order_column

Source = Literal["said", "accepted", "edited"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY, owner TEXT NOT NULL, text TEXT NOT NULL, source TEXT NOT NULL,
    screened INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_owner ON memories (owner, created_at);
CREATE TABLE IF NOT EXISTS memory_settings (owner TEXT PRIMARY KEY, enabled INTEGER NOT NULL)
"""
_STEPS = [
    """
CREATE TABLE memories (
    seq BIGINT GENERATED ALWAYS AS IDENTITY, id TEXT PRIMARY KEY, owner TEXT NOT NULL, text TEXT NOT NULL,
    source TEXT NOT NULL, screened INTEGER NOT NULL DEFAULT 0, created_at TEXT COLLATE "C" NOT NULL,
    updated_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX memories_owner ON memories (owner, created_at);
CREATE TABLE memory_settings (owner TEXT PRIMARY KEY, enabled INTEGER NOT NULL)"""
]


@dataclass(frozen=True)
class Memory:
    id: str
    owner: str
    text: str
    source: str
    screened: bool  # instructions were taken out of it when it was kept
    created_at: str
    updated_at: str


class MemoryStore:
    """``target``: a SQLite file, or the shared ``Database`` (every replica sees every user's memories)."""

    def __init__(self, target: Path | Database) -> None:
        self._target = target
        self._started: Database | None = None
        self._owned = False
        self._seq = ""

    def start(self) -> Self:
        """Open the file (given a path) and create or migrate the tables; a second call does nothing."""
        if self._started is None:
            self._started, self._owned = open_tables(self._target, "memories", _SCHEMA, _STEPS)
            self._seq = order_column(self._started)
        return self

    @property
    def _db(self) -> Database:
        return started(self, self._started)

    def add(self, owner: str, text: str, source: Source, screened: bool, limit: int) -> Memory | None:
        """Keep ``text`` for ``owner``; None when the owner already has ``limit`` memories."""
        now = _now()
        memory = Memory(uuid.uuid4().hex[:16], owner, text, source, screened, now, now)
        with self._db.transaction() as tx:
            tx.lock(f"memories:{owner}")  # two replicas adding at once must not both count alone
            row = tx.one("SELECT COUNT(*) FROM memories WHERE owner = ?", (owner,))
            if row is not None and int(row[0]) >= limit:
                return None
            tx.execute(
                "INSERT INTO memories (id, owner, text, source, screened, created_at, updated_at) "
                "VALUES (?,?,?,?,?,?,?)",
                (memory.id, owner, text, source, int(screened), now, now),
            )
        return memory

    def list(self, owner: str) -> builtins.list[Memory]:
        """The owner's memories, the newest first."""
        rows = self._db.query(
            "SELECT id, owner, text, source, screened, created_at, updated_at FROM memories WHERE owner = ? "
            f"ORDER BY created_at DESC, {self._seq} DESC",
            (owner,),
        )
        return [_memory(row) for row in rows]

    def count(self, owner: str) -> int:
        row = self._db.one("SELECT COUNT(*) FROM memories WHERE owner = ?", (owner,))
        return int(row[0]) if row is not None else 0

    def get(self, owner: str, memory_id: str) -> Memory | None:
        row = self._db.one(
            "SELECT id, owner, text, source, screened, created_at, updated_at FROM memories WHERE id = ? AND owner = ?",
            (memory_id, owner),
        )
        return _memory(row) if row is not None else None

    def edit(self, owner: str, memory_id: str, text: str, screened: bool) -> bool:
        return bool(
            self._db.execute(
                "UPDATE memories SET text = ?, screened = ?, source = 'edited', updated_at = ? "
                "WHERE id = ? AND owner = ?",
                (text, int(screened), _now(), memory_id, owner),
            )
        )

    def delete(self, owner: str, memory_id: str) -> bool:
        return bool(self._db.execute("DELETE FROM memories WHERE id = ? AND owner = ?", (memory_id, owner)))

    def enabled(self, owner: str) -> bool:
        """Whether the owner has memory on (on until they turn it off)."""
        row = self._db.one("SELECT enabled FROM memory_settings WHERE owner = ?", (owner,))
        return row is None or bool(row[0])

    def set_enabled(self, owner: str, enabled: bool) -> None:
        self._db.execute(
            "INSERT INTO memory_settings (owner, enabled) VALUES (?, ?) "
            "ON CONFLICT (owner) DO UPDATE SET enabled = excluded.enabled",
            (owner, int(enabled)),
        )

    def close(self) -> None:
        """Close the database if it was opened here (a shared one belongs to whoever opened it)."""
        if self._owned:
            self._db.close()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _memory(row: tuple[object, ...]) -> Memory:
    return Memory(str(row[0]), str(row[1]), str(row[2]), str(row[3]), bool(row[4]), str(row[5]), str(row[6]))
