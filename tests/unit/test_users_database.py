"""Accounts in the shared PostgreSQL database: every replica reads the same users, rules and keys; two replicas
changing them at once lose nothing; a users file from before is taken over once; the command line manages them
there when RAGAPP_STORE__DATABASE_URL is set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragapp.accounts.document import DatabaseDocument
from ragapp.accounts.model import KbRule
from ragapp.accounts.store import UserStore, open_user_store

ROUNDS = 4
REPO = Path(__file__).resolve().parents[2]


def test_one_replica_s_users_keys_and_rules_are_the_other_s(replica_db: Callable[[], Any], tmp_path: Path) -> None:
    first = open_user_store(tmp_path / "unused.json", ROUNDS, replica_db())
    second = open_user_store(tmp_path / "unused.json", ROUNDS, replica_db())
    first.add("alice", "correct horse battery", "editor")
    _record, key = first.add_key("alice")
    first.set_kb_rule("hr", KbRule(("alice",), ()))
    assert second.verify("alice", "correct horse battery") is not None
    assert second.key_user(key) == "alice"
    assert second.kb_rules()["hr"].readers == ("alice",)
    second.remove("alice")
    assert first.get("alice") is None and first.key_user(key) is None  # gone everywhere, keys too
    assert first.path is None and "accounts table" in first.where
    assert not (tmp_path / "unused.json").exists()


def test_two_replicas_adding_at_once_keep_every_user(replica_db: Callable[[], Any], tmp_path: Path) -> None:
    stores = [open_user_store(tmp_path / "u.json", ROUNDS, replica_db()) for _ in range(2)]
    errors: list[BaseException] = []

    def add_many(store: UserStore, prefix: str) -> None:
        try:
            for i in range(8):
                store.add(f"{prefix}{i}", "a long password", "reader")
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=add_many, args=(s, p)) for s, p in zip(stores, "ab", strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(stores[0].users()) == 16  # a read-change-write of one never overwrote the other's


def test_a_users_file_from_before_is_taken_over_once(replica_db: Callable[[], Any], tmp_path: Path) -> None:
    old = tmp_path / "users.json"
    UserStore(old, ROUNDS).add("bob", "bob's long password", "admin")
    db = replica_db()
    moved = UserStore(DatabaseDocument(db, seed=old).start(), ROUNDS)
    assert moved.verify("bob", "bob's long password") is not None
    moved.remove("bob")
    again = UserStore(DatabaseDocument(db, seed=old).start(), ROUNDS)  # the next start: the file is not read again
    assert again.users() == []


def test_the_command_line_keeps_users_in_the_database(postgres_url: str, replica_db: Callable[[], Any],
                                                     tmp_path: Path) -> None:  # fmt: skip
    env = {**os.environ, "RAGAPP_STORE__DATABASE_URL": postgres_url, "RAGAPP_AUTH__BCRYPT_ROUNDS": "4",
           "RAGAPP_AUTH__USERS_FILE": str(tmp_path / "users.json")}  # fmt: skip
    added = subprocess.run(
        [sys.executable, "-m", "ragapp.users", "add", "carol", "--role", "admin", "--password-stdin"],
        input="carol's password", text=True, capture_output=True, env=env, cwd=REPO, check=False,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert "accounts table" in added.stdout
    assert not (tmp_path / "users.json").exists()
    store = open_user_store(tmp_path / "users.json", ROUNDS, replica_db())
    assert [u.name for u in store.users()] == ["carol"]
    assert json.loads(json.dumps(store.kb_rules())) == {}
