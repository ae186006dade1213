"""The admin facet: the accounts people sign in with, their sign-ins, who may read and edit each knowledge base,
and the settings the app runs with (secrets masked).

Every method takes the acting user and checks their role first (``Action.MANAGE_USERS`` or
``Action.VIEW_SETTINGS``), so the Admin tab and a script calling its endpoints meet the same check. Users and
knowledge-base rules are the accounts service's (``ragapp.accounts.service``): the same accounts
``python -m ragapp.users`` edits; here they are only passed on, or refused with accounts off. Every change
is audited here (``ragapp.audit``), refused and failed ones too, never with a password.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr

from ragapp.accounts.model import KbAccessView, UserView, names
from ragapp.accounts.service import Accounts
from ragapp.accounts.sessions import SignInView
from ragapp.agent.mcp_tools import ServerTools
from ragapp.audit import AuditAction, AuditLog
from ragapp.config import Settings
from ragapp.core.access import Action, Actor, require
from ragapp.core.errors import ConfigError
from ragapp.core.said import Said
from ragapp.ingest.pipeline import kb_name

ACCOUNTS_OFF = Said("accounts.off")
SET, NOT_SET = "•••• (set)", "(not set)"
# A setting is secret when a word of its name is one of these (``api_key``, ``auth_token``); substrings would
# hide ``max_tokens`` and ``min_keyword_score``.
# "headers" and "env" of an MCP server (agent.mcp_servers) hold tokens under names of their own: shown as set or not.
_SECRET_WORDS = frozenset(
    {"key", "secret", "password", "passwd", "token", "credential", "credentials", "headers", "env"}
)
_URL_PASSWORD = re.compile(r"(?<=://)([^/@:\s]*):[^/@\s]*@")  # the password in https://user:pass@host


class Admin:
    def __init__(
        self,
        settings: Settings,
        accounts: Accounts | None,
        agent_tools: Callable[[], list[ServerTools]] | None = None,
        audit: AuditLog | None = None,
    ) -> None:
        self._settings = settings
        self._accounts = accounts  # None: accounts off
        self._agent_tools = agent_tools or list
        self._audit = audit or AuditLog.off()

    @property
    def accounts_on(self) -> bool:
        return self._accounts is not None

    def _on(self, actor: Actor) -> Accounts:
        require(actor, Action.MANAGE_USERS)
        if self._accounts is None:
            raise ConfigError(said=ACCOUNTS_OFF)
        return self._accounts

    # -- users and knowledge-base access (the accounts service's) -------------------------------

    def users(self, *, actor: Actor) -> list[UserView]:
        return self._on(actor).users(actor=actor)

    def add_user(self, name: str, password: str, role: str, groups: Iterable[str] = (), *, actor: Actor) -> UserView:
        groups = names(groups)  # a list, or the form's comma-separated text
        with self._audit.attempt(actor, AuditAction.USER_ADD, name.strip(), role=role, groups=list(groups)):
            return self._on(actor).add_user(name, password, role, groups, actor=actor)

    def set_role(self, name: str, role: str, *, actor: Actor) -> None:
        with self._audit.attempt(actor, AuditAction.USER_ROLE, (name or "").strip(), role=role):
            self._on(actor).set_role(name, role, actor=actor)

    def set_password(self, name: str, password: str, *, actor: Actor) -> None:
        with self._audit.attempt(actor, AuditAction.USER_PASSWORD, (name or "").strip()):
            self._on(actor).set_password(name, password, actor=actor)

    def remove_user(self, name: str, *, actor: Actor) -> None:
        with self._audit.attempt(actor, AuditAction.USER_REMOVE, (name or "").strip()):
            self._on(actor).remove_user(name, actor=actor)

    def kb_access(self, *, actor: Actor) -> list[KbAccessView]:
        return self._on(actor).kb_access(actor=actor)

    # -- sign-ins (never their tokens) -----------------------------------------------------------

    def sign_ins(self, *, actor: Actor) -> list[SignInView]:
        """Every browser signed in now, the latest first."""
        return self._on(actor).sign_ins(actor=actor)

    def end_sign_in(self, session_id: str, *, actor: Actor) -> str:
        """Sign one browser out (by the id ``sign_ins`` gives); returns whose sign-in it was."""
        with self._audit.attempt(actor, AuditAction.SIGN_IN_END, "", session=session_id) as note:
            note["user"] = user = self._on(actor).end_sign_in(session_id, actor=actor)
        return user

    def end_sign_ins_of(self, name: str, *, actor: Actor) -> int:
        """Sign ``name`` out everywhere; returns how many sign-ins ended."""
        with self._audit.attempt(actor, AuditAction.SIGN_IN_END, (name or "").strip(), all=True) as note:
            note["ended"] = ended = self._on(actor).end_sign_ins_of(name, actor=actor)
        return ended

    def set_kb_access(self, kb: str, readers: Iterable[str], editors: Iterable[str], *, actor: Actor) -> KbAccessView:
        """Who may read and edit ``kb`` (names or ``group:NAME``); no readers and no editors opens it to every
        signed-in user again."""
        readers, editors = names(readers), names(editors)  # lists, or the form's comma-separated text
        with self._audit.attempt(actor, AuditAction.KB_RULE, kb, readers=list(readers), editors=list(editors)) as note:
            accounts = self._on(actor)
            view = accounts.set_kb_access(kb_name(kb), readers, editors, actor=actor)
            note["opened"] = not view.has_rule or None  # no rule: every signed-in user may read it again
        return view

    # -- settings -------------------------------------------------------------------------------

    def agent_tools(self) -> list[ServerTools]:
        """The MCP servers configured for Agent mode (``agent.mcp_servers``), each with its tools or why it has
        none (reaching them if not yet)."""
        return self._agent_tools()

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
