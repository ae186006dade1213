"""Past conversations, per owner (a signed-in user, or a browser when accounts are off), in a SQLite file or the
deployment's shared PostgreSQL database.

A conversation is kept as a JSON list of records (the engine's exchanges: each question with the turn that
answered it; or, for one kept by an older version, the chat's messages as shown; see
``ragapp.engine.conversations``) and the memory the next question needs (recent turns and the summary of older
ones). Writes are synchronous: one per finished answer, small next to the answer itself.
"""

from __future__ import annotations

import builtins
import json
import logging
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from ragapp.core.lifecycle import started
from ragapp.db import Database, open_tables, order_column
from ragapp.tracing.store import plain_text

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY, owner TEXT NOT NULL, title TEXT NOT NULL, created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL, messages TEXT NOT NULL, memory TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS conversations_owner_updated ON conversations (owner, updated_at);
"""
# ``seq`` orders conversations saved in the same second, as SQLite's rowid does; the times compare as strings,
# byte by byte as in SQLite (a locale's collation weighs their punctuation differently).
_STEPS = [
    """
CREATE TABLE conversations (
    seq BIGINT GENERATED ALWAYS AS IDENTITY, id TEXT PRIMARY KEY, owner TEXT NOT NULL, title TEXT NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL, updated_at TEXT COLLATE "C" NOT NULL, messages TEXT NOT NULL,
    memory TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX conversations_owner_updated ON conversations (owner, updated_at)"""
]
TITLE_CHARS = 80
MAX_CONVERSATIONS = 200  # per owner; the oldest go first


@dataclass(frozen=True)
class ConversationSummary:
    """One line of the sidebar."""

    id: str
    title: str
    updated_at: str


@dataclass(frozen=True)
class Conversation:
    id: str
    owner: str
    title: str
    updated_at: str
    messages: tuple[dict[str, Any], ...]
    memory: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""


def title_from(question: str) -> str:
    """A conversation's title: its first question, on one line, cut to ``TITLE_CHARS``."""
    text = " ".join(plain_text(question).split())
    return (text[: TITLE_CHARS - 1] + "…" if len(text) > TITLE_CHARS else text) or "New chat"


class ConversationStore:
    """``target``: a SQLite file, or the shared ``Database`` (every replica sees every conversation)."""

    def __init__(self, target: Path | Database, max_per_owner: int = MAX_CONVERSATIONS) -> None:
        self.path = target if isinstance(target, Path) else None
        self.max_per_owner = max_per_owner
        self._target = target
        self._started: Database | None = None
        self._owned = False
        self._seq = ""

    def start(self) -> Self:
        """Open the file (given a path) and create or migrate the table; a second call does nothing."""
        if self._started is None:
            self._started, self._owned = open_tables(self._target, "conversations", _SCHEMA, _STEPS)
            self._seq = order_column(self._started)
        return self

    @property
    def _db(self) -> Database:
        return started(self, self._started)

    def save(
        self,
        owner: str,
        conversation_id: str | None,
        title: str,
        messages: builtins.list[dict[str, Any]],
        memory: dict[str, Any],
    ) -> str:
        """Store the conversation (a new one when ``conversation_id`` is None or not the owner's); returns its id.
        The title of an existing conversation is kept (it may have been renamed)."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        body, mem = json.dumps(messages, ensure_ascii=False, default=str), json.dumps(memory, ensure_ascii=False)
        with self._db.transaction() as tx:
            if conversation_id is not None:
                changed = tx.execute(
                    "UPDATE conversations SET messages = ?, memory = ?, updated_at = ? WHERE id = ? AND owner = ?",
                    (body, mem, now, conversation_id, owner),
                )
                if changed:
                    return conversation_id
            # The bound per owner counts the owner's rows: two replicas adding at once must not both count alone.
            tx.lock(f"conversations:{owner}")
            new_id = uuid.uuid4().hex[:16]
            tx.execute(
                "INSERT INTO conversations (id, owner, title, created_at, updated_at, messages, memory) "
                "VALUES (?,?,?,?,?,?,?)",
                (new_id, owner, title_from(title), now, now, body, mem),
            )
            tx.execute(
                "DELETE FROM conversations WHERE owner = ? AND id NOT IN (SELECT id FROM conversations WHERE owner = ? "
                f"ORDER BY updated_at DESC, {self._seq} DESC LIMIT ?)",
                (owner, owner, max(1, self.max_per_owner)),
            )
            return new_id

    def list(self, owner: str, limit: int = 100) -> builtins.list[ConversationSummary]:
        """The owner's conversations, the latest first."""
        rows = self._db.query(
            "SELECT id, title, updated_at FROM conversations WHERE owner = ? "
            f"ORDER BY updated_at DESC, {self._seq} DESC LIMIT ?",
            (owner, max(0, limit)),
        )
        return [ConversationSummary(*row) for row in rows]

    def get(self, owner: str, conversation_id: str) -> Conversation | None:
        """The owner's conversation, or None (none with that id, another owner's, or unreadable)."""
        row = self._db.one(
            "SELECT id, owner, title, updated_at, messages, memory, created_at FROM conversations "
            "WHERE id = ? AND owner = ?",
            (conversation_id, owner),
        )
        if row is None:
            return None
        try:
            messages, memory = json.loads(row[4]), json.loads(row[5] or "{}")
        except ValueError as exc:
            log.warning("conversation %r is unreadable (%s)", conversation_id, exc)
            return None
        if not isinstance(messages, builtins.list) or not isinstance(memory, dict):
            log.warning("conversation %r is unreadable (not the stored shape)", conversation_id)
            return None
        kept = tuple(m for m in messages if isinstance(m, dict))
        return Conversation(row[0], row[1], row[2], row[3], kept, memory, row[6])

    def rename(self, owner: str, conversation_id: str, title: str) -> bool:
        return bool(
            self._db.execute(
                "UPDATE conversations SET title = ? WHERE id = ? AND owner = ?",
                (title_from(title), conversation_id, owner),
            )
        )

    def delete(self, owner: str, conversation_id: str) -> bool:
        return bool(self._db.execute("DELETE FROM conversations WHERE id = ? AND owner = ?", (conversation_id, owner)))

    def close(self) -> None:
        """Close the database if it was opened here (a shared one belongs to whoever opened it)."""
        if self._owned:
            self._db.close()
