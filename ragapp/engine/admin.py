"""The admin facet: the accounts people sign in with, who may read and edit each knowledge base, and the
settings the app runs with (secrets masked).

Every method takes the acting user and checks their role first (``Action.MANAGE_USERS`` or
``Action.VIEW_SETTINGS``), so the Admin tab and a script calling its endpoints meet the same check. The users
file is the one ``python -m ragapp.users`` edits; a change counts from the changed user's next action (the
engine reads the file on every request). Each change is logged with who made it, never with a password.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr

from ragapp.config import Settings
from ragapp.core.access import Action, Actor, require
from ragapp.core.errors import ConfigError, RagAppError
from ragapp.ingest.pipeline import kb_name
from ragapp.store.catalog import Catalog
from ragapp.store.users import KbRule, LastAdminError, UserRecord, UserStore

log = logging.getLogger(__name__)

ACCOUNTS_OFF = (
    "Accounts are off, so there are no users to manage: add an admin with "
    "`python -m ragapp.users add NAME --role admin`, then start the app with RAGAPP_AUTH__ENABLED=true."
)
SET, NOT_SET = "•••• (set)", "(not set)"
# A setting is secret when a word of its name is one of these (``api_key``, ``auth_token``); substrings would
# hide ``max_tokens`` and ``min_keyword_score``.
_SECRET_WORDS = frozenset({"key", "secret", "password", "passwd", "token", "credential", "credentials"})
_URL_PASSWORD = re.compile(r"(?<=://)([^/@:\s]*):[^/@\s]*@")  # the password in https://user:pass@host


class AdminError(RagAppError):
    """An admin change was refused (it would lock the admins out, or names nothing)."""


@dataclass(frozen=True)
class UserView:
    """A user as the Admin tab lists them: no hash, no password."""

    name: str
    role: str
    groups: tuple[str, ...]
    created: str

    @classmethod
    def of(cls, record: UserRecord) -> UserView:
        return cls(record.name, record.role, record.groups, record.created)


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


class Admin:
    def __init__(self, settings: Settings, store: UserStore | None, catalog: Catalog) -> None:
        self._settings = settings
        self._store = store  # None: accounts off
        self._catalog = catalog

    @property
    def accounts_on(self) -> bool:
        return self._store is not None

    def _users(self, actor: Actor) -> UserStore:
        require(actor, Action.MANAGE_USERS)
        if self._store is None:
            raise ConfigError(ACCOUNTS_OFF)
        return self._store

    # -- users ----------------------------------------------------------------------------------

    def users(self, *, actor: Actor) -> list[UserView]:
        return [UserView.of(r) for r in self._users(actor).users()]

    def add_user(self, name: str, password: str, role: str, groups: Iterable[str] = (), *, actor: Actor) -> UserView:
        store = self._users(actor)
        record = store.add(name.strip(), password, role, names(groups))
        log.info("%s added user %s (%s, groups: %s)", actor.name, record.name, record.role, list(record.groups))
        return UserView.of(record)

    def set_role(self, name: str, role: str, *, actor: Actor) -> None:
        store = self._users(actor)
        record = self._known(store, name)
        if record.role == "admin" and role != "admin":
            self._not_yourself(record, actor, "demote")
        with _last_admin():
            store.set_role(record.name, role)
        log.info("%s changed the role of %s: %s -> %s", actor.name, record.name, record.role, role)

    def set_password(self, name: str, password: str, *, actor: Actor) -> None:
        store = self._users(actor)
        record = self._known(store, name)
        store.set_password(record.name, password)
        log.info("%s reset the password of %s", actor.name, record.name)

    def remove_user(self, name: str, *, actor: Actor) -> None:
        store = self._users(actor)
        record = self._known(store, name)
        if record.role == "admin":
            self._not_yourself(record, actor, "remove")
        with _last_admin():
            store.remove(record.name)
        log.info("%s removed user %s (%s)", actor.name, record.name, record.role)

    @staticmethod
    def _known(store: UserStore, name: str) -> UserRecord:
        record = store.get((name or "").strip())
        if record is None:
            raise AdminError(f"There is no user {name!r}; pick one from the list.")
        return record

    @staticmethod
    def _not_yourself(record: UserRecord, actor: Actor, what: str) -> None:
        """An admin leaves the admins only by another admin's hand; the store keeps the last one (its rule
        runs inside the locked edit, so it holds across replicas and for ``python -m ragapp.users``)."""
        if record.name == actor.name:
            raise AdminError(
                f"You may not {what} yourself: another admin must do it (so the app always keeps an admin)."
            )

    # -- knowledge-base access --------------------------------------------------------------------

    def kb_access(self, *, actor: Actor) -> list[KbAccessView]:
        """Every knowledge base that holds documents or has a rule, with its readers and editors."""
        rules = self._users(actor).kb_rules()
        kbs = sorted({kb.name for kb in self._catalog.knowledge_bases()} | set(rules))
        none = KbRule()
        return [KbAccessView(kb, rules.get(kb, none).readers, rules.get(kb, none).editors, kb in rules) for kb in kbs]

    def set_kb_access(self, kb: str, readers: Iterable[str], editors: Iterable[str], *, actor: Actor) -> KbAccessView:
        """Who may read and edit ``kb`` (names or ``group:NAME``); no readers and no editors opens it to every
        signed-in user again."""
        store = self._users(actor)
        base = kb_name(kb)
        rule = KbRule(names(readers), names(editors))
        store.set_kb_rule(base, rule if rule.readers or rule.editors else None)
        if rule.readers or rule.editors:
            log.info(
                "%s set the rule of %s: readers %s, editors %s", actor.name, base, list(rule.readers),
                list(rule.editors),
            )  # fmt: skip
        else:
            log.info("%s opened %s to every signed-in user", actor.name, base)
        return KbAccessView(base, rule.readers, rule.editors, bool(rule.readers or rule.editors))

    # -- settings -------------------------------------------------------------------------------

    def settings_view(self, *, actor: Actor) -> dict[str, Any]:
        """The effective settings as a nested dict, ready for JSON; secrets show only whether they are set."""
        require(actor, Action.VIEW_SETTINGS)
        return _masked_model(self._settings)


def _secret_name(name: str) -> bool:
    return bool(_SECRET_WORDS & set(name.lower().split("_")))


def _masked_model(model: BaseModel) -> dict[str, Any]:
    return {name: _masked(name, getattr(model, name)) for name in type(model).model_fields}


def _masked(name: str, value: Any) -> Any:
    if isinstance(value, SecretStr):
        return SET if value.get_secret_value() else NOT_SET
    if _secret_name(name):
        return SET if value not in (None, "", b"") else NOT_SET
    if isinstance(value, BaseModel):
        return _masked_model(value)
    if isinstance(value, dict):
        return {str(k): _masked(str(k), v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_masked("", v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, str):
        return _URL_PASSWORD.sub(r"\1:••••@", value)
    return value


@contextmanager
def _last_admin() -> Iterator[None]:
    try:
        yield
    except LastAdminError as exc:
        raise AdminError(str(exc)) from None
