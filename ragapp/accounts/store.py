"""Accounts in one JSON document: name, role, groups and a bcrypt hash of the password (never the password).

The document is small and rarely written (by ``python -m ragapp.users`` or an admin), so a JSON file an operator
can read, back up and keep under configuration management fits better than tables. With replicas it is one row
of the shared database instead (``ragapp.accounts.document``), the same JSON.

Passwords: bcrypt (the ``bcrypt`` package) over the SHA-256 of the password, base64-encoded. bcrypt reads
only the first 72 bytes of its input; the digest keeps every character of a long passphrase significant.

API keys (for the HTTP API): random, 256 bits, kept as their SHA-256 only. A slow hash guards guessable
passwords; a key nobody chose cannot be guessed, so a fast one is enough and every request can check it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from datetime import UTC, datetime
from pathlib import Path

import bcrypt

from ragapp.accounts.document import AccountsDocument, DatabaseDocument, FileDocument
from ragapp.accounts.model import ApiKeyRecord, KbRule, LastAdminError, UserError, UserRecord
from ragapp.core.access import ROLES, Role
from ragapp.core.errors import ConfigError
from ragapp.core.said import Said
from ragapp.db import Database

MIN_PASSWORD_CHARS = 8
KEY_PREFIX = "rag-"  # API keys start so, to be recognised in a config file or a leak scan
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def hash_password(password: str, rounds: int = 12) -> str:
    return bcrypt.hashpw(_digest(password), bcrypt.gensalt(rounds)).decode("ascii")


def check_password(password: str, hashed: str) -> bool:
    try:
        return bcrypt.checkpw(_digest(password), hashed.encode("ascii"))
    except ValueError:  # a damaged hash in the file: no match, never a crash
        return False


def _digest(password: str) -> bytes:
    return base64.b64encode(hashlib.sha256(password.encode("utf-8")).digest())


class UserStore:
    """``target``: the users file, or where the document lives (``open_user_store`` picks)."""

    def __init__(self, target: Path | AccountsDocument, rounds: int = 12) -> None:
        self._doc: AccountsDocument = FileDocument(target) if isinstance(target, Path) else target
        self._rounds = rounds
        self._decoy = ""  # made on the first sign-in with an unknown name: a constructor does no hashing

    @property
    def path(self) -> Path | None:
        """The users file; None when the accounts are in the database."""
        return self._doc.path if isinstance(self._doc, FileDocument) else None

    @property
    def where(self) -> str:
        """The file, or the database table, for messages."""
        return self._doc.where

    def users(self) -> list[UserRecord]:
        return [self._record(name, data) for name, data in sorted(self._read().items())]

    def get(self, name: str) -> UserRecord | None:
        data = self._read().get(name)
        return None if data is None else self._record(name, data)

    def add(self, name: str, password: str, role: str, groups: tuple[str, ...] = ()) -> UserRecord:
        if not _NAME.match(name):
            raise UserError(said=Said("accounts.bad_name", {"name": name}))
        checked_role = _role(role)
        _check_password(password)
        with self._doc.editing():
            users = self._read()
            if name in users:
                raise UserError(said=Said("accounts.exists", {"name": name}))
            users[name] = {
                "role": checked_role,
                "groups": sorted(set(groups)),
                "hash": hash_password(password, self._rounds),
                "created": datetime.now(UTC).isoformat(timespec="seconds"),
            }
            self._write(users)
            return self._record(name, users[name])

    def set_password(self, name: str, password: str) -> None:
        _check_password(password)
        with self._doc.editing():
            users = self._read()
            user = self._known(users, name)
            if user.get("source", "local") != "local":
                raise UserError(said=Said("accounts.external_password", {"name": name, "source": str(user["source"])}))
            user["hash"] = hash_password(password, self._rounds)
            self._write(users)

    def provision(self, name: str, role: str, groups: tuple[str, ...], source: str) -> UserRecord:
        """A user of a company sign-in (``source``: "oidc", "ldap"), added or brought up to date with the role
        and groups it gives now. No password is kept for them (``verify`` never matches one), and a local
        account of that name is never taken over."""
        if not _NAME.match(name):
            raise UserError(f"{name!r} is not a name this app accepts (1-64 letters, digits and . _ @ -).")
        checked = _role(role)
        with self._doc.editing():
            users = self._read()
            kept = users.get(name)
            if kept is not None and kept.get("source", "local") != source:
                raise UserError(
                    f"{name!r} is already a {kept.get('source', 'local')} account; a {source} sign-in may not use it."
                )
            created = str(kept.get("created", "")) if kept else datetime.now(UTC).isoformat(timespec="seconds")
            users[name] = {"role": checked, "groups": sorted(set(groups)), "source": source, "created": created}
            self._write(users)
            return self._record(name, users[name])

    def set_role(self, name: str, role: str) -> None:
        """``name``'s role, changed; refused when it would demote the last admin."""
        checked = _role(role)
        with self._doc.editing():
            users = self._read()
            if checked != "admin":
                _keep_an_admin(users, name)
            self._known(users, name)["role"] = checked
            self._write(users)

    def remove(self, name: str) -> None:
        """``name`` and their API keys, gone; refused when ``name`` is the last admin."""
        with self._doc.editing():
            users = self._read()
            self._known(users, name)
            _keep_an_admin(users, name, removing=True)
            del users[name]
            kept = {i: k for i, k in self._api_keys().items() if k.get("user") != name}  # their keys go too
            self._write(users, keys=kept)

    def verify(self, name: str, password: str) -> UserRecord | None:
        """The user when ``password`` is theirs; None for a wrong password or an unknown name alike."""
        data = self._read().get(name)
        if data is None:
            # Checked against when the name is unknown, so a wrong name costs as long as a wrong password.
            check_password(password, self._decoy_hash())
            return None
        hashed = str(data.get("hash", "")) or self._decoy_hash()  # a company sign-in's user has no password here
        return self._record(name, data) if check_password(password, hashed) else None

    def _decoy_hash(self) -> str:
        self._decoy = self._decoy or hash_password("not a password of anyone", self._rounds)
        return self._decoy

    # -- API keys ------------------------------------------------------------------------------

    def add_key(self, user: str) -> tuple[ApiKeyRecord, str]:
        """A new API key for ``user``: its record and the key itself, which is not kept (only its hash)."""
        if not _NAME.match(user):
            raise UserError(f"{user!r} is not a valid user name.")
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        record = ApiKeyRecord(secrets.token_hex(4), user, datetime.now(UTC).isoformat(timespec="seconds"))
        with self._doc.editing():
            keys = self._api_keys()
            keys[record.id] = {"user": user, "sha256": key_hash(key), "created": record.created}
            self._write(self._read(), keys=keys)
        return record, key

    def revoke_key(self, key_id: str) -> ApiKeyRecord:
        with self._doc.editing():
            keys = self._api_keys()
            if key_id not in keys:
                raise UserError(f"There is no API key {key_id!r}; `python -m ragapp.users keys` lists them.")
            record = _key_record(key_id, keys.pop(key_id))
            self._write(self._read(), keys=keys)
        return record

    def revoke_keys(self, user: str) -> int:
        """Revoke every key of ``user``; how many there were."""
        with self._doc.editing():
            keys = self._api_keys()
            kept = {i: k for i, k in keys.items() if k.get("user") != user}
            self._write(self._read(), keys=kept)
        return len(keys) - len(kept)

    def api_keys(self) -> list[ApiKeyRecord]:
        return sorted((_key_record(i, k) for i, k in self._api_keys().items()), key=lambda r: (r.user, r.created))

    def key_user(self, key: str) -> str | None:
        """Whose ``key`` is; None when it is nobody's (or was revoked)."""
        wanted = key_hash(key)
        found = None
        for data in self._api_keys().values():  # every entry compared, in constant time each
            if hmac.compare_digest(str(data.get("sha256", "")), wanted):
                found = str(data.get("user", "")) or None
        return found

    def _api_keys(self) -> dict[str, dict[str, object]]:
        keys = self._file().get("api_keys")
        return {str(i): dict(k) for i, k in keys.items() if isinstance(k, dict)} if isinstance(keys, dict) else {}

    # -- knowledge-base access ------------------------------------------------------------------

    def kb_rules(self) -> dict[str, KbRule]:
        rules = self._file().get("knowledge_bases", {})
        out = {}
        for kb, rule in rules.items() if isinstance(rules, dict) else ():
            if isinstance(rule, dict):
                out[str(kb)] = KbRule(_names(rule.get("readers")), _names(rule.get("editors")))
        return out

    def set_kb_rule(self, kb: str, rule: KbRule | None) -> None:
        """Set who may read and edit ``kb`` (None: remove its rule, so it is open again)."""
        with self._doc.editing():
            kept = self._file().get("knowledge_bases")
            rules = dict(kept) if isinstance(kept, dict) else {}
            if rule is None:
                rules.pop(kb, None)
            else:
                rules[kb] = {"readers": sorted(set(rule.readers)), "editors": sorted(set(rule.editors))}
            self._write(self._read(), rules)

    # -- the file ----------------------------------------------------------------------------

    def _file(self) -> dict[str, object]:
        return self._doc.load()

    def _read(self) -> dict[str, dict[str, object]]:
        data = self._file()
        if not data:
            return {}
        users = data.get("users")
        if not isinstance(users, dict):
            raise ConfigError(f'The accounts in {self._doc.where} have no "users" object; fix or restore them.')
        return {str(k): v for k, v in users.items() if isinstance(v, dict)}

    def _write(
        self,
        users: dict[str, dict[str, object]],
        rules: dict[str, object] | None = None,
        keys: dict[str, dict[str, object]] | None = None,
    ) -> None:
        if rules is None:  # a change to the users keeps the knowledge-base rules as they are
            kept = self._file().get("knowledge_bases")
            rules = kept if isinstance(kept, dict) else {}
        if keys is None:  # and the API keys
            keys = self._api_keys()
        self._doc.save({"users": users, "knowledge_bases": rules, "api_keys": keys})

    @staticmethod
    def _known(users: dict[str, dict[str, object]], name: str) -> dict[str, object]:
        if name not in users:
            raise UserError(said=Said("accounts.no_user", {"name": name}))
        return users[name]

    @staticmethod
    def _record(name: str, data: dict[str, object]) -> UserRecord:
        role = data.get("role")
        groups = data.get("groups")
        return UserRecord(
            name,
            role if role in ROLES else "reader",  # type: ignore[arg-type]  # an unknown role gets the least
            tuple(str(g) for g in groups) if isinstance(groups, list) else (),
            str(data.get("created", "")),
            str(data.get("source", "local")),
        )


