"""Signing in: failed attempts per name and per address are throttled (on a controlled clock), and a refusal
never says whether the name exists."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragapp.accounts.service import WRONG, Accounts
from ragapp.accounts.store import UserStore
from ragapp.config import AuthSettings
from ragapp.core.errors import LoginRefused


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def accounts(tmp_path: Path, clock: Clock) -> Accounts:
    store = UserStore(tmp_path / "users.json", rounds=4)
    store.add("alice", "the right one", "reader")
    return Accounts(store, AuthSettings(max_failed_logins=3, lockout_s=60), clock)


def _refusal(accounts: Accounts, name: str, password: str, client: str = "10.0.0.1") -> str:
    with pytest.raises(LoginRefused) as caught:
        accounts.login(name, password, client)
    return str(caught.value)


def test_the_right_password_signs_in_as_the_users_role(accounts: Accounts) -> None:
    actor = accounts.login("alice", "the right one", "10.0.0.1")
    assert (actor.name, actor.role) == ("alice", "reader")


def test_a_wrong_name_and_a_wrong_password_get_the_same_message(accounts: Accounts) -> None:
    assert _refusal(accounts, "alice", "wrong") == _refusal(accounts, "mallory", "wrong", "10.0.0.2") == WRONG


def test_after_too_many_failures_even_the_right_password_waits(accounts: Accounts, clock: Clock) -> None:
    for _ in range(3):
        _refusal(accounts, "alice", "guess")
    assert "try again in 60 s" in _refusal(accounts, "alice", "the right one", "10.0.0.9")  # per name
    clock.now += 59
    assert "try again in 1 s" in _refusal(accounts, "alice", "the right one", "10.0.0.9")
    clock.now += 1
    assert accounts.login("alice", "the right one", "10.0.0.9").name == "alice"


def test_one_address_guessing_many_names_is_throttled(accounts: Accounts) -> None:
    for name in ("bob", "carol", "dave"):
        _refusal(accounts, name, "guess", "10.6.6.6")
    assert "Too many failed sign-ins" in _refusal(accounts, "alice", "the right one", "10.6.6.6")
    assert accounts.login("alice", "the right one", "10.0.0.1").name == "alice"  # another address is not


def test_a_success_clears_the_names_failures(accounts: Accounts) -> None:
    for _ in range(2):
        _refusal(accounts, "alice", "guess", "10.0.0.5")
    accounts.login("alice", "the right one", "10.0.0.6")
    for _ in range(2):
        _refusal(accounts, "alice", "guess", "10.0.0.7")
    assert accounts.login("alice", "the right one", "10.0.0.8").name == "alice"
