"""Signing in through an LDAP directory in a real browser (Debian's slapd, started and seeded by ``tests.slapd``):
on our sign-in page, a member of the directory's admin group lands as an admin with the Admin tab, a member of
the staff group as a reader without it, each seeing only the knowledge bases their group may read; a directory
that does not answer is said so in the page's language, the password kept to try again. The directory's own
checks (escaping, groups, timeouts): tests/integration/test_ldap_signin.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ragapp.accounts.model import KbRule
from ragapp.accounts.store import UserStore
from tests.slapd import GROUPS, PEOPLE, USERS, Slapd

pytestmark = [pytest.mark.e2e]

ROLES = {"rag-admins": "admin", "staff": "reader"}
DOCUMENTS = {  # knowledge base: (file, text)
    "finance": ("budget_2027.md", "# Budget\n\nThe travel budget for 2027 is 48,000 euros.\n"),
    "handbook": ("holidays.md", "# Holidays\n\nEvery employee has 28 days of paid holiday a year.\n"),
}


@pytest.fixture(scope="module")
def slapd() -> Iterator[Slapd]:
    server = Slapd()
    yield server
    server.stop()


def _directory(url: str) -> dict[str, Any]:
    return {"enabled": True, "url": url, "user_dn_template": f"uid={{name}},{PEOPLE}", "group_search_base": GROUPS}


def _app(accounts_app: Callable[..., Any], users: UserStore, tmp_path: Path, ldap: dict[str, Any]) -> tuple[Any, str]:
    """The app with the directory as its only accounts: finance for the admins' group, handbook for staff too; a
    user in neither group gets no role."""
    users.set_kb_rule("finance", KbRule(readers=("group:rag-admins",)))
    users.set_kb_rule("handbook", KbRule(readers=("group:staff", "group:rag-admins")))
    rig, url = accounts_app(auth={"group_roles": ROLES, "default_role": None}, ldap=ldap)
    for kb, (name, text) in DOCUMENTS.items():
        path = tmp_path / name
        path.write_text(text, "utf-8")
        (result,) = rig.engine.library.ingest([(path, name)], kb=kb)
        assert result.status == "added", result.message
    return rig, str(url)


def _scope_choices(page: Any) -> list[str]:
    """The knowledge bases the chat's "Search in" offers."""
    page.get_by_role("tab", name="Chat").click()
    page.locator("#chat-scope input").click()
    page.get_by_role("option").first.wait_for()
    choices = [str(t).strip() for t in page.get_by_role("option").all_inner_texts()]
    page.locator("#chatbot").click()  # close the list
    return choices


# Behind `slow` (make test-slow, which CI runs after make test): one of the longest tests of the default run,
# which must stay under 10 minutes on 2 cores; faster tests in the default run cover the same code paths.
@pytest.mark.slow
def test_directory_users_land_with_the_role_and_knowledge_bases_of_their_groups(
    accounts_app: Callable[..., Any],
    users: UserStore,
    open_page: Callable[[str], Any],
    signed_in: Callable[..., Any],
    tmp_path: Path,
    slapd: Slapd,
    sign_in: Callable[[Any, str, str], None],
    artifacts: Path,
) -> None:
    rig, url = _app(accounts_app, users, tmp_path, _directory(slapd.url))

    bob = open_page(url)
    bob.locator("#hint").get_by_text("Sign in with your company account").wait_for()
    bob.get_by_label("Name").fill("bob")
    bob.get_by_label("Password").fill("not bob's password")
    bob.get_by_role("button", name="Sign in", exact=True).click()
    bob.get_by_role("alert").get_by_text("Wrong name or password.").wait_for()
    bob.get_by_label("Name").fill("carol")  # the right password, but in no group that gives a role
    bob.get_by_label("Password").fill(USERS["carol"][0])
    bob.get_by_role("button", name="Sign in", exact=True).click()
    bob.get_by_role("alert").get_by_text("Your account is in no group this app gives a role to").wait_for()
    assert rig.engine.accounts.store.get("carol") is None
    sign_in(bob, "bob", USERS["bob"][0])
    account = bob.locator("#account").inner_text()
    assert "bob" in account and "reader" in account.lower()
    bob.get_by_role("tab", name="Knowledge").click()
    bob.locator("#documents").get_by_text("holidays.md").filter(visible=True).first.wait_for()
    assert "budget_2027.md" not in bob.content()  # finance is the admins' group's alone
    assert _scope_choices(bob) == ["handbook"]
    assert bob.get_by_role("tab", name="Admin").count() == 0
    bob.screenshot(path=str(artifacts / "ldap-reader.png"), full_page=True)

    alice = signed_in(url, "alice", USERS["alice"][0])
    account = alice.locator("#account").inner_text()
    assert "alice" in account and "admin" in account.lower()
    alice.get_by_role("tab", name="Knowledge").click()
    for name in ("budget_2027.md", "holidays.md"):
        alice.locator("#documents").get_by_text(name).filter(visible=True).first.wait_for()
    assert sorted(_scope_choices(alice)) == ["finance", "handbook"]
    alice.get_by_role("tab", name="Admin").click()  # her group maps to admin: she manages the accounts
    alice.locator("#users-table").get_by_text("bob").first.wait_for(state="attached")  # kept, from the directory
    record = rig.engine.accounts.store.get("alice")
    assert record is not None and (record.role, record.source, record.groups) == ("admin", "ldap", ("rag-admins",))


def test_a_directory_that_does_not_answer_is_said_so_and_the_password_kept(
    accounts_app: Callable[..., Any], users: UserStore, open_page: Callable[[str], Any], tmp_path: Path
) -> None:
    import socket

    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        closed = int(unused.getsockname()[1])  # nothing listens there once this socket is closed
    _rig, url = _app(accounts_app, users, tmp_path, _directory(f"ldap://127.0.0.1:{closed}") | {"connect_timeout_s": 2})
    page = open_page(url)
    page.locator("#signin-name").wait_for()
    page.get_by_label("Name").fill("alice")
    page.get_by_label("Password").fill(USERS["alice"][0])
    with page.expect_response(f"{url}/login"):
        page.get_by_role("button", name="Sign in", exact=True).click()
    error = page.get_by_role("alert")
    error.get_by_text("The company directory did not answer").wait_for()
    assert page.get_by_label("Password").input_value() == USERS["alice"][0]  # nothing checked: try again
    assert page.url == f"{url}/signin"
    page.get_by_role("link", name="中文").click()
    error.get_by_text("公司目录服务没有响应").wait_for()
