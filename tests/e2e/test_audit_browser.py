"""The Admin tab's audit log in a real browser: an admin signs in (a refused try first), opens the tab, sees
both sign-ins with the browser's address, filters to the refused one, and downloads the filtered CSV. A reader's
page holds none of it (the Admin tab stays hidden: tests/e2e/test_admin_browser.py)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.accounts.store import UserStore

pytestmark = [pytest.mark.e2e]


def test_an_admin_filters_the_audit_log_and_downloads_it(
    accounts_app: Callable[..., Any],
    users: UserStore,
    open_page: Callable[[str], Any],
    artifacts: Path,
    sign_in: Callable[[Any, str, str], None],
) -> None:
    users.add("boss", "admin password", "admin")
    _rig, url = accounts_app()

    page = open_page(url)
    page.get_by_label("Name").fill("boss")
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.get_by_text("Wrong name or password").first.wait_for()
    sign_in(page, "boss", "admin password")
    page.get_by_role("tab", name="Admin").click()
    table = page.locator("#audit-table")
    table.get_by_text("127.0.0.1").first.wait_for(state="attached")
    page.locator("#audit-count").get_by_text("2 matching record").wait_for()  # the two sign-ins

    page.locator("#audit-outcome input").click()
    page.get_by_role("option", name="refused · 已拒绝").click()
    page.locator("#audit-action input").click()
    page.get_by_role("option", name="sign-in · 登录").click()
    page.locator("#audit-show").click()
    page.locator("#audit-count").get_by_text("1 matching record").wait_for()
    page.screenshot(path=str(artifacts / "admin-audit.png"), full_page=True)

    page.locator("#audit-download").click()
    link = page.locator("#audit-csv a").first
    link.wait_for(state="attached")
    with page.expect_download() as downloading:
        link.click()
    text = Path(downloading.value.path()).read_text("utf-8-sig")
    rows = list(csv.reader(io.StringIO(text)))
    assert [(r[2], r[4], r[5], r[7]) for r in rows[1:]] == [("boss", "127.0.0.1", "sign-in", "refused")]

    page.locator("#audit-since input, #audit-since textarea").first.fill("yesterday")
    page.locator("#audit-show").click()
    page.get_by_text("Write dates as 2026-12-01").first.wait_for()  # said, nothing broken
