"""Saved test cases: a question and the documents (file names) that should answer it, one per owner and question.
They live in the traces database file, in a table of their own."""

from __future__ import annotations

import builtins
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragapp.tracing.store import open_database

_CASE_SCHEMA = """
CREATE TABLE IF NOT EXISTS test_cases (
    id INTEGER PRIMARY KEY AUTOINCREMENT, owner TEXT NOT NULL, question TEXT NOT NULL, expected TEXT NOT NULL,
    kbs TEXT, created_at TEXT NOT NULL, trace_id TEXT, UNIQUE (owner, question)
);
"""
_CASE_COLUMNS = "id, owner, question, expected, kbs, created_at, trace_id"


@dataclass(frozen=True)
class TestCase:
    """A question saved with the documents (file names) that should answer it. ``kbs`` None means all."""

    __test__ = False  # not a pytest test class

    id: int
    owner: str
    question: str
    expected: tuple[str, ...]
    kbs: tuple[str, ...] | None
    created_at: str
    trace_id: str | None = None


class TestCaseStore:
    """Saved test cases, one per owner and question. Synchronous: writes are rare."""

    __test__ = False  # not a pytest test class

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn = open_database(path, _CASE_SCHEMA)
        self._lock = threading.Lock()

    def add(
        self,
        owner: str,
        question: str,
        expected: Sequence[str],
        kbs: Sequence[str] | None = None,
        trace_id: str | None = None,
    ) -> TestCase:
        """Save a case; one saved earlier for the same owner and question is replaced. An empty ``kbs`` means all.

        Raises:
            ValueError: the question is blank or no expected document is given.
        """
        question = question.strip()
        if not question:
            raise ValueError("The question is empty: type the question this test case should check.")
        names = _names(expected)
        if not names:
            raise ValueError("No expected document: pick at least one document that should answer the question.")
        kb_names = (_names(kbs) or None) if kbs is not None else None
        created_at = datetime.now(UTC).isoformat(timespec="seconds")
        kbs_json = None if kb_names is None else json.dumps(list(kb_names), ensure_ascii=False)
        with self._lock, self._conn:
            self._conn.execute("DELETE FROM test_cases WHERE owner = ? AND question = ?", (owner, question))
            cursor = self._conn.execute(
                "INSERT INTO test_cases (owner, question, expected, kbs, created_at, trace_id) VALUES (?,?,?,?,?,?)",
                (owner, question, json.dumps(list(names), ensure_ascii=False), kbs_json, created_at, trace_id),
            )
        return TestCase(int(cursor.lastrowid or 0), owner, question, names, kb_names, created_at, trace_id)

    def list(self, owner: str) -> builtins.list[TestCase]:
        """The owner's cases, oldest first."""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_CASE_COLUMNS} FROM test_cases WHERE owner = ? ORDER BY created_at, id", (owner,)
            ).fetchall()
        return [_case(row) for row in rows]

    def delete(self, owner: str, case_id: int) -> bool:
        """Delete one of the owner's cases; False when the owner has no case with that id."""
        with self._lock, self._conn:
            cursor = self._conn.execute("DELETE FROM test_cases WHERE id = ? AND owner = ?", (case_id, owner))
        return cursor.rowcount > 0

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _case(row: tuple[Any, ...]) -> TestCase:
    case_id, owner, question, expected, kbs, created_at, trace_id = row
    kb_names = None if kbs is None else tuple(json.loads(kbs))
    return TestCase(case_id, owner, question, tuple(json.loads(expected)), kb_names, created_at, trace_id)


def _names(values: Sequence[str]) -> tuple[str, ...]:
    """Stripped, without blanks or repeats, in the given order (a lone string counts as one name)."""
    items = [values] if isinstance(values, str) else values
    return tuple(dict.fromkeys(name for name in (str(v).strip() for v in items) if name))
