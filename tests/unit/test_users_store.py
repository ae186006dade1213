"""The accounts file: bcrypt hashes only, atomic owner-only writes, clear refusals, and no way to tell a wrong
name from a wrong password."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ragapp.accounts.model import KbRule, LastAdminError, UserError
from ragapp.accounts.store import UserStore, check_password, hash_password
from ragapp.core.errors import ConfigError

ROUNDS = 4  # the cheapest bcrypt cost: the tests check behaviour, not strength
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path: Path) -> UserStore:
    return UserStore(tmp_path / "users.json", ROUNDS)


def test_a_user_is_stored_with_a_bcrypt_hash_and_never_the_password(store: UserStore) -> None:
    record = store.add("alice", "correct horse battery", "editor", ("hr", "hr", "finance"))
    assert (record.name, record.role, record.groups) == ("alice", "editor", ("finance", "hr"))
    text = store.path.read_text("utf-8")
    assert "correct horse battery" not in text
    assert json.loads(text)["users"]["alice"]["hash"].startswith("$2b$04$")
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    assert list(store.path.parent.iterdir()) == [store.path]  # no temporary file left behind


def test_only_the_right_password_signs_in(store: UserStore) -> None:
    store.add("alice", "correct horse battery", "reader")
    verified = store.verify("alice", "correct horse battery")
    assert verified is not None and verified.actor.role == "reader"
    assert store.verify("alice", "correct horse batterY") is None
    assert store.verify("bob", "correct horse battery") is None  # unknown name: the same answer


def test_every_character_of_a_long_passphrase_counts(store: UserStore) -> None:
    # bcrypt alone reads 72 bytes: two passphrases that differ after that would both be accepted.
    base = "汉" * 30  # 90 bytes in UTF-8
    store.add("carol", base + "A", "reader")
    assert store.verify("carol", base + "A") is not None
    assert store.verify("carol", base + "B") is None


@pytest.mark.parametrize(
    ("name", "password", "role", "message"),
    [
        ("", "long enough", "reader", "not a valid user name"),
        ("../etc", "long enough", "reader", "not a valid user name"),
        ("a" * 65, "long enough", "reader", "not a valid user name"),
        ("dave", "short", "reader", "at least 8 characters"),
        ("dave", "long enough", "root", "Unknown role 'root'"),
    ],
)
def test_bad_names_roles_and_passwords_are_refused(
    store: UserStore, name: str, password: str, role: str, message: str
) -> None:
    with pytest.raises(UserError, match=message):
        store.add(name, password, role)
    assert store.users() == []


def test_passwd_role_and_remove(store: UserStore) -> None:
    store.add("alice", "first password", "reader")
    with pytest.raises(UserError, match="already a user 'alice'"):
        store.add("alice", "other password", "admin")
    store.set_password("alice", "second password")
    assert store.verify("alice", "first password") is None and store.verify("alice", "second password")
    store.set_role("alice", "admin")
    assert store.get("alice").role == "admin"  # type: ignore[union-attr]
    store.remove("alice")
    assert store.users() == []
    with pytest.raises(UserError, match="There is no user 'alice'"):
        store.remove("alice")


def test_the_store_never_leaves_users_without_an_admin(store: UserStore, tmp_path: Path) -> None:
    store.add("alice", "first password", "admin")
    store.add("bob", "second password", "reader")
    with pytest.raises(LastAdminError, match="alice is the last admin"):
        store.set_role("alice", "editor")
    with pytest.raises(LastAdminError, match="alice is the last admin"):
        store.remove("alice")
    assert store.get("alice").role == "admin"  # type: ignore[union-attr]
    store.set_role("bob", "admin")
    store.set_role("alice", "editor")  # bob is admin now
    # The command line goes through the same rule.
    env = {**os.environ, "RAGAPP_AUTH__USERS_FILE": str(store.path), "RAGAPP_AUTH__BCRYPT_ROUNDS": "4",
           "RAGAPP_PATHS__STATE_DIR": str(store.path.parent / "state")}  # its audit log  # fmt: skip
    refused = subprocess.run(
        [sys.executable, "-m", "ragapp.users", "role", "bob", "reader"], text=True, capture_output=True, env=env,
        cwd=REPO, timeout=120,
    )  # fmt: skip
    assert refused.returncode == 2 and "bob is the last admin" in refused.stderr
    assert store.get("bob").role == "admin"  # type: ignore[union-attr]


def test_a_damaged_file_or_hash_is_a_clear_error_not_a_crash(store: UserStore) -> None:
    store.path.write_text("{not json", "utf-8")
    with pytest.raises(ConfigError, match="cannot be read"):
        store.users()
    store.path.write_text('{"users": {"alice": {"role": "admin", "hash": "garbage"}}}', "utf-8")
    assert store.verify("alice", "anything at all") is None
    assert not check_password("x", "")
    assert check_password("a password", hash_password("a password", ROUNDS))


def test_the_command_line_manages_users(tmp_path: Path) -> None:
    users = tmp_path / "accounts.json"
    env = {**os.environ, "RAGAPP_AUTH__USERS_FILE": str(users), "RAGAPP_AUTH__BCRYPT_ROUNDS": "4",
           "RAGAPP_PATHS__STATE_DIR": str(tmp_path / "state")}  # its audit log  # fmt: skip

    def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ragapp.users", *args], input=stdin, text=True, capture_output=True, env=env,
            cwd=REPO, timeout=120,
        )  # fmt: skip

    assert (
        run("add", "alice", "--role", "editor", "--group", "hr", "--password-stdin", stdin="a long secret\n").returncode
        == 0
    )
    listed = run("list")
    assert listed.returncode == 0 and "alice" in listed.stdout and "editor" in listed.stdout and "hr" in listed.stdout
    refused = run("add", "alice", "--password-stdin", stdin="another secret\n")
    assert refused.returncode == 2 and "already a user 'alice'" in refused.stderr
    assert run("passwd", "alice", "--password-stdin", stdin="a newer secret\n").returncode == 0
    assert UserStore(users, ROUNDS).verify("alice", "a newer secret") is not None
    assert run("kb", "finance", "--readers", "group:finance", "--editors", "alice").returncode == 0
    assert UserStore(users, ROUNDS).kb_rules()["finance"] == KbRule(("group:finance",), ("alice",))
    assert "knowledge base finance: readers group:finance; editors alice" in run("list").stdout
    assert run("kb", "finance", "--open").returncode == 0 and UserStore(users, ROUNDS).kb_rules() == {}
    assert run("remove", "alice").returncode == 0
    assert "no users" in run("list").stdout


def test_changing_users_keeps_the_knowledge_base_rules(store: UserStore) -> None:
    store.set_kb_rule("hr", KbRule(("group:hr",), ("eddie",)))
    store.add("alice", "a long secret", "reader")
    store.remove("alice")
    assert store.kb_rules() == {"hr": KbRule(("group:hr",), ("eddie",))}
