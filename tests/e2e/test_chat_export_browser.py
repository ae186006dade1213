"""Exporting chats as people do it in a real browser (scripted model): ask, open the sidebar, export the chat as
Markdown and as JSON and all chats as a zip, and read the downloaded files' citations; a new chat puts the
download away. Signed in, the chats a user keeps in the page are the ones their API key exports, and nobody
else's."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from ragapp.accounts.store import UserStore

pytestmark = [pytest.mark.e2e]

DOC = "# Robots\n\nThe Alpha robot battery lasts 90 minutes on a full charge.\n"
ANSWER = "The Alpha battery lasts 90 minutes [1]."
QUESTION = "How long does the Alpha battery last?"


def _download(page: Any, suffix: str) -> bytes:
    """Click the sidebar's download link once it offers a ``suffix`` file; the downloaded file's bytes."""
    link = page.locator(f'#chat-export-file a[download$="{suffix}"]').first
    link.wait_for()
    with page.expect_download() as download:
        link.click()
    assert download.value.suggested_filename.endswith(suffix)
    return Path(download.value.path()).read_bytes()


def test_the_sidebar_exports_the_chat_with_its_citations(
    scripted_app: Callable[..., Any],
    open_page: Callable[[str], Any],
    ask_and_wait: Callable[[Any, str], None],
    artifacts: Path,
) -> None:
    rig, url = scripted_app({"robots.md": DOC})
    page = open_page(url)
    page.locator("#question textarea").wait_for()
    rig.llm.enqueue(ANSWER)
    ask_and_wait(page, QUESTION)
    page.locator("#open-chats").click()
    page.locator("#chat-list").get_by_text(QUESTION).first.wait_for()  # kept: the chat can be exported

    page.locator("#export-chat").click()
    markdown = _download(page, ".md").decode("utf-8")
    assert f"## Q: {QUESTION}" in markdown and ANSWER in markdown
    assert "- [1] **robots.md**, Robots" in markdown
    assert "> The Alpha robot battery lasts 90 minutes on a full charge." in markdown
    page.screenshot(path=str(artifacts / "chat-export.png"), full_page=True)

    page.locator("#export-format").get_by_text("JSON").click()
    page.locator("#export-chat").click()
    body = json.loads(_download(page, ".json"))
    assert body["format"] == "ragapp.conversation" and body["title"] == QUESTION
    (exchange,) = body["exchanges"]
    assert [(c["number"], c["document"], c["heading"]) for c in exchange["citations"]] == [(1, "robots.md", "Robots")]

    page.locator("#export-all-chats").click()
    with zipfile.ZipFile(io.BytesIO(_download(page, ".zip"))) as zipped:
        (listed,) = json.loads(zipped.read("index.json"))["conversations"]
        assert "- [1] **robots.md**, Robots" in zipped.read(listed["markdown"]).decode("utf-8")

    page.locator("#new-chat").click()  # a new chat: the file of the other is no longer offered
    page.locator("#chat-export-file").wait_for(state="hidden")


def test_with_no_saved_chat_the_export_says_so(read_only_app: tuple[Any, str], open_page: Callable[[str], Any]) -> None:
    _rig, url = read_only_app
    page = open_page(url)
    page.locator("#question textarea").wait_for()
    page.locator("#open-chats").click()
    page.locator("#export-chat").click()
    page.get_by_text("There is no saved chat to export").first.wait_for()
    page.locator("#export-all-chats").click()
    page.get_by_text("You have no saved chats yet").first.wait_for()
    assert not page.locator("#chat-export-file a").count()


def test_a_signed_in_users_chats_are_theirs_in_the_page_and_over_the_api(
    accounts_app: Callable[..., Any],
    users: UserStore,
    signed_in: Callable[..., Any],
    ask_and_wait: Callable[[Any, str], None],
) -> None:
    keys = {}
    for name in ("rita", "eddie"):
        users.add(name, f"{name} password", "reader")
        keys[name] = {"Authorization": f"Bearer {users.add_key(name)[1]}"}
    rig, url = accounts_app({"robots.md": DOC})
    page = signed_in(url, "rita", "rita password")
    rig.llm.enqueue(ANSWER)
    ask_and_wait(page, QUESTION)
    page.locator("#open-chats").click()
    page.locator("#chat-list").get_by_text(QUESTION).first.wait_for()
    page.locator("#export-chat").click()
    assert "- [1] **robots.md**, Robots" in _download(page, ".md").decode("utf-8")

    base = url.rstrip("/")
    (listed,) = httpx.get(f"{base}/v1/conversations", headers=keys["rita"]).json()  # the chat she made in the page
    assert listed["title"] == QUESTION
    exported = httpx.get(f"{base}/v1/conversations/{listed['id']}/export", headers=keys["rita"])
    assert exported.status_code == 200 and "- [1] **robots.md**, Robots" in exported.text
    assert httpx.get(f"{base}/v1/conversations", headers=keys["eddie"]).json() == []
    assert httpx.get(f"{base}/v1/conversations/{listed['id']}/export", headers=keys["eddie"]).status_code == 404
