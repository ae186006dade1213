"""The accounts service, the one way in to the accounts: the engine signs people in and checks their knowledge-base
access with it, the Admin tab and the HTTP API reach it through the engine, and ``python -m ragapp.users`` opens
it with ``open_accounts`` like the engine does.

Signing in: a name, or a client address, with ``max_failed_logins`` failed sign-ins within ``lockout_s`` is
refused for the rest of that window, even with the right password (so guessing gains nothing). Every refusal
says the same thing whether the name exists or not, and costs the same bcrypt check (``UserStore.verify``), so
error messages and timing name no users.

With an LDAP directory on (``ragapp.accounts.ldap``), a name no local account has is checked there next: the
directory's yes adds or updates them as a company sign-in user (``sign_in_external``, source "ldap"), its no
counts as a failed sign-in like a wrong local password, and its silence refuses with ``DirectoryUnavailable``
(not counted: nobody guessed anything). A local account's name is never sent to the directory.

Changes to users and knowledge-base rules take the acting user and check their role first
(``Action.MANAGE_USERS``). Each is logged with who made it, never with a password, and counts from the changed
user's next action (the accounts are read on every request). Removing a user or setting their password ends
their sign-ins (``sessions``, the sign-ins kept in the database: ``ragapp.accounts.sessions``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from ragapp.accounts.external import mapped_role
from ragapp.accounts.kb_access import KbAccess
from ragapp.accounts.ldap import LdapDirectory
from ragapp.accounts.model import (
    AdminError,
    KbAccessView,
    KbRule,
    LastAdminError,
    UserError,
    UserRecord,
    UserView,
    names,
)
from ragapp.accounts.sessions import SessionStore, SignInView
from ragapp.accounts.store import UserStore, open_user_store
from ragapp.accounts.throttle import LoginThrottle
from ragapp.config import AuthSettings, Settings
from ragapp.core.access import Action, Actor, require
from ragapp.core.errors import LoginRefused, LoginThrottled, NoRoleRefused
from ragapp.core.said import Said
from ragapp.db import Database

log = logging.getLogger(__name__)

WRONG = "Wrong name or password."
NO_ROLE = "Your account is in no group this app gives a role to; ask an administrator."


def _no_kbs() -> tuple[str, ...]:
    return ()


class Accounts:
    """``known_kbs``: the knowledge bases that hold documents, listed beside the ones that have a rule;
    ``directory``: the LDAP directory names no local account has are checked against (None: none)."""

    def __init__(
        self,
        store: UserStore,
        settings: AuthSettings,
        clock: Callable[[], float] = time.monotonic,
        known_kbs: Callable[[], Iterable[str]] = _no_kbs,
        sessions: SessionStore | None = None,
        directory: LdapDirectory | None = None,
    ) -> None:
        self.store = store
        self.sessions = sessions  # the sign-ins; None: not kept (a script that only edits users)
        self.directory = directory  # the LDAP directory; None: local accounts only
        self.kb = KbAccess(store, known_kbs)  # who may read and edit which knowledge base
        self._known_kbs = known_kbs
        self._throttle = LoginThrottle(settings.max_failed_logins, settings.lockout_s, clock)
        self._group_roles = dict(settings.group_roles)
        self._default_role = settings.default_role

    # -- who is asking --------------------------------------------------------------------------

    def login(self, name: str, password: str, client: str = "") -> Actor:
        """The user signing in, or ``LoginRefused`` with a message that names no user (``LoginThrottled`` while
        that name or address waits)."""
        name = name.strip()
        keys = (f"name:{name.lower()}", f"client:{client}")
        wait = self._throttle.wait_s(*keys)
        if wait > 0:
            log.warning("sign-in refused (throttled) for %r from %s", name, client or "?")
            raise LoginThrottled(f"Too many failed sign-ins; try again in {wait:.0f} s.")
        actor = self._checked(name, password, client)
        if actor is None:
            self._throttle.failed(*keys)
            log.warning("failed sign-in for %r from %s", name, client or "?")
            raise LoginRefused(WRONG)
        self._throttle.succeeded(keys[0])
        log.info("%s signed in from %s", actor.name, client or "?")
        return actor

    def _checked(self, name: str, password: str, client: str) -> Actor | None:
        """The local account's password first; then the directory, for a name no local account has."""
        record = self.store.verify(name, password)
        if record is not None:
            return record.actor
        if self.directory is None or self._is_local(name):
            return None
        found = self.directory.authenticate(name, password)  # DirectoryUnavailable when it does not answer
        return None if found is None else self.sign_in_external(found.name, found.groups, "ldap", client)

    def _is_local(self, name: str) -> bool:
        record = self.store.get(name)
        return record is not None and record.source == "local"

    def sign_in_external(self, name: str, groups: Iterable[str], source: str, client: str = "") -> Actor:
        """A user the company sign-in ``source`` ("oidc", "ldap") vouched for, with the role ``groups`` map to
        (``ragapp.accounts.external``); added to the accounts, or brought up to date, so every later request
        sees that role and those groups. ``LoginRefused`` when no group gives a role and there is no default,
        or when ``name`` is a local account."""
        name, kept = name.strip(), names(groups)
        role = mapped_role(kept, self._group_roles, self._default_role)
        if role is None:
            log.warning("%s sign-in refused for %r from %s: no group maps to a role", source, name, client or "?")
            raise NoRoleRefused(NO_ROLE)
        try:
            record = self.store.provision(name, role, kept, source)
        except UserError as exc:
            log.warning("%s sign-in refused for %r from %s: %s", source, name, client or "?", exc)
            raise LoginRefused(str(exc)) from None
        log.info("%s signed in with %s from %s as %s (groups: %s)", name, source, client or "?", role, list(kept))
        return record.actor

    def actor(self, name: str) -> Actor | None:
        """``name`` with the role and groups the accounts give them now; None for a name nobody has."""
        record = self.store.get(name)
        return None if record is None else record.actor

    def source_of(self, name: str) -> str | None:
        """How ``name`` signs in: "local" (a password here), "oidc", "ldap"; None for a name nobody has."""
        record = self.store.get(name)
        return None if record is None else record.source

    def key_user(self, key: str) -> str | None:
        """Whose API key ``key`` is; None when it is nobody's (or was revoked)."""
        return self.store.key_user(key)

    # -- users ----------------------------------------------------------------------------------

    def users(self, *, actor: Actor) -> list[UserView]:
        require(actor, Action.MANAGE_USERS)
        return [UserView.of(r) for r in self.store.users()]

    def add_user(self, name: str, password: str, role: str, groups: Iterable[str] = (), *, actor: Actor) -> UserView:
        require(actor, Action.MANAGE_USERS)
        record = self.store.add(name.strip(), password, role, names(groups))
        log.info("%s added user %s (%s, groups: %s)", actor.name, record.name, record.role, list(record.groups))
        return UserView.of(record)

    def set_role(self, name: str, role: str, *, actor: Actor) -> None:
        require(actor, Action.MANAGE_USERS)
        record = self._known(name)
        if record.role == "admin" and role != "admin":
            _not_yourself(record, actor, "demote")
        with _last_admin():
            self.store.set_role(record.name, role)
        log.info("%s changed the role of %s: %s -> %s", actor.name, record.name, record.role, role)

    def set_password(self, name: str, password: str, *, actor: Actor) -> None:
        require(actor, Action.MANAGE_USERS)
        record = self._known(name)
        self.store.set_password(record.name, password)
        log.info("%s reset the password of %s", actor.name, record.name)
        self._end_sign_ins(record.name, "a new password")

    def remove_user(self, name: str, *, actor: Actor) -> None:
        require(actor, Action.MANAGE_USERS)
        record = self._known(name)
        if record.role == "admin":
            _not_yourself(record, actor, "remove")
        with _last_admin():
            self.store.remove(record.name)
        log.info("%s removed user %s (%s)", actor.name, record.name, record.role)
        self._end_sign_ins(record.name, "removed")

    def _end_sign_ins(self, name: str, why: str) -> None:
        ended = self.sessions.end_user(name) if self.sessions is not None else 0
        if ended:
            log.info("ended %d sign-in(s) of %s (%s)", ended, name, why)

    # -- sign-ins (``ragapp.accounts.sessions``) --------------------------------------------------

    def sign_ins(self, *, actor: Actor) -> list[SignInView]:
        """Every sign-in that has not expired, the latest first."""
        require(actor, Action.MANAGE_USERS)
        return self._sessions().active()

    def end_sign_in(self, session_id: str, *, actor: Actor) -> str:
        """End one sign-in, by its id; returns whose it was."""
        require(actor, Action.MANAGE_USERS)
        user = self._sessions().end_id((session_id or "").strip())
        if user is None:
            raise AdminError(said=Said("accounts.no_sign_in", {"session": session_id}))
        log.info("%s ended a sign-in of %s (%s)", actor.name, user, session_id)
        return user

    def end_sign_ins_of(self, name: str, *, actor: Actor) -> int:
        """End every sign-in of ``name``; returns how many there were."""
        require(actor, Action.MANAGE_USERS)
        name = (name or "").strip()
        ended = self._sessions().end_user(name)
        log.info("%s ended %d sign-in(s) of %s", actor.name, ended, name)
        return ended

    def _sessions(self) -> SessionStore:
        if self.sessions is None:
            raise AdminError(said=Said("accounts.no_sessions"))
        return self.sessions

    def close(self) -> None:
        """Close the sign-ins' database if it was opened for them."""
        if self.sessions is not None:
            self.sessions.close()

    def _known(self, name: str) -> UserRecord:
        record = self.store.get((name or "").strip())
        if record is None:
            raise AdminError(said=Said("accounts.no_user_pick", {"name": name}))
        return record

    # -- knowledge-base rules -------------------------------------------------------------------

    def kb_access(self, *, actor: Actor) -> list[KbAccessView]:
        """Every knowledge base that holds documents or has a rule, with its readers and editors."""
        require(actor, Action.MANAGE_USERS)
        rules = self.store.kb_rules()
        kbs = sorted(set(self._known_kbs()) | set(rules))
        none = KbRule()
        return [KbAccessView(kb, rules.get(kb, none).readers, rules.get(kb, none).editors, kb in rules) for kb in kbs]

    def set_kb_access(self, kb: str, readers: Iterable[str], editors: Iterable[str], *, actor: Actor) -> KbAccessView:
        """Who may read and edit ``kb`` (a checked knowledge-base name; readers and editors are names or
        ``group:NAME``); no readers and no editors opens it to every signed-in user again."""
        require(actor, Action.MANAGE_USERS)
        rule = KbRule(names(readers), names(editors))
        self.store.set_kb_rule(kb, rule if rule.readers or rule.editors else None)
        if rule.readers or rule.editors:
            log.info(
                "%s set the rule of %s: readers %s, editors %s", actor.name, kb, list(rule.readers),
                list(rule.editors),
            )  # fmt: skip
        else:
            log.info("%s opened %s to every signed-in user", actor.name, kb)
        return KbAccessView(kb, rule.readers, rule.editors, bool(rule.readers or rule.editors))


