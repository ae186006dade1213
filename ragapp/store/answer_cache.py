"""Checked answers kept for a question asked again, in a SQLite file or the deployment's shared PostgreSQL
database (every replica serves what any of them answered).

A row is found by its key: a digest of everything that changes an answer (the question as normalised, the
mode, the knowledge bases the asker may read, the document filter, the version of the documents and intents, the
answering settings; see ``ragapp.engine.answer_cache``). Nothing is ever updated in place: a change to what the
key covers makes a new key, and the old row simply ages out. With paraphrase matching on, a row also keeps its
``context`` (the key without the question) and the question's embedding, so ``nearest`` lists the questions
asked in the same context. Rows go when there are more than ``max_entries``
(the least recently served first) or when older than ``max_age_days``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Self

from ragapp.core.lifecycle import started
from ragapp.db import Database, open_tables

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answer_cache (
    key TEXT PRIMARY KEY, question TEXT NOT NULL, answer TEXT NOT NULL, trace_id TEXT NOT NULL,
    answered_at TEXT NOT NULL, used_at TEXT NOT NULL, context TEXT NOT NULL DEFAULT '',
    vector TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS answer_cache_used ON answer_cache (used_at);
CREATE INDEX IF NOT EXISTS answer_cache_context ON answer_cache (context);
"""
# The times compare as strings, byte by byte as in SQLite (ISO dates in UTC sort as they read).
_STEPS = [
    """
CREATE TABLE answer_cache (
    key TEXT PRIMARY KEY, question TEXT NOT NULL, answer TEXT NOT NULL, trace_id TEXT NOT NULL,
    answered_at TEXT COLLATE "C" NOT NULL, used_at TEXT COLLATE "C" NOT NULL, context TEXT NOT NULL DEFAULT '',
    vector TEXT NOT NULL DEFAULT ''
);
CREATE INDEX answer_cache_used ON answer_cache (used_at);
CREATE INDEX answer_cache_context ON answer_cache (context)"""
]


@dataclass(frozen=True)
class StoredAnswer:
    """An answer as kept: ``answer`` is the engine's answer event as ``ragapp.core.serial.dump`` wrote it."""

    question: str
    answer: dict[str, Any]
    trace_id: str  # the trace of the request that answered it ("" when traces were off)
    answered_at: str  # ISO time, UTC, seconds


def _now() -> datetime:
    return datetime.now(UTC)


class AnswerCacheStore:
    """``target``: a SQLite file, or the shared ``Database``."""

    def __init__(self, target: Path | Database, max_entries: int = 2000, max_age_days: float = 30.0) -> None:
        self.max_entries = max_entries
        self.max_age = timedelta(days=max_age_days)
        self._target = target
        self._started: Database | None = None
        self._owned = False

    def start(self) -> Self:
        """Open the file (given a path) and create or migrate the table; a second call does nothing."""
        if self._started is None:
            self._started, self._owned = open_tables(self._target, "answer_cache", _SCHEMA, _STEPS)
        return self

    @property
    def _db(self) -> Database:
        return started(self, self._started)

    def get(self, key: str) -> StoredAnswer | None:
        """The answer kept under ``key`` (and it counts as just used), or None: none, too old, or unreadable."""
        row = self._db.one("SELECT question, answer, trace_id, answered_at FROM answer_cache WHERE key = ?", (key,))
        if row is None:
            return None
        question, body, trace_id, answered_at = (str(v) for v in row)
        if answered_at < self._oldest():
            self._db.execute("DELETE FROM answer_cache WHERE key = ?", (key,))
            return None
        try:
            answer = json.loads(body)
        except ValueError as exc:
            log.warning("a cached answer is unreadable (%s); answering again", exc)
            answer = None
        if not isinstance(answer, dict):
            self._db.execute("DELETE FROM answer_cache WHERE key = ?", (key,))
            return None
        self._db.execute("UPDATE answer_cache SET used_at = ? WHERE key = ?", (_stamp(_now()), key))
        return StoredAnswer(question, answer, trace_id, answered_at)

    def put(
        self,
        key: str,
        question: str,
        answer: dict[str, Any],
        trace_id: str = "",
        context: str = "",
        vector: Sequence[float] | None = None,
    ) -> None:
        """Keep ``answer`` under ``key`` (replacing what was there: "Answer again" refreshes it), with its
        ``context`` and question ``vector`` for paraphrase matching, then drop the rows past the bounds."""
        now = _stamp(_now())
        body = json.dumps(answer, ensure_ascii=False, default=str)
        stored_vector = json.dumps([round(float(v), 6) for v in vector]) if vector is not None else ""
        with self._db.transaction() as tx:
            tx.execute(
                "INSERT INTO answer_cache (key, question, answer, trace_id, answered_at, used_at, context, vector) "
                "VALUES (?,?,?,?,?,?,?,?) ON CONFLICT (key) DO UPDATE SET question = excluded.question, "
                "answer = excluded.answer, trace_id = excluded.trace_id, answered_at = excluded.answered_at, "
                "used_at = excluded.used_at, context = excluded.context, vector = excluded.vector",
                (key, question, body, trace_id, now, now, context, stored_vector),
            )
            tx.execute("DELETE FROM answer_cache WHERE answered_at < ?", (self._oldest(),))
            tx.execute(
                "DELETE FROM answer_cache WHERE key NOT IN "
                "(SELECT key FROM answer_cache ORDER BY used_at DESC, answered_at DESC LIMIT ?)",
                (max(1, self.max_entries),),
            )

    def nearest(self, context: str) -> list[tuple[str, list[float]]]:
        """The keys and question vectors of the answers kept in ``context`` (those kept with a vector; at most
        ``max_entries`` rows in all, so a scan stays small). An unreadable vector is skipped."""
        rows = self._db.query(
            "SELECT key, vector FROM answer_cache WHERE context = ? AND vector <> '' AND answered_at >= ?",
            (context, self._oldest()),
        )
        out = []
        for key, text in rows:
            try:
                vector = json.loads(text)
            except ValueError:
                continue
            if isinstance(vector, list) and vector:
                out.append((str(key), [float(v) for v in vector]))
        return out

    def forget(self, key: str) -> bool:
        """Drop the answer kept under ``key``; True if there was one."""
        return bool(self._db.execute("DELETE FROM answer_cache WHERE key = ?", (key,)))

    def clear(self) -> int:
        """Drop every kept answer; returns how many."""
        return int(self._db.execute("DELETE FROM answer_cache", ()))

    def __len__(self) -> int:
        row = self._db.one("SELECT COUNT(*) FROM answer_cache", ())
        return int(row[0]) if row is not None else 0

    def _oldest(self) -> str:
        return _stamp(_now() - self.max_age)

    def close(self) -> None:
        """Close the database if it was opened here (a shared one belongs to whoever opened it)."""
        if self._owned:
            self._db.close()


def _stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")
