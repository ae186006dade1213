"""The intent tree in a relational store (a SQLite file, or one PostgreSQL database that every replica shares),
cached in memory.

Every edit is one transaction under the ``intents`` lock: it reads the tree as stored (never the cache, which
another replica may have outdated), validates the whole tree it would produce, writes it and bumps a counter in
``intent_meta``. An edit that fails changes nothing, and two replicas editing at once never interleave, so the
stored tree always passes validation. ``tree()`` compares that counter with the one its cache was read at (one
small query), so an edit made through another replica shows at the next call.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Self

from ragapp.core.lifecycle import started
from ragapp.core.said import Said
from ragapp.db import Database, SqliteDatabase, Transaction
from ragapp.router.tree import IntentNode, IntentTree, IntentTreeError, Kind

_TABLES = """
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
# The steps of the schema in a shared database (``Database.ensure_schema``): only ever appended to. Step 1 is the
# SQLite file's schema as it always was; ``IF NOT EXISTS`` lets it adopt a file written before versioning.
SCHEMA_STEPS = (_TABLES,)
_COLUMNS = "code, parent, name, description, examples, kind, kbs, top_k, prompt, position"
SEEDED_KEY = "seeded"
VERSION_KEY = "version"  # the edit counter every replica compares its cache with
LOCK = "intents"
_SET_META = "INSERT INTO intent_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"

KnownKbs = Callable[[], Collection[str]]
Change = Callable[[IntentTree], IntentTree]


class _AlreadySeeded(Exception):
    """Raised inside a seeding transaction that finds a tree was written before: it ends with nothing written."""


