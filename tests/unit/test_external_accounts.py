"""Users of a company sign-in: the role their groups map to, kept in the accounts with no password, never taking
over a local account; a group rule of a knowledge base applies to them."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragapp.accounts.external import mapped_role
from ragapp.accounts.service import NO_ROLE, Accounts
from ragapp.accounts.store import UserStore
from ragapp.config import AuthSettings
from ragapp.core.errors import LoginRefused

ROLES = {"rag-admins": "admin", "staff": "editor", "guests": "reader"}


def test_the_highest_mapped_role_wins_else_the_default() -> None:
    assert mapped_role(["guests", "staff"], ROLES, "reader") == "editor"  # type: ignore[arg-type]
    assert mapped_role(["staff", "rag-admins"], ROLES, None) == "admin"  # type: ignore[arg-type]
    assert mapped_role(["elsewhere"], ROLES, "reader") == "reader"  # type: ignore[arg-type]
    assert mapped_role([], ROLES, None) is None  # type: ignore[arg-type]


def _accounts(tmp_path: Path, **auth: object) -> Accounts:
    store = UserStore(tmp_path / "users.json", 4)
    store.add("alice", "alice password", "admin")
    return Accounts(store, AuthSettings(group_roles=ROLES, **auth))  # type: ignore[arg-type]


def test_a_company_user_is_kept_with_the_role_and_groups_of_each_sign_in(tmp_path: Path) -> None:
    accounts = _accounts(tmp_path)
    actor = accounts.sign_in_external("bob@example.org", ["staff", "finance"], "oidc", "10.0.0.9")
    assert (actor.name, actor.role, actor.groups) == ("bob@example.org", "editor", frozenset({"staff", "finance"}))
    assert accounts.actor("bob@example.org") == actor  # later requests see the same
    again = accounts.sign_in_external("bob@example.org", ["guests"], "oidc")  # the directory changed
    assert (again.role, again.groups) == ("reader", frozenset({"guests"}))
    record = accounts.store.get("bob@example.org")
    assert record is not None and record.source == "oidc"
    with pytest.raises(LoginRefused):  # no password of theirs is kept here, not even an empty one
        accounts.login("bob@example.org", "")


def test_a_company_sign_in_never_takes_over_a_local_account(tmp_path: Path) -> None:
    accounts = _accounts(tmp_path)
    with pytest.raises(LoginRefused, match="local account"):
        accounts.sign_in_external("alice", ["rag-admins"], "oidc")
    accounts.sign_in_external("carol", ["staff"], "ldap")
    with pytest.raises(LoginRefused, match="ldap account"):
        accounts.sign_in_external("carol", ["staff"], "oidc")
    alice = accounts.store.get("alice")
    assert alice is not None and alice.source == "local" and accounts.login("alice", "alice password").role == "admin"


def test_no_mapped_group_and_no_default_is_refused(tmp_path: Path) -> None:
    accounts = _accounts(tmp_path, default_role=None)
    with pytest.raises(LoginRefused, match="no group"):
        accounts.sign_in_external("dave", ["elsewhere"], "oidc")
    assert NO_ROLE.startswith("Your account") and accounts.actor("dave") is None


def test_a_group_rule_of_a_knowledge_base_applies_to_a_company_user(tmp_path: Path) -> None:
    accounts = _accounts(tmp_path)
    admin = accounts.login("alice", "alice password")
    accounts.set_kb_access("finance", ["group:finance"], [], actor=admin)
    inside = accounts.sign_in_external("erin", ["finance"], "oidc")
    outside = accounts.sign_in_external("frank", ["sales"], "oidc")
    assert accounts.kb.may_read(inside, "finance") and not accounts.kb.may_read(outside, "finance")
