"""The intent tree in SQLite, cached in memory. Every edit validates the whole tree it would produce,
writes it in one transaction and drops the cache; an edit that fails changes nothing.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Collection
from pathlib import Path

from ragapp.router.tree import IntentNode, IntentTree, IntentTreeError, Kind

_SCHEMA = """
CREATE TABLE IF NOT EXISTS intents (
    code TEXT PRIMARY KEY,
    parent TEXT,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    examples TEXT NOT NULL DEFAULT '[]',
    kind TEXT,
    kbs TEXT NOT NULL DEFAULT '[]',
    top_k INTEGER,
    prompt TEXT,
    position INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS intent_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_COLUMNS = "code, parent, name, description, examples, kind, kbs, top_k, prompt, position"
SEEDED_KEY = "seeded"

KnownKbs = Callable[[], Collection[str]]


class IntentStore:
    """Thread-safe: one connection, one lock. ``known_kbs`` says which knowledge bases exist (for validation)."""

    def __init__(self, path: Path, known_kbs: KnownKbs | None = None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.executescript(_SCHEMA)
        self._lock = threading.RLock()
        self._known_kbs = known_kbs
        self._cache: IntentTree | None = None
        self.version = 0  # bumped on every edit: lets callers see that the tree changed

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # -- reading -------------------------------------------------------------------------------

    def tree(self) -> IntentTree:
        """The current tree (from memory after the first read)."""
        with self._lock:
            if self._cache is None:
                rows = self._conn.execute(f"SELECT {_COLUMNS} FROM intents").fetchall()
                self._cache = IntentTree(_node(row) for row in rows)
            return self._cache

    def known_kbs(self) -> list[str]:
        """The knowledge bases an intent may name, in the order ``known_kbs`` gives them (none if not told)."""
        return list(dict.fromkeys(self._known_kbs())) if self._known_kbs is not None else []

    @property
    def cached(self) -> bool:
        return self._cache is not None

    # -- editing -------------------------------------------------------------------------------

    def save(self, node: IntentNode, replacing: str | None = None) -> IntentTree:
        """Add ``node``, or update the node ``replacing`` (default: the node with ``node.code``); a changed code
        renames it and a changed parent moves it. A leaf that receives a child becomes a group (its kind,
        knowledge bases, top-k and prompt are cleared), in the same edit. Raises ``IntentTreeError``; nothing
        changes then."""
        with self._lock:
            current = self.tree()
            if replacing is not None and replacing not in current:
                raise IntentTreeError([f"there is no intent {replacing!r} to edit (was it deleted elsewhere?)"])
            if replacing is not None and node.code != replacing and node.code in current:
                raise IntentTreeError([_taken(current, node.code)])
            return self.replace(current.with_saved(node, replacing))

    def add(self, node: IntentNode) -> IntentTree:
        """Add ``node`` as a new intent: unlike ``save``, an existing code is refused, never overwritten."""
        with self._lock:
            current = self.tree()
            if node.code in current:
                raise IntentTreeError([_taken(current, node.code)])
            return self.save(node)

    def delete(self, code: str) -> int:
        """Delete ``code`` and everything under it; returns how many nodes went."""
        with self._lock:
            current = self.tree()
            if code not in current:
                raise IntentTreeError([f"there is no intent {code!r} to delete (was it deleted elsewhere?)"])
            smaller = current.without(code)
            # A deletion can only break a parent that becomes a leaf without a kind: check only that.
            self.replace(smaller, check_kbs=False)
            return len(current) - len(smaller)

    def move(self, code: str, parent: str | None) -> IntentTree:
        with self._lock:
            node = self.tree().get(code)
            if node is None:
                raise IntentTreeError([f"there is no intent {code!r} to move"])
            return self.save(node.with_parent(parent), replacing=code)

    def replace(self, tree: IntentTree, *, check_kbs: bool = True) -> IntentTree:
        """Make ``tree`` the whole tree (import, seeding). Raises ``IntentTreeError``; nothing changes then."""
        known = self._known_kbs() if check_kbs and self._known_kbs is not None else None
        tree.validated(known)
        rows = [_row(node) for node in tree.nodes()]
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.execute("DELETE FROM intents")
                self._conn.executemany(f"INSERT INTO intents ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
                self._conn.execute("INSERT OR REPLACE INTO intent_meta (key, value) VALUES (?, '1')", (SEEDED_KEY,))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            finally:
                self._cache = None  # dropped on every edit (and after a failed one: re-read what is on disk)
                self.version += 1
        return tree

    # -- first start ---------------------------------------------------------------------------

    @property
    def seeded(self) -> bool:
        """True once a tree was ever written (deleting every node later is respected)."""
        with self._lock:
            row = self._conn.execute("SELECT value FROM intent_meta WHERE key = ?", (SEEDED_KEY,)).fetchone()
            return row is not None

    def seed(self, tree: IntentTree) -> bool:
        """Write ``tree`` if no tree was ever written; True when it did. Knowledge bases are not checked: the
        demo tree is written before (or while) the demo documents are indexed."""
        with self._lock:
            if self.seeded:
                return False
            self.replace(tree, check_kbs=False)
            return True


def _taken(tree: IntentTree, code: str) -> str:
    return f"the code {code!r} is already used by {tree.full_path(code)}: choose another code"


def _row(node: IntentNode) -> tuple[object, ...]:
    return (
        node.code,
        node.parent,
        node.name,
        node.description,
        json.dumps(list(node.examples), ensure_ascii=False),
        node.kind,
        json.dumps(list(node.kbs), ensure_ascii=False),
        node.top_k,
        node.prompt,
        node.position,
    )


def _node(row: tuple[object, ...]) -> IntentNode:
    code, parent, name, description, examples, kind, kbs, top_k, prompt, position = row
    return IntentNode(
        code=str(code),
        name=str(name),
        parent=None if parent is None else str(parent),
        description=str(description or ""),
        examples=tuple(json.loads(str(examples or "[]"))),
        kind=None if kind is None else _kind(str(kind)),
        kbs=tuple(json.loads(str(kbs or "[]"))),
        top_k=None if top_k is None else int(str(top_k)),
        prompt=None if prompt is None else str(prompt),
        position=int(str(position or 0)),
    )


def _kind(value: str) -> Kind:
    return "SYSTEM" if value == "SYSTEM" else "KB"
