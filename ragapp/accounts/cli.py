"""``python -m ragapp.users``: manage the accounts people sign in with (when ``RAGAPP_AUTH__ENABLED=true``).

    python -m ragapp.users add alice --role editor [--group hr]   # asks for the password twice
    python -m ragapp.users passwd alice
    python -m ragapp.users role alice admin
    python -m ragapp.users remove alice
    python -m ragapp.users signout alice             # end every sign-in of alice's (passwd and remove do too)
    python -m ragapp.users list
    python -m ragapp.users kb finance --readers group:finance carol --editors dave   # --open removes the rule
    python -m ragapp.users key alice                 # a new API key for the HTTP API, printed once
    python -m ragapp.users key alice --revoke ID     # (--revoke all: every key of alice's)
    python -m ragapp.users keys
    python -m ragapp.users ldap-check alice          # what the LDAP directory says of alice (asks her password)

``--password-stdin`` reads the password from standard input instead (for scripts: ``echo "$PW" | ...``).
The file is ``RAGAPP_AUTH__USERS_FILE`` (default: users.json in the state dir), or the shared database's
accounts table with replicas; it holds bcrypt hashes of the passwords and SHA-256 hashes of the API keys, never
a password or a key. The accounts are opened as the engine opens them (``open_accounts``), and every change goes
through the same store, so the last-admin rule holds here too. A new password, a removed user and ``signout``
end the user's sign-ins (``ragapp.accounts.sessions``): a running app refuses them within
``auth.session_recheck_s``. Every change is written to the audit log (``ragapp.audit``) as done by the user
"cli" (whoever runs this on the server), failed ones too. ``ldap-check`` tries the ``RAGAPP_LDAP__`` settings as
a sign-in would, keeping nothing: whether the directory takes the password, and the name, groups and role it
would give.
``ragapp/users.py`` calls ``main``.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from ragapp.accounts.external import mapped_role
from ragapp.accounts.ldap import LdapDirectory
from ragapp.accounts.model import KbRule
from ragapp.accounts.service import open_accounts
from ragapp.accounts.sessions import SessionStore
from ragapp.accounts.store import UserStore
from ragapp.audit import CLI_ACTOR, AuditAction, AuditLog, open_audit
from ragapp.config import Settings
from ragapp.core.access import ROLES
from ragapp.core.errors import RagAppError
from ragapp.db import open_database


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m ragapp.users", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    add = commands.add_parser("add", help="add a user")
    add.add_argument("name")
    add.add_argument("--role", choices=ROLES, default="reader")
    add.add_argument("--group", action="append", default=[], help="a group the user belongs to (repeatable)")
    add.add_argument("--password-stdin", action="store_true")
    passwd = commands.add_parser("passwd", help="set a user's password")
    passwd.add_argument("name")
    passwd.add_argument("--password-stdin", action="store_true")
    role = commands.add_parser("role", help="change a user's role")
    role.add_argument("name")
    role.add_argument("role", choices=ROLES)
    remove = commands.add_parser("remove", help="remove a user")
    remove.add_argument("name")
    signout = commands.add_parser("signout", help="end every sign-in of a user (every browser, every replica)")
    signout.add_argument("name")
    commands.add_parser("list", help="list the users and the knowledge bases' rules")
    kb = commands.add_parser("kb", help="who may read and edit a knowledge base (users, or group:NAME)")
    kb.add_argument("name")
    kb.add_argument("--readers", nargs="*", default=[], metavar="WHO")
    kb.add_argument("--editors", nargs="*", default=[], metavar="WHO")
    kb.add_argument("--open", action="store_true", help="remove the rule: every signed-in user may read it")
    key = commands.add_parser("key", help="make (or --revoke) an API key for the HTTP API, acting as NAME")
    key.add_argument("name")
    key.add_argument("--revoke", metavar="ID", help="revoke this key of NAME's (all: every one)")
    commands.add_parser("keys", help="list the API keys (ids, users; never the keys)")
    check = commands.add_parser("ldap-check", help="sign NAME in against the LDAP directory, keeping nothing")
    check.add_argument("name")
    check.add_argument("--password-stdin", action="store_true")
    return parser


def _password(from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    first = getpass.getpass("Password: ")
    if getpass.getpass("Again: ") != first:
        raise RagAppError("The two passwords differ; nothing was changed.")
    return first


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")  # the command's own output, like ``python -m ragapp.config``


def _key(store: UserStore, settings: Settings, name: str, revoke: str | None, note: dict[str, Any]) -> None:
    if revoke == "all":
        note["revoked"] = count = store.revoke_keys(name)
        _say(f"revoked {count} key(s) of {name}")
        return
    if revoke is not None:
        if next((k for k in store.api_keys() if k.id == revoke and k.user == name), None) is None:
            raise RagAppError(f"{name} has no API key {revoke!r}; `python -m ragapp.users keys` lists them.")
        store.revoke_key(revoke)
        _say(f"revoked key {revoke} of {name}")
        return
    if settings.auth.enabled and store.get(name) is None:
        raise RagAppError(f"There is no user {name!r}: add them first (accounts are on, a key acts as its user).")
    record, secret = store.add_key(name)
    note["key_id"] = record.id
    _say(secret)
    sys.stderr.write(
        f"API key {record.id} for {name} (kept only as a hash: copy it now). Send it as "
        f"'Authorization: Bearer <key>'; revoke it with: python -m ragapp.users key {name} --revoke {record.id}\n"
    )


def _ldap_check(settings: Settings, name: str, from_stdin: bool) -> int:
    """What the directory says of ``name`` (the settings checked first, as at start): 0 signed in, 1 refused."""
    directory = LdapDirectory(settings.ldap)
    password = sys.stdin.readline().rstrip("\r\n") if from_stdin else getpass.getpass(f"{name}'s password: ")
    found = directory.authenticate(name.strip(), password)
    if found is None:
        _say(f"{name}: refused (a wrong name or password, or a name the directory does not have)")
        return 1
    auth = settings.auth
    role = mapped_role(found.groups, auth.group_roles, auth.default_role)
    groups = ", ".join(found.groups) or "none"
    given = f"role {role}" if role else "no role: refused (no group maps to one and auth.default_role is null)"
    _say(f"{name}: the directory takes the password; name {found.name}, groups: {groups}; {given}")
    return 0 if role else 1


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    settings = Settings()
    if args.command == "ldap-check":
        try:
            return _ldap_check(settings, args.name, args.password_stdin)
        except RagAppError as exc:
            sys.stderr.write(f"error: {exc}\n")
            return 2
    url = settings.store.database_url.get_secret_value().strip()
    try:
        database = open_database(url, pool_size=1) if url else None  # replicas keep their accounts in PostgreSQL
    except RagAppError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    accounts = None
    audit = AuditLog.off()
    try:
        audit = open_audit(settings, database)
        # The sign-ins only for the commands that end them: the others need no state dir
        accounts = open_accounts(settings, database, sign_ins=args.command in _SIGNING_OUT)
        return _run(args, settings, accounts.store, audit, accounts.sessions)
    except RagAppError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    finally:
        audit.close()
        if accounts is not None:
            accounts.close()
        if database is not None:
            database.close()


_SIGNING_OUT = frozenset({"passwd", "remove", "signout"})


def _sign_out(sessions: SessionStore | None, name: str) -> None:
    ended = sessions.end_user(name) if sessions is not None else 0
    if ended:
        _say(f"ended {ended} sign-in(s) of {name}")


def _audited(args: argparse.Namespace) -> tuple[AuditAction, str, dict[str, Any]] | None:
    """What the audit log calls the change ``args`` asks for, its target and detail (None: a listing)."""
    name = getattr(args, "name", "")
    if args.command == "add":
        return AuditAction.USER_ADD, name, {"role": args.role, "groups": args.group}
    if args.command == "passwd":
        return AuditAction.USER_PASSWORD, name, {}
    if args.command == "role":
        return AuditAction.USER_ROLE, name, {"role": args.role}
    if args.command == "remove":
        return AuditAction.USER_REMOVE, name, {}
    if args.command == "signout":
        return AuditAction.SIGN_IN_END, name, {"all": True}
    if args.command == "kb":
        return AuditAction.KB_RULE, name, {"readers": args.readers, "editors": args.editors, "opened": args.open}
    if args.command == "key":
        if args.revoke is None:
            return AuditAction.KEY_CREATE, name, {}
        return AuditAction.KEY_REVOKE, name, {"key_id": args.revoke}
    return None


def _run(
    args: argparse.Namespace,
    settings: Settings,
    store: UserStore,
    audit: AuditLog | None = None,
    sessions: SessionStore | None = None,
) -> int:
    what = _audited(args)
    if what is None:
        return _list(args, store)
    action, target, detail = what
    with (audit or AuditLog.off()).attempt(CLI_ACTOR, action, target, **detail) as note:
        _change(args, settings, store, note, sessions)
    return 0


def _change(
    args: argparse.Namespace, settings: Settings, store: UserStore, note: dict[str, Any], sessions: SessionStore | None
) -> None:
    if args.command == "add":
        record = store.add(args.name, _password(args.password_stdin), args.role, tuple(args.group))
        _say(f"added {record.name} ({record.role}) to {store.where}")
    elif args.command == "passwd":
        store.set_password(args.name, _password(args.password_stdin))
        _say(f"changed the password of {args.name}")
        _sign_out(sessions, args.name)
    elif args.command == "role":
        store.set_role(args.name, args.role)
        _say(f"{args.name} is now {args.role}")
    elif args.command == "remove":
        store.remove(args.name)
        _say(f"removed {args.name}")
        _sign_out(sessions, args.name)
    elif args.command == "signout":
        _sign_out(sessions, args.name)
        _say(f"{args.name} is signed out everywhere")
    elif args.command == "kb":
        if args.open:
            store.set_kb_rule(args.name, None)
            _say(f"{args.name} is open to every signed-in user")
        else:
            store.set_kb_rule(args.name, KbRule(tuple(args.readers), tuple(args.editors)))
            _say(f"{args.name}: readers {args.readers or '-'}, editors {args.editors or '-'} (and admins)")
    elif args.command == "key":
        _key(store, settings, args.name, args.revoke, note)


def _list(args: argparse.Namespace, store: UserStore) -> int:
    if args.command == "keys":
        keys = store.api_keys()
        for key in keys:
            _say(f"{key.id}  {key.user:<24} since {key.created}")
        if not keys:
            _say(f"no API keys in {store.where}")
    else:
        for kb, rule in sorted(store.kb_rules().items()):
            readers, editors = ", ".join(rule.readers) or "-", ", ".join(rule.editors) or "-"
            _say(f"knowledge base {kb}: readers {readers}; editors {editors}")
        users = store.users()
        for user in users:
            groups = f"  groups: {', '.join(user.groups)}" if user.groups else ""
            via = f"  ({user.source})" if user.source != "local" else ""
            _say(f"{user.name:<24} {user.role:<7} since {user.created}{groups}{via}")
        if not users:
            _say(f"no users in {store.where}")
    return 0