def open_accounts(
    settings: Settings,
    database: Database | None = None,
    known_kbs: Callable[[], Iterable[str]] = _no_kbs,
    sign_ins: bool = True,
) -> Accounts:
    """The accounts in the shared PostgreSQL database when there is one, else in the users file; with
    ``sign_ins``, the sign-ins in that database too, else in sessions.sqlite3 in the state dir; with the LDAP
    directory on, checked against it too (``ConfigError`` at once when its settings cannot work)."""
    auth = settings.auth
    state = settings.paths.state_dir
    store = open_user_store(auth.users_path(state), auth.bcrypt_rounds, database)
    where = database if database is not None else state / "sessions.sqlite3"
    sessions = SessionStore(where, auth.session_hours * 3600, auth.session_recheck_s).start() if sign_ins else None
    directory = LdapDirectory(settings.ldap) if auth.enabled and settings.ldap.enabled else None
    return Accounts(store, auth, known_kbs=known_kbs, sessions=sessions, directory=directory)


def _not_yourself(record: UserRecord, actor: Actor, what: str) -> None:
    """An admin leaves the admins only by another admin's hand; the store keeps the last one (its rule runs
    inside the locked edit, so it holds across replicas and for ``python -m ragapp.users``)."""
    if record.name == actor.name:
        raise AdminError(said=Said("accounts.not_yourself", {"what": what}))


@contextmanager
def _last_admin() -> Iterator[None]:
    try:
        yield
    except LastAdminError as exc:
        raise AdminError(str(exc), exc.said) from None
