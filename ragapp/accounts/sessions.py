"""Sign-ins kept in the database, so that one outlives a restart of the app and is honoured by every replica
(the balancer needs no stickiness): a SQLite file in the state dir, or the deployment's shared PostgreSQL database.

One row per sign-in: the SHA-256 of the browser's token (never the token itself: a copy of the table signs
nobody in), the user, how and from where they signed in, when it started, when it expires and when it was last
seen, and a random id of its own by which an admin lists and ends it. Expired rows are swept at each new sign-in
and each listing.

Gradio asks who a token belongs to on every one of the many requests a page makes, so each process remembers an
answer for ``recheck_s`` seconds: a sign-in ended on another replica (or from ``python -m ragapp.users``) is
refused there within that time; one ended in this process at once. Expiry is checked on every request.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from ragapp.core.lifecycle import started
from ragapp.db import Database, open_tables

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sign_ins (
    id TEXT PRIMARY KEY, token_hash TEXT NOT NULL UNIQUE, user_name TEXT NOT NULL, method TEXT NOT NULL,
    client TEXT NOT NULL, agent TEXT NOT NULL, started_at REAL NOT NULL, expires_at REAL NOT NULL,
    last_seen REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS sign_ins_user ON sign_ins (user_name);
CREATE INDEX IF NOT EXISTS sign_ins_expires ON sign_ins (expires_at);
CREATE TABLE IF NOT EXISTS sign_in_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)
"""
_STEPS = [
    """
CREATE TABLE sign_ins (
    id TEXT PRIMARY KEY, token_hash TEXT NOT NULL UNIQUE, user_name TEXT NOT NULL, method TEXT NOT NULL,
    client TEXT NOT NULL, agent TEXT NOT NULL, started_at DOUBLE PRECISION NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL, last_seen DOUBLE PRECISION NOT NULL
);
CREATE INDEX sign_ins_user ON sign_ins (user_name);
CREATE INDEX sign_ins_expires ON sign_ins (expires_at);
CREATE TABLE sign_in_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"""
]
RECHECK_S = 5.0
SEEN_EVERY_S = 60.0  # "last seen" is written at most this often per sign-in: a write per request would cost more
AGENT_CHARS = 200  # a user agent is whatever the browser sends: kept short
_CACHE_MAX = 4096  # remembered answers, beyond which the stale ones are dropped


@dataclass(frozen=True)
class SignInView:
    """A sign-in as an admin sees it (times in seconds since the epoch; no token, no hash)."""

    id: str
    user: str
    method: str  # "password", "oidc", ...
    client: str  # the address it signed in from ("" when not known)
    agent: str  # the browser's user agent ("" when not known)
    started: float
    expires: float
    last_seen: float


