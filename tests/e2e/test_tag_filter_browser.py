"""The Chat's Tags filter lists the tags people saved, on the documents the signed-in user may read: an editor
saves tags in the Knowledge tab and finds them in the filter at once (they had to be typed exactly before); a
reader is offered the tags of the knowledge bases she may read only."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from ragapp.accounts.model import KbRule
from ragapp.accounts.store import UserStore

pytestmark = [pytest.mark.e2e]


def _offered(page: Any) -> list[str]:
    """The tags the Chat's filter offers, as its list shows them when the box is clicked."""
    page.get_by_role("tab", name="Chat").click()
    accordion = page.locator("#chat-filter")
    if not page.locator("#chat-filter-tags input").is_visible():
        accordion.locator(".label-wrap").click()
    page.locator("#chat-filter-tags input").click()
    page.wait_for_timeout(1000)  # the focus event has refreshed the list
    page.keyboard.press("Escape")
    page.locator("#chat-filter-tags input").click()
    options = page.locator("#chat-filter-tags [role=option], ul.options [role=option]")
    # Each option carries a check mark Gradio shows for a picked one only; read during a redraw (the focus's new
    # choices arriving while the list is open) it can come out as text although nothing is picked.
    names = sorted({o.replace("✓", "").strip() for o in options.all_inner_texts() if o.replace("✓", "").strip()})
    page.keyboard.press("Escape")
    return names


def _offers(page: Any, expected: list[str], timeout_s: float = 60.0) -> list[str]:
    """What the filter offers, read again until it is ``expected`` (a generous bound: on a loaded machine the
    focus's refresh may land after the list was read); the last reading otherwise."""
    deadline = time.monotonic() + timeout_s
    while (names := _offered(page)) != expected and time.monotonic() < deadline:
        page.wait_for_timeout(500)
    return names


# Behind `slow` (make test-slow, which CI runs after make test): it starts its own app with accounts.
@pytest.mark.slow
def test_the_tag_filter_lists_the_saved_tags_the_user_may_read(
    scripted_app: Callable[..., Any],
    open_page: Callable[[str], Any],
    tmp_path: Path,
    sign_in: Callable[[Any, str, str], None],
) -> None:
    users = tmp_path / "users.json"
    store = UserStore(users, 4)
    store.add("eddie", "editor password", "editor")
    store.add("rita", "reader password", "reader")
    store.set_kb_rule("finance", KbRule(readers=("eddie",)))  # rita may not read it
    rig, url = scripted_app(auth={"enabled": True, "users_file": users, "bcrypt_rounds": 4})
    for name, text, kb in (
        ("lamp.md", "# Lamp\n\nThe Lumen lamp runs 14 hours on one charge.\n", "default"),
        ("budget.md", "# Budget\n\nThe travel budget for 2027 is 48,000 euros.\n", "finance"),
    ):
        path = tmp_path / name
        path.write_text(text, "utf-8")
        (added,) = rig.engine.library.ingest([(path, name)], kb=kb)
        assert added.status == "added"
    budget = next(d.doc_id for d in rig.engine.library.documents() if d.name == "budget.md")
    rig.engine.library.set_tags(budget, ["confidential"])

    editor = open_page(url)
    sign_in(editor, "eddie", "editor password")
    assert _offers(editor, ["confidential"]) == ["confidential"]
    editor.get_by_role("tab", name="Knowledge").click()
    editor.locator("#documents").get_by_text("lamp.md").filter(visible=True).first.click()
    expect(editor.locator("#doc-about")).to_contain_text("lamp.md")  # the view is filled: the tags box too
    editor.locator("#doc-tags textarea").fill("lighting, battery powered")
    editor.locator("#doc-tags-save").click()
    expect(editor.locator("#doc-about")).to_contain_text("battery powered, lighting")
    saved = ["battery powered", "confidential", "lighting"]  # saved a moment ago
    assert _offers(editor, saved) == saved

    reader = open_page(url)
    sign_in(reader, "rita", "reader password")
    readable = ["battery powered", "lighting"]  # none of the finance base's
    assert _offers(reader, readable) == readable