class IntentStore:
    """Thread-safe. ``target``: a SQLite file of its own (opened and closed here), or a ``Database`` shared with
    the other stores and replicas (its owner closes it). ``known_kbs`` says which knowledge bases exist (for
    validation)."""

    def __init__(self, target: Path | Database, known_kbs: KnownKbs | None = None) -> None:
        self._target = target
        self._owned = not isinstance(target, Database)
        self._started: Database | None = None
        self._known_kbs = known_kbs
        # Guards the fields below only, never held across a statement: a slow database (or a replica holding the
        # edit lock) then never blocks a reader on this lock, and no lock order with the database's can deadlock.
        self._lock = threading.Lock()
        self._cache: IntentTree | None = None
        self._cache_at = -1  # the stored counter the cache was read at
        self._seen: int | None = None  # the stored counter last seen (None: not read yet)
        self._version = 0

    def start(self) -> Self:
        """Open the file (given a path) and create or migrate the tables; a second call does nothing."""
        if self._started is not None:
            return self
        if isinstance(self._target, Database):
            self._target.ensure_schema("intents", SCHEMA_STEPS)
            self._started = self._target
        else:
            # A plain file keeps its schema unversioned, exactly as before the shared databases came.
            self._target.parent.mkdir(parents=True, exist_ok=True)
            self._started = SqliteDatabase(self._target, schema=_TABLES)
        return self

    @property
    def _db(self) -> Database:
        return started(self, self._started)

    def close(self) -> None:
        if self._owned and self._started is not None:
            self._started.close()

    # -- reading -------------------------------------------------------------------------------

    def tree(self) -> IntentTree:
        """The current tree: from memory while the stored edit counter says nobody changed it."""
        stored = _stored_version(self._db)
        with self._lock:
            self._observe(stored)
            if self._cache is not None and self._cache_at == stored:
                return self._cache
        with self._db.transaction() as tx:
            # The counter before the rows: an edit committed in between makes this cache look stale (one more
            # read), never a stale cache look fresh.
            stored = _stored_version(tx)
            tree = _read(tx)
        with self._lock:
            self._observe(stored)
            self._cache, self._cache_at = tree, stored
        return tree

    @property
    def version(self) -> int:
        """Moves whenever the tree changes, through this store or another one on the same database (another
        replica): lets callers see that the tree changed. One small query."""
        stored = _stored_version(self._db)
        with self._lock:
            self._observe(stored)
            return self._version

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
        return self.saved(node, replacing)[0]

    def add(self, node: IntentNode) -> IntentTree:
        """Add ``node`` as a new intent: unlike ``save``, an existing code is refused, never overwritten."""
        return self.saved(node, new=True)[0]

    def saved(
        self, node: IntentNode, replacing: str | None = None, *, new: bool = False
    ) -> tuple[IntentTree, IntentNode | None]:
        """``save`` (``add`` when ``new``), returning the tree written and the leaf that became a group in it,
        both as the edit itself found them (a tree read before it may be outdated by another replica)."""
        before, after = self._edit(lambda current: _saving(current, node, replacing, new), self._known())
        return after, before.leaf_made_group(node, replacing)

    def delete(self, code: str) -> int:
        """Delete ``code`` and everything under it; returns how many nodes went."""

        def change(current: IntentTree) -> IntentTree:
            if code not in current:
                raise IntentTreeError([Said("intent_tree.gone_delete", {"code": code})])
            return current.without(code)

        # A deletion can only break a parent that becomes a leaf without a kind: knowledge bases are not checked.
        before, after = self._edit(change, None)
        return len(before) - len(after)

    def move(self, code: str, parent: str | None) -> IntentTree:
        def change(current: IntentTree) -> IntentTree:
            node = current.get(code)
            if node is None:
                raise IntentTreeError([Said("intent_tree.gone_move", {"code": code})])
            return _saving(current, node.with_parent(parent), code, new=False)

        return self._edit(change, self._known())[1]

    def replace(self, tree: IntentTree, *, check_kbs: bool = True) -> IntentTree:
        """Make ``tree`` the whole tree (import, seeding). Raises ``IntentTreeError``; nothing changes then."""
        return self._edit(lambda _current: tree, self._known() if check_kbs else None)[1]

    def _known(self) -> Collection[str] | None:
        # Asked before the edit's transaction opens, so another store's reads never run inside it.
        return self._known_kbs() if self._known_kbs is not None else None

    def _edit(
        self, change: Change, known: Collection[str] | None, *, unless_seeded: bool = False
    ) -> tuple[IntentTree, IntentTree]:
        """Apply ``change`` to the tree as stored, in one transaction under the edit lock: the trees before and
        after. Raises ``IntentTreeError`` (and ``_AlreadySeeded`` when ``unless_seeded``); nothing changes then."""
        with self._db.transaction() as tx:
            tx.lock(LOCK)
            if unless_seeded and _is_seeded(tx):
                raise _AlreadySeeded
            before = _read(tx)
            after = change(before).validated(known)
            tx.execute("DELETE FROM intents")
            tx.many(f"INSERT INTO intents ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)", [_row(n) for n in after.nodes()])
            tx.execute(_SET_META, (SEEDED_KEY, "1"))
            stored = _stored_version(tx) + 1
            tx.execute(_SET_META, (VERSION_KEY, str(stored)))
        with self._lock:
            self._cache = None  # dropped on every edit, re-read on demand
            self._seen = stored
            self._version += 1
        return before, after

    def _observe(self, stored: int) -> None:
        """Note the stored counter (under ``_lock``): one that moved means the tree changed elsewhere."""
        if self._seen is not None and stored != self._seen:
            self._version += 1
        self._seen = stored

    # -- first start ---------------------------------------------------------------------------

    @property
    def seeded(self) -> bool:
        """True once a tree was ever written (deleting every node later is respected)."""
        with self._db.transaction() as tx:
            return _is_seeded(tx)

    def seed(self, tree: IntentTree) -> bool:
        """Write ``tree`` if no tree was ever written; True when it did. Knowledge bases are not checked: the
        demo tree is written before (or while) the demo documents are indexed. Replicas starting together seed
        once: the check and the write are one edit."""
        try:
            self._edit(lambda _current: tree, None, unless_seeded=True)
        except _AlreadySeeded:
            return False
        return True


def _saving(current: IntentTree, node: IntentNode, replacing: str | None, new: bool) -> IntentTree:
    if new and node.code in current:
        raise IntentTreeError([_taken(current, node.code)])
    if replacing is not None and replacing not in current:
        raise IntentTreeError([Said("intent_tree.gone_edit", {"code": replacing})])
    if replacing is not None and node.code != replacing and node.code in current:
        raise IntentTreeError([_taken(current, node.code)])
    return current.with_saved(node, replacing)


def _taken(tree: IntentTree, code: str) -> Said:
    return Said("intent_tree.code_taken", {"code": code, "path": tree.full_path(code)})


def _read(tx: Transaction) -> IntentTree:
    return IntentTree(_node(row) for row in tx.query(f"SELECT {_COLUMNS} FROM intents"))


def _is_seeded(tx: Transaction) -> bool:
    return tx.one("SELECT value FROM intent_meta WHERE key = ?", (SEEDED_KEY,)) is not None


def _stored_version(where: Database | Transaction) -> int:
    """The edit counter as stored; 0 in a file written before there was one."""
    row = where.one("SELECT value FROM intent_meta WHERE key = ?", (VERSION_KEY,))
    return int(str(row[0])) if row is not None else 0


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