@dataclass(frozen=True)
class _Known:
    id: str
    user: str
    expires: float
    checked: float  # when the database last said so


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class SessionStore:
    """``target``: a SQLite file, or the shared ``Database``. ``lifetime_s``: how long a sign-in lasts;
    ``recheck_s``: how long this process trusts what it last read of one."""

    def __init__(self, target: Path | Database, lifetime_s: float, recheck_s: float = RECHECK_S) -> None:
        self.lifetime_s = lifetime_s
        self.recheck_s = recheck_s
        self._target = target
        self._started: Database | None = None
        self._owned = False
        self._known: dict[str, _Known] = {}  # token hash -> what the database said
        self._lock = threading.Lock()

    def start(self) -> Self:
        """Open the file (given a path) and create or migrate the tables; a second call does nothing."""
        if self._started is None:
            if isinstance(self._target, Path):
                self._target.parent.mkdir(parents=True, exist_ok=True)
            self._started, self._owned = open_tables(self._target, "sign_ins", _SCHEMA, _STEPS)
        return self

    @property
    def _db(self) -> Database:
        return started(self, self._started)

    def cookie_id(self) -> str:
        """The suffix of the sign-in cookies' names, the same for every replica and after restarts (Gradio draws a
        new one at each start, which would sign everybody out), and unlike another app's on the same host."""
        with self._db.transaction() as tx:
            tx.execute(
                "INSERT INTO sign_in_meta (key, value) VALUES ('cookie_id', ?) ON CONFLICT (key) DO NOTHING",
                (secrets.token_urlsafe(16),),
            )
            row = tx.one("SELECT value FROM sign_in_meta WHERE key = 'cookie_id'")
        assert row is not None  # written just above, or before
        return str(row[0])

    # -- the served app's side ------------------------------------------------------------------

    def begin(
        self,
        token: str,
        user: str,
        method: str = "password",
        client: str = "",
        agent: str = "",
        now: float | None = None,
    ) -> str:
        """Keep the sign-in of ``user`` with ``token``; returns its id. Expired sign-ins are swept first."""
        now = time.time() if now is None else now
        session_id = secrets.token_urlsafe(12)
        with self._db.transaction() as tx:
            tx.execute("DELETE FROM sign_ins WHERE expires_at <= ?", (now,))
            tx.execute(
                "INSERT INTO sign_ins (id, token_hash, user_name, method, client, agent, started_at, expires_at, "
                "last_seen) VALUES (?,?,?,?,?,?,?,?,?)",
                (session_id, token_hash(token), user, method, client, agent[:AGENT_CHARS], now, now + self.lifetime_s,
                 now),
            )  # fmt: skip
        with self._lock:
            self._known[token_hash(token)] = _Known(session_id, user, now + self.lifetime_s, now)
        return session_id

    def user(self, token: str, now: float | None = None) -> str | None:
        """Whose sign-in ``token`` is; None when it is nobody's, was ended, or expired (then it is removed)."""
        now = time.time() if now is None else now
        digest = token_hash(token)
        with self._lock:
            known = self._known.get(digest)
        if known is not None and known.expires <= now:
            self._expire(digest, known.user)
            return None
        if known is not None and 0 <= now - known.checked < self.recheck_s:
            return known.user
        row = self._db.one("SELECT id, user_name, expires_at, last_seen FROM sign_ins WHERE token_hash = ?", (digest,))
        if row is None:
            self._forget(lambda key, _: key == digest)
            return None
        session_id, user, expires, seen = str(row[0]), str(row[1]), float(row[2]), float(row[3])
        if expires <= now:
            self._expire(digest, user)
            return None
        if now - seen >= SEEN_EVERY_S:
            self._db.execute("UPDATE sign_ins SET last_seen = ? WHERE id = ?", (now, session_id))
        with self._lock:
            if len(self._known) >= _CACHE_MAX:
                self._known = {k: v for k, v in self._known.items() if 0 <= now - v.checked < self.recheck_s}
            self._known[digest] = _Known(session_id, user, expires, now)
        return user

    def end(self, token: str) -> bool:
        """Sign the browser with ``token`` out; False when it was not signed in."""
        digest = token_hash(token)
        self._forget(lambda key, _: key == digest)
        return bool(self._db.execute("DELETE FROM sign_ins WHERE token_hash = ?", (digest,)))

    # -- the admin's side -----------------------------------------------------------------------

    def active(self, now: float | None = None) -> list[SignInView]:
        """Every sign-in that has not expired, the latest first (expired ones are swept)."""
        now = time.time() if now is None else now
        self._db.execute("DELETE FROM sign_ins WHERE expires_at <= ?", (now,))
        rows = self._db.query(
            "SELECT id, user_name, method, client, agent, started_at, expires_at, last_seen FROM sign_ins "
            "ORDER BY started_at DESC, id"
        )
        return [SignInView(str(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4]), *map(float, r[5:8])) for r in rows]

    def end_id(self, session_id: str) -> str | None:
        """End the sign-in with id ``session_id``; returns whose it was (None: there is none by that id)."""
        row = self._db.one("DELETE FROM sign_ins WHERE id = ? RETURNING user_name", (session_id,))
        self._forget(lambda _, known: known.id == session_id)
        return None if row is None else str(row[0])

    def end_user(self, user: str) -> int:
        """End every sign-in of ``user``; returns how many there were."""
        self._forget(lambda _, known: known.user == user)
        return self._db.execute("DELETE FROM sign_ins WHERE user_name = ?", (user,))

    def close(self) -> None:
        """Close the database if it was opened here (a shared one belongs to whoever opened it)."""
        if self._owned and self._started is not None:
            self._started.close()

    def _expire(self, digest: str, user: str) -> None:
        self._forget(lambda key, _: key == digest)
        if self._db.execute("DELETE FROM sign_ins WHERE token_hash = ?", (digest,)):
            log.info("sign-in of %r expired after %.4g h", user, self.lifetime_s / 3600)

    def _forget(self, which: Callable[[str, _Known], bool]) -> None:
        with self._lock:
            for key in [k for k, v in self._known.items() if which(k, v)]:
                del self._known[key]
