"""Where the accounts document lives: a JSON file (the default), or one row of the shared database, so that every
replica reads and edits the same users, knowledge-base rules and API keys.

Both keep the same JSON object (``users``, ``knowledge_bases``, ``api_keys``), read whole and written whole:
it is small and rarely written. ``editing()`` makes a read-change-write one step: a thread lock for the file
(one process writes it), a transaction with a lock in the database (any replica may).
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, Self

from ragapp.core.errors import ConfigError
from ragapp.core.lifecycle import started
from ragapp.db import Database

log = logging.getLogger(__name__)

_STEPS = ["CREATE TABLE IF NOT EXISTS accounts (name TEXT PRIMARY KEY, body TEXT NOT NULL, updated_at TEXT NOT NULL)"]
_ROW = "accounts"


class AccountsDocument(Protocol):
    where: str

    def load(self) -> dict[str, Any]: ...

    def save(self, data: dict[str, Any]) -> None: ...

    def editing(self) -> Any: ...


def _parsed(text: str, where: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"The accounts in {where} cannot be read ({exc}); fix or restore them.") from None
    if not isinstance(data, dict):
        raise ConfigError(f"The accounts in {where} are not a JSON object; fix or restore them.")
    return data


class FileDocument:
    """Each write goes to a temporary file in the same folder that then replaces the old one, so a crash mid-write
    leaves the old file whole; the file is readable by its owner only."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)
        self._lock = threading.Lock()

    def load(self) -> dict[str, Any]:
        if not self.path.exists():
            return {}
        try:
            text = self.path.read_text("utf-8")
        except OSError as exc:
            raise ConfigError(f"The accounts in {self.where} cannot be read ({exc}); fix or restore them.") from None
        return _parsed(text, self.where)

    def save(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".users-", suffix=".json", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out, indent=2, sort_keys=True)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @contextmanager
    def editing(self) -> Iterator[None]:
        with self._lock:
            yield


class DatabaseDocument:
    """The document in the ``accounts`` table. ``seed``: a users file to take the accounts from the first time
    (a deployment that set its users up in a file before moving to PostgreSQL keeps them)."""

    def __init__(self, db: Database, seed: Path | None = None) -> None:
        self._target = db
        self._seed = seed
        self._started: Database | None = None
        self.where = f"the accounts table of {db.where}"

    def start(self) -> Self:
        """Create or migrate the table, and take the accounts from the seed file the first time."""
        if self._started is not None:
            return self
        self._target.ensure_schema("accounts", _STEPS)
        self._started = self._target
        if self._seed is not None and self._seed.exists():
            with self.editing():
                if self._row() is None:
                    self.save(FileDocument(self._seed).load())
                    log.info("accounts taken from %s into %s", self._seed, self._target.where)
        return self

    @property
    def _db(self) -> Database:
        return started(self, self._started)

    def _row(self) -> str | None:
        row = self._db.one("SELECT body FROM accounts WHERE name = ?", (_ROW,))
        return None if row is None else str(row[0])

    def load(self) -> dict[str, Any]:
        text = self._row()
        return {} if text is None else _parsed(text, self.where)

    def save(self, data: dict[str, Any]) -> None:
        now = datetime.now(UTC).isoformat(timespec="seconds")
        self._db.execute(
            "INSERT INTO accounts (name, body, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT (name) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at",
            (_ROW, json.dumps(data, sort_keys=True), now),
        )

    @contextmanager
    def editing(self) -> Iterator[None]:
        # The reads and the write inside join this transaction (one thread, one transaction), under the lock.
        with self._db.transaction() as tx:
            tx.lock("accounts")
            yield
