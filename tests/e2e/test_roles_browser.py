"""Roles as people meet them in a real browser: the sign-in page, then a reader sees no upload, delete or
editing of the intent tree (and the header says who is signed in), an editor sees them; with accounts off the
header says so. The engine's own refusal of a reader's call is tested over HTTP in
tests/integration/test_roles_api.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from ragapp.accounts.model import KbRule
from ragapp.accounts.store import UserStore

pytestmark = [pytest.mark.e2e]


# Behind `slow` (make test-slow, which CI runs after make test): one of the longest tests of the default run,
# which must stay under 10 minutes on 2 cores; faster tests in the default run cover the same code paths.
@pytest.mark.slow
def test_a_reader_sees_no_editing_and_an_editor_does(
    accounts_app: Callable[..., Any],
    users: UserStore,
    open_page: Callable[[str], Any],
    signed_in: Callable[..., Any],
    tmp_path: Path,
    artifacts: Path,
    sign_in: Callable[[Any, str, str], None],
) -> None:
    users.add("rita", "reader password", "reader")
    users.add("eddie", "editor password", "editor")
    users.set_kb_rule("finance", KbRule(readers=("eddie",)))  # rita may not read it
    rig, url = accounts_app()
    budget = tmp_path / "budget_2027.md"
    budget.write_text("# Budget\n\nThe travel budget for 2027 is 48,000 euros.\n", "utf-8")
    rig.engine.library.ingest([(budget, budget.name)], kb="finance")

    page = open_page(url)
    page.get_by_label("Name").fill("rita")
    page.get_by_label("Password").fill("wrong password")
    page.get_by_role("button", name="Sign in").click()
    # The same words for a wrong name (see test_login_throttle)
    page.get_by_role("alert").get_by_text("Wrong name or password.").wait_for()
    sign_in(page, "rita", "reader password")
    account = page.locator("#account").inner_text()
    assert "rita" in account and "reader" in account.lower()  # the role's name, capitalised or not
    page.get_by_role("tab", name="Knowledge").click()
    page.locator("#documents").wait_for()
    assert page.locator("#upload").count() == 0 or not page.locator("#upload").is_visible()
    assert page.locator("#delete").count() == 0 or not page.locator("#delete").is_visible()
    assert not page.locator("#doc-delete").is_visible()
    page.get_by_role("tab", name="Intents").click()
    page.locator("#intent-tree").wait_for()  # a reader may look at the tree...
    assert not page.locator("#intent-save").is_visible() and not page.locator("#intent-import").is_visible()
    page.screenshot(path=str(artifacts / "reader.png"), full_page=True)
    assert "budget_2027.md" not in page.content()  # not in the table, the lists or the page's data

    editor = signed_in(url, "eddie", "editor password")
    editor.get_by_role("tab", name="Knowledge").click()
    editor.locator("#upload").wait_for(state="visible")
    editor.locator("#documents").get_by_text("budget_2027.md").filter(visible=True).first.click()  # eddie may read it
    editor.locator("#doc-delete").wait_for(state="visible")  # ...and delete it, from its view
    editor.get_by_role("tab", name="Intents").click()
    editor.locator("#intent-save").wait_for(state="visible")


def test_with_accounts_off_the_about_section_says_so(
    read_only_app: tuple[Any, str], open_page: Callable[[str], Any]
) -> None:
    _rig, url = read_only_app
    page = open_page(url)
    page.locator("#about").get_by_text("About this app").click()
    page.locator("#accounts-off").get_by_text("Accounts are off").wait_for()
    # The header names nobody, once the page's load events are done (until then Gradio shows their timer there).
    expect(page.locator("#account")).to_have_text("", use_inner_text=True, timeout=30_000)
    page.get_by_role("tab", name="Knowledge").click()
    page.locator("#upload").wait_for(state="visible")
