"""``AuditLog``: what the engine calls to record an action, in one line at the call site.

The trade: writing a record never breaks the action it records. A sign-in, an upload or a question goes on when
the log's database is down, full or locked; but it does not go unaudited silently: the record that could not be
written goes to the application log at ERROR level, whole (who, from where, what, the detail), so the operator
sees the failure and still has the record. (Refusing every action while the log is down would turn an audit
outage into an outage of the app.)

``attempt`` wraps an action: the record says ``ok`` when the block ends, ``refused`` when it raises
``AccessDenied`` or ``LoginRefused`` (a role, a knowledge-base rule, a wrong password, a throttled sign-in) and
``failed`` with the error for anything else; the exception goes on as it was.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ragapp.audit.model import AuditAction, AuditQuery, AuditRecord, Outcome
from ragapp.audit.store import AuditStore
from ragapp.config import AuditSettings, Settings
from ragapp.core.access import Action, Actor, require
from ragapp.core.errors import AccessDenied, LoginRefused
from ragapp.db import Database

log = logging.getLogger(__name__)

SWEEP_EVERY = timedelta(days=1)
MAX_DETAIL_CHARS = 2_000  # a string in a record (a question, an error, a name typed at sign-in) is cut to this


def _cut(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_DETAIL_CHARS:
        return value[: MAX_DETAIL_CHARS - 1] + "…"
    if isinstance(value, list | tuple | set | frozenset):
        return [_cut(v) for v in value]
    return value


class AuditLog:
    """The audit log as the engine's facets use it. ``store`` None: the log is off (``audit.enabled``), and
    recording does nothing."""

    def __init__(self, store: AuditStore | None, settings: AuditSettings) -> None:
        self.store = store
        self.settings = settings
        self._sweep_lock = threading.Lock()
        self._swept: datetime | None = None

    @property
    def enabled(self) -> bool:
        return self.store is not None

    @property
    def log_questions(self) -> bool:
        return self.settings.log_questions

    @classmethod
    def off(cls) -> AuditLog:
        """A log that records nothing (an engine or facet built without one: tests, one-off tools)."""
        return cls(None, AuditSettings(enabled=False))

    def record(
        self,
        actor: Actor | str,
        action: AuditAction,
        target: str = "",
        outcome: Outcome = "ok",
        detail: dict[str, Any] | None = None,
        *,
        client: str = "",
    ) -> None:
        """Append one record for ``actor`` (their name, role and client address; a bare name, for a sign-in
        refused before anyone was known, has no role and acts from ``client``). Never raises: see the module."""
        if self.store is None:
            return
        name, role = (actor.name, actor.role) if isinstance(actor, Actor) else (_cut(actor), "")
        client = actor.client if isinstance(actor, Actor) else client
        kept = {k: _cut(v) for k, v in (detail or {}).items() if v not in (None, "", [], ())}
        try:
            self.store.append(name, role, client, action.value, _cut(target), outcome, kept)
            self._maybe_sweep()
        except Exception as exc:  # the action goes on; the record goes to the application log instead
            whole = {"actor": name, "role": role, "client": client, "action": action.value,
                     "target": target, "outcome": outcome, "detail": kept}  # fmt: skip
            log.error("audit record not written (%r): %s", exc, json.dumps(whole, ensure_ascii=False, default=str))

    @contextmanager
    def attempt(
        self, actor: Actor, action: AuditAction, target: str = "", /, **detail: Any
    ) -> Iterator[dict[str, Any]]:
        """Record the action the block does, with how it ended; the block may add to the detail it is given."""
        note = dict(detail)
        try:
            yield note
        except (AccessDenied, LoginRefused) as exc:
            self.record(actor, action, target, "refused", {**note, "reason": str(exc)})
            raise
        except Exception as exc:
            self.record(actor, action, target, "failed", {**note, "error": str(exc) or type(exc).__name__})
            raise
        self.record(actor, action, target, "ok", note)

    @contextmanager
    def refusals(self, actor: Actor, action: AuditAction, target: str = "", /, **detail: Any) -> Iterator[None]:
        """Record only a refusal (``AccessDenied``) of the block: for checks made before the action itself,
        whose own record comes later (an upload the API checks before it accepts the files)."""
        try:
            yield
        except AccessDenied as exc:
            self.record(actor, action, target, "refused", {**detail, "reason": str(exc)})
            raise

    def require(
        self, actor: Actor, permission: Action, action: AuditAction, target: str = "", /, **detail: Any
    ) -> None:
        """``ragapp.core.access.require``, recording the refusal as ``action`` (see ``refusals``)."""
        with self.refusals(actor, action, target, **detail):
            require(actor, permission)

    def query(self, query: AuditQuery) -> tuple[list[AuditRecord], int]:
        """One page of the records ``query`` matches, and how many match in all (none with the log off)."""
        if self.store is None:
            return [], 0
        return self.store.query(query), self.store.count(query)

    def sweep(self) -> int:
        """Remove the records older than ``audit.retention_days``; returns how many went."""
        if self.store is None:
            return 0
        with self._sweep_lock:
            self._swept = self.store.now()
            removed = self.store.sweep(self.settings.retention_days)
        if removed:
            log.info("audit log: removed %d record(s) older than %d days", removed, self.settings.retention_days)
        return removed

    def _maybe_sweep(self) -> None:
        if self.store is not None and (self._swept is None or self.store.now() - self._swept >= SWEEP_EVERY):
            self.sweep()

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


def open_audit(settings: Settings, database: Database | None = None) -> AuditLog:
    """The audit log of ``settings``: in the shared PostgreSQL database when there is one, else its SQLite file;
    started, and swept of what is past ``audit.retention_days``. Off (``audit.enabled`` false): records nothing."""
    audit = settings.audit
    if not audit.enabled:
        return AuditLog(None, audit)
    target: Path | Database = database if database is not None else audit.path(settings.paths.state_dir)
    opened = AuditLog(AuditStore(target).start(), audit)
    opened.sweep()
    return opened