def _key_record(key_id: str, data: dict[str, object]) -> ApiKeyRecord:
    return ApiKeyRecord(key_id, str(data.get("user", "")), str(data.get("created", "")))


def _names(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _role(role: str) -> Role:
    if role not in ROLES:
        raise UserError(said=Said("accounts.unknown_role", {"role": role, "roles": ", ".join(ROLES)}))
    return role  # type: ignore[return-value]


def _keep_an_admin(users: dict[str, dict[str, object]], name: str, removing: bool = False) -> None:
    """Refuse a change that takes ``name`` from the admins while other users stay with no admin to manage them
    (removing the only user of all empties the accounts: a fresh start, not a lock-out). Called inside the
    locked edit, so two replicas demoting the last two admins at once cannot both pass it."""
    if users.get(name, {}).get("role") != "admin" or (removing and set(users) == {name}):
        return
    if not any(data.get("role") == "admin" and other != name for other, data in users.items()):
        raise LastAdminError(said=Said("accounts.last_admin", {"name": name}))


def _check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD_CHARS:
        raise UserError(said=Said("accounts.short_password", {"n": MIN_PASSWORD_CHARS}))


def open_user_store(users_file: Path, rounds: int, database: Database | None = None) -> UserStore:
    """The accounts: in the shared PostgreSQL database when there is one (taken from ``users_file`` the first
    time, if it exists), else in ``users_file``."""
    if database is not None and database.dialect == "postgres":
        return UserStore(DatabaseDocument(database, seed=users_file).start(), rounds)
    return UserStore(users_file, rounds)
