"""What one audit record says: when (UTC), who (name, role, client address), what (a closed set of actions), to
what (a knowledge base, document, user, source or intent), how it ended, and a small JSON detail."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal, get_args

from ragapp.core.access import Actor


class AuditAction(StrEnum):
    """Everything the audit log records. The values are what the log stores and shows: never rename one."""

    SIGN_IN = "sign-in"
    SIGN_OUT = "sign-out"
    SIGN_IN_END = "sign-in end"  # an admin (or the users command, a new password) ending someone's sign-ins
    SEARCH = "search"  # a question's scope: the knowledge bases searched (chat, agent, API, MCP)
    UPLOAD = "upload"
    REINDEX = "re-index"
    DELETE = "delete"
    MOVE = "move"
    TAG = "tag"
    SOURCE_ADD = "source add"
    SOURCE_REMOVE = "source remove"
    SOURCE_SYNC = "source sync"
    SOURCE_PAUSE = "source pause"
    SOURCE_RESUME = "source resume"
    ENRICH_PAUSE = "enrichment pause"  # a knowledge base's background indexing
    ENRICH_RESUME = "enrichment resume"
    KB_RULE = "knowledge-base rule"
    USER_ADD = "user add"
    USER_ROLE = "user role"
    USER_PASSWORD = "user password"
    USER_REMOVE = "user remove"
    KEY_CREATE = "API key create"
    KEY_REVOKE = "API key revoke"
    INTENT_SAVE = "intent save"
    INTENT_DELETE = "intent delete"
    INTENT_MOVE = "intent move"
    INTENT_IMPORT = "intent import"
    AUDIT_READ = "audit read"


Outcome = Literal["ok", "refused", "failed"]  # done; not allowed (role, rule, password, throttle); tried, failed
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)

CLI_ACTOR = Actor("cli", "admin")  # ``python -m ragapp.users``: whoever runs it on the server
SYSTEM_ACTOR = Actor("system", "admin")  # the app itself (the demo files on first start)


@dataclass(frozen=True)
class AuditRecord:
    """One row of the audit log, as read back (``id`` orders rows written in the same instant)."""

    id: int
    at: str  # ISO 8601, UTC, to the microsecond: sorts as text
    actor: str
    role: str
    client: str
    action: str
    target: str
    outcome: str
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AuditQuery:
    """Which records to read: every filter left empty matches everything; newest first, ``limit`` from
    ``offset``."""

    actor: str = ""  # exactly this name
    action: str = ""  # exactly this action (an ``AuditAction`` value)
    target: str = ""  # a part of the target (a knowledge base's name finds the searches that included it)
    outcome: str = ""
    since: datetime | None = None  # at or after
    until: datetime | None = None  # before
    limit: int = 100
    offset: int = 0
