"""The Admin tab in a real browser: an admin signs in, adds a reader with a password; that reader then signs in
on a fresh page and sees no Admin tab (and the page holds no other user's name). With accounts off the local
user sees the tab with the settings and a line saying accounts are off. The engine's refusal of a reader's
call to the same endpoints is tested over HTTP in tests/integration/test_admin.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.accounts.store import UserStore

pytestmark = [pytest.mark.e2e]

ADMIN_TAB = "Admin"


# Behind `slow` (make test-slow, which CI runs after make test): one of the longest tests of the default run,
# which must stay under 10 minutes on 2 cores; faster tests in the default run cover the same code paths.
@pytest.mark.slow
def test_an_admin_adds_a_reader_who_signs_in_without_the_admin_tab(
    accounts_app: Callable[..., Any], users: UserStore, signed_in: Callable[..., Any], artifacts: Path
) -> None:
    users.add("boss", "admin password", "admin")
    rig, url = accounts_app(llm={"api_key": "sk-fake-e2e-secret"})

    page = signed_in(url, "boss", "admin password")
    page.get_by_role("tab", name=ADMIN_TAB).click()
    page.locator("#users-table").get_by_text("boss").first.wait_for(state="attached")
    page.locator("#new-user-name textarea").fill("newbie")
    page.locator("#new-user-password input").fill("newbie password")
    page.locator("#new-user-role input").click()
    page.get_by_role("option", name="Reader").click()
    page.locator("#add-user").click()
    page.locator("#admin-report").get_by_text("Added newbie").wait_for()
    assert "已添加" not in page.locator("#admin-report").inner_text()  # an English page: its words only
    page.locator("#users-table").get_by_text("newbie").first.wait_for(state="attached")
    assert page.locator("#new-user-password input").input_value() == ""  # the form forgets the password
    page.locator("#settings-view").get_by_text("scripted").first.wait_for(state="attached")
    assert "sk-fake-e2e-secret" not in page.content()
    page.screenshot(path=str(artifacts / "admin-tab.png"), full_page=True)
    assert rig.engine.actor("newbie").role == "reader"

    fresh = signed_in(url, "newbie", "newbie password")
    assert "newbie" in fresh.locator("#account").inner_text() and "reader" in fresh.locator("#account").inner_text()
    fresh.get_by_role("tab", name="Knowledge").wait_for()
    fresh.wait_for_timeout(1500)  # the load events have run: the tab stays hidden
    assert fresh.get_by_role("tab", name=ADMIN_TAB).count() == 0
    assert not fresh.locator("#users-table").is_visible()
    assert "boss" not in fresh.content()  # no other user's name anywhere in the reader's page


def test_with_accounts_off_the_admin_tab_shows_the_settings(
    read_only_app: tuple[Any, str], open_page: Callable[[str], Any]
) -> None:
    _rig, url = read_only_app
    page = open_page(url)
    page.get_by_role("tab", name=ADMIN_TAB).click()
    page.locator("#admin-note").get_by_text("Accounts are off").wait_for()
    page.locator("#settings-view").get_by_text("scripted").first.wait_for(state="attached")
    assert not page.locator("#users-table").is_visible()


# Behind `slow` (make test-slow, which CI runs after make test): one of the longest tests of the default run,
# which must stay under 10 minutes on 2 cores; faster tests in the default run cover the same code paths.
@pytest.mark.slow
def test_an_admin_signs_a_reader_out_from_the_sign_ins_list(
    accounts_app: Callable[..., Any], users: UserStore, signed_in: Callable[..., Any], artifacts: Path
) -> None:
    users.add("boss", "admin password", "admin")
    users.add("worker", "worker password", "reader")
    _rig, url = accounts_app()
    worker = signed_in(url, "worker", "worker password")

    page = signed_in(url, "boss", "admin password")
    page.get_by_role("tab", name=ADMIN_TAB).click()
    listed = page.locator("#sign-ins")
    listed.get_by_text("worker").first.wait_for(state="attached")
    listed.get_by_text("boss").first.wait_for(state="attached")
    page.locator("#pick-sign-in input").click()
    page.get_by_role("option", name="worker ·").click()
    page.locator("#end-sign-in").click()
    page.locator("#sign-ins-report").get_by_text("Signed worker out of that browser").wait_for()
    page.wait_for_function("() => !document.querySelector('#sign-ins').innerText.includes('worker')")
    listed.get_by_text("boss").first.wait_for(state="attached")  # the admin's own sign-in stays
    page.screenshot(path=str(artifacts / "admin-sign-ins.png"), full_page=True)

    worker.reload()
    worker.wait_for_url("**/signin**")  # signed out: the sign-in page again
    worker.get_by_role("button", name="Sign in", exact=True).wait_for()

    page.goto(url + "/?lang=zh")  # the same section in Chinese
    page.get_by_role("tab", name="管理").click()
    page.get_by_role("heading", name="🔑 登录会话").wait_for()
    page.locator("#sign-ins thead").get_by_text("登录时间 (UTC)").wait_for()
    page.locator("#end-sign-in").get_by_text("让该浏览器退出登录").wait_for()
