"""The Knowledge tab's panel of followed folders, through its handlers over a real engine: who sees it, adding a
source, the table with state and progress, the last report with its changes and refusals, sync, pause and
resume. (The page itself is built here too: its events must wire.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import gradio as gr
import pytest

from ragapp.ui.layout import build_ui
from ragapp.ui.sources import SourceHandlers
from tests.integration.sync_helpers import aged, text, wait_for, write
from tests.text import shown

pytestmark = pytest.mark.integration


class _Request:
    """What a handler reads of a signed-in request: the user's name."""

    def __init__(self, username: str) -> None:
        self.username = username


def test_the_panel_adds_lists_and_reports(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    folder = tmp_path / "handbook"
    aged(write(folder, "a.md", text("anchors")))
    aged(write(folder, "empty.md", "  \n"))
    rig = make_engine(sync={"enabled": False, "settle_s": 0.0})
    build_ui(rig.engine)  # the page builds and wires with the panel in it
    handlers = SourceHandlers(rig.engine)
    column, adding, timer = handlers.shown()
    assert column["visible"] and adding["visible"] and timer.active  # accounts off: the local user is an admin
    said, picked = handlers.add("handbook", "folder", str(folder), "handbook", "*.md", "drafts/*", "")
    assert "Following" in shown(said) and picked["value"] == "handbook"
    wait_for(lambda: handlers.table()[0][4] == "idle", what="the first sync")
    (row,) = handlers.table()
    assert row[:4] == ["handbook", "folder", str(folder), "handbook"] and row[6].startswith("1 added")
    rows, choices, report = handlers.refresh(None)
    assert choices["value"] == "handbook" and rows == [row]
    assert "2 files: 1 added" in shown(report) and "empty.md: empty.md: no text found" in shown(report)

    handlers.act("pause", "handbook")
    assert handlers.table()[0][4] == "paused"
    aged(write(folder, "b.md", text("bollards")))
    handlers.act("resume", "handbook")  # syncs at once
    wait_for(lambda: "b.md" in shown(handlers.refresh("handbook")[2]), what="the sync after resume")
    with pytest.raises(gr.Error, match="Pick a source first"):
        handlers.act("sync", None)
    with pytest.raises(gr.Error, match="already follows"):
        handlers.add("again", "folder", str(folder), "handbook", "", "", "")


def test_readers_and_editors_see_what_their_role_allows(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    from ragapp.accounts.store import UserStore

    users = tmp_path / "users.json"
    store = UserStore(users, 4)
    for user, role in (("rita", "reader"), ("eddie", "editor")):
        store.add(user, f"{user} password", role)
    rig = make_engine(sync={"enabled": False}, auth={"enabled": True, "users_file": users, "bcrypt_rounds": 4})
    handlers = SourceHandlers(rig.engine)
    column, adding, timer = handlers.shown(_Request("rita"))  # type: ignore[arg-type]
    assert not column["visible"] and not adding["visible"] and not timer.active  # nothing polls for a reader
    column, adding, timer = handlers.shown(_Request("eddie"))  # type: ignore[arg-type]
    assert column["visible"] and not adding["visible"] and timer.active
    with pytest.raises(gr.Error, match="may not follow folders"):
        handlers.add("x", "folder", str(tmp_path), "x", "", "", "", _Request("eddie"))  # type: ignore[arg-type]
    assert handlers.table(_Request("rita")) == []  # type: ignore[arg-type]
