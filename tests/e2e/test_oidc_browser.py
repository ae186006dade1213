"""OpenID Connect sign-in in a real browser against a real provider (node's ``oidc-provider`` on loopback,
tests/oidc/provider.mjs): "Sign in with ..." on our sign-in page, the provider's own login and consent pages, then
the app, with the role the user's provider groups map to (an admin group's user sees the Admin tab, a reader
does not) and only the knowledge bases their groups may read; "Log out" signs out at the provider too and comes
back to the sign-in page. The refusals and the HTTP API: tests/integration/test_oidc_signin.py."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ragapp.accounts.model import KbRule
from ragapp.accounts.store import UserStore
from tests.oidc.provider import CLIENT_ID, CLIENT_SECRET, running_provider

pytestmark = [pytest.mark.e2e]

ACCOUNTS = {"ann": {"groups": ["rag-admins"]}, "rita": {"groups": ["sales"]}}
DOCUMENTS = {
    "sales": ("sales_targets_2027.md", "# Sales targets\n\nThe sales target for 2027 is 3.1 million euros.\n"),
    "finance": ("budget_2027.md", "# Budget\n\nThe travel budget for 2027 is 48,000 euros.\n"),
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def oidc_app(make_engine: Callable[..., Any], tmp_path: Path) -> Iterator[str]:
    """The app with OIDC on, a sales and a finance base (each readable by its group only), and the provider."""
    from ragapp.serve.server import start_server

    port = _free_port()
    with running_provider(tmp_path, f"http://127.0.0.1:{port}", ACCOUNTS) as provider:
        users = tmp_path / "users.json"
        store = UserStore(users, 4)
        store.add("alice", "alice password", "admin")
        for kb in DOCUMENTS:
            store.set_kb_rule(kb, KbRule(readers=(f"group:{kb}",)))
        rig = make_engine(
            auth={"enabled": True, "users_file": users, "bcrypt_rounds": 4, "group_roles": {"rag-admins": "admin"}},
            oidc={"enabled": True, "issuer": provider.issuer, "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET},
        )
        for kb, (name, text) in DOCUMENTS.items():
            path = tmp_path / name
            path.write_text(text, "utf-8")
            (result,) = rig.engine.library.ingest([(path, name)], kb=kb)
            assert result.status == "added"
        server = start_server(rig.engine, "127.0.0.1", port)
        try:
            yield server.url
        finally:
            server.close()


def _sign_in_with_provider(page: Any, login: str) -> None:
    page.locator("#signin-name").wait_for()  # our sign-in page, its own form still there
    page.get_by_role("link", name="Sign in with your company account").click()
    page.locator("input[name=login]").fill(login)  # the provider's own page
    page.locator("input[name=password]").fill("any password")
    page.get_by_role("button", name="Sign-in").click()
    page.get_by_role("button", name="Continue").click()  # its consent page, on a first sign-in
    page.locator("#account").get_by_text("Signed in as").wait_for()


# Behind `slow` (make test-slow, which CI runs after make test): one of the longest tests of the default run,
# which must stay under 10 minutes on 2 cores; faster tests in the default run cover the same code paths.
@pytest.mark.slow
def test_a_provider_sign_in_lands_with_the_mapped_role_and_bases(
    oidc_app: str, open_page: Callable[[str], Any], artifacts: Path
) -> None:
    admin = open_page(oidc_app)
    _sign_in_with_provider(admin, "ann")
    assert "ann" in admin.locator("#account").inner_text() and "admin" in admin.locator("#account").inner_text().lower()
    admin.get_by_role("tab", name="Admin").click()
    admin.locator("#users-table").get_by_text("ann").first.wait_for(state="attached")

    reader = open_page(oidc_app)
    _sign_in_with_provider(reader, "rita")
    account = reader.locator("#account").inner_text()
    assert "rita" in account and "reader" in account.lower()
    reader.get_by_role("tab", name="Knowledge").click()
    reader.locator("#documents").get_by_text(DOCUMENTS["sales"][0]).first.wait_for(state="attached")
    reader.screenshot(path=str(artifacts / "oidc-reader.png"), full_page=True)
    assert reader.get_by_role("tab", name="Admin").count() == 0
    assert DOCUMENTS["finance"][0] not in reader.content()  # not in the table, the lists or the page's data

    # the header's "Log out" (Gradio's markdown opens it in a new tab): /logout, here in the same one
    assert reader.locator("#account").get_by_role("link", name="Log out").get_attribute("href") == "/logout"
    reader.goto(f"{oidc_app}/logout")
    reader.get_by_role("button", name="Yes, sign me out").click()  # the provider asks
    reader.locator("#signin-name").wait_for()  # back on our sign-in page, signed out here
    reader.goto(oidc_app)
    reader.locator("#signin-name").wait_for()


def test_cancelling_at_the_provider_comes_back_to_the_sign_in_page_saying_so(
    oidc_app: str, open_page: Callable[[str], Any]
) -> None:
    page = open_page(oidc_app)
    page.get_by_role("link", name="Sign in with your company account").click()
    page.locator("input[name=login]").wait_for()  # the provider's login page
    page.get_by_role("link", name="Cancel").click()
    page.locator("#signin-notice").get_by_text("The company sign-in did not let you in").wait_for()
    assert page.locator("#signin-name").is_visible()  # the form is there to sign in otherwise

    page.goto(f"{oidc_app}/signin?notice=oidc-refused&lang=zh")
    page.locator("#signin-notice").get_by_text("公司登录未能通过").wait_for()
    assert not page.locator("#signin-notice").get_by_text("did not let you in").is_visible()  # one language
