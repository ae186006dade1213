"""The account records: a user as the store keeps them, an API key, a knowledge base's rule, the views the Admin
tab lists (no hash, no password) and the errors a refused change raises."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ragapp.core.access import Actor, Role
from ragapp.core.errors import RagAppError


class UserError(RagAppError):
    """A user could not be added or changed (a bad name, role or password, or an unknown user)."""


class LastAdminError(UserError):
    """The change would leave no admin (checked inside the locked edit: across replicas, and for the CLI)."""


class AdminError(RagAppError):
    """An admin change was refused (it would lock the admins out, or names nothing)."""


@dataclass(frozen=True)
class UserRecord:
    """``source``: "local" (a password in the accounts), or the company sign-in that made the user ("oidc",
    "ldap"), whose role and groups it sets again at every sign-in."""

    name: str
    role: Role
    groups: tuple[str, ...]
    created: str
    source: str = "local"

    @property
    def actor(self) -> Actor:
        return Actor(self.name, self.role, frozenset(self.groups))


@dataclass(frozen=True)
class ApiKeyRecord:
    """An API key as the accounts keep it: its id (to revoke it by), whose it is, when it was made."""

    id: str
    user: str
    created: str


@dataclass(frozen=True)
class KbRule:
    """Who may read and who may edit one knowledge base: user names, or ``group:NAME``. A knowledge base with
    no rule is open to every signed-in user (editing still needs the editor role)."""

    readers: tuple[str, ...] = ()
    editors: tuple[str, ...] = ()


@dataclass(frozen=True)
class UserView:
    """A user as the Admin tab lists them: no hash, no password."""

    name: str
    role: str
    groups: tuple[str, ...]
    created: str
    source: str = "local"

    @classmethod
    def of(cls, record: UserRecord) -> UserView:
        return cls(record.name, record.role, record.groups, record.created, record.source)


@dataclass(frozen=True)
class KbAccessView:
    """One knowledge base and who may read and edit it (empty: open to everyone signed in)."""

    kb: str
    readers: tuple[str, ...]
    editors: tuple[str, ...]
    has_rule: bool


def names(text: str | Iterable[str]) -> tuple[str, ...]:
    """User names and ``group:NAME`` from a comma-separated string (or a list), trimmed, without repeats."""
    parts = text.replace("，", ",").split(",") if isinstance(text, str) else list(text)
    return tuple(dict.fromkeys(p.strip() for p in parts if p.strip()))
