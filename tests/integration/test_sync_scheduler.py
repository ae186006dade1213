"""The app's background syncs: a followed folder is synced when added, again soon after its files change
(watchdog events, debounced), and a question is answered while a sync is under way. The engine's close stops
the thread and the watcher."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import ragapp.sync.runner as runner_module
from ragapp.config.system import SyncSettings
from ragapp.sync.runner import RunOutcome
from ragapp.sync.scheduler import Scheduler
from ragapp.sync.sources import Source
from tests.integration.sync_helpers import aged, text, wait_for, write

pytestmark = pytest.mark.integration


def names(rig: Any) -> list[str]:
    return sorted(d.name for d in rig.engine.library.documents() if d.kb == "notes")


def test_file_events_start_a_sync(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    aged(write(folder, "first.md", text("first")))
    # A long interval: every sync after the first comes from a file event.
    rig = make_engine(sync={"enabled": True, "debounce_s": 0.2, "settle_s": 0.2, "default_interval_s": 3600})
    rig.engine.sync.add("notes", "folder", str(folder), "notes")
    wait_for(lambda: names(rig) == ["first.md"], what="the first sync")
    wait_for(lambda: rig.engine.sync.source("notes").state == "idle", what="the first sync's end")
    write(folder, "sub/second.md", text("second"))
    wait_for(lambda: names(rig) == ["first.md", "sub/second.md"], what="a sync after the new file")
    (folder / "first.md").unlink()
    wait_for(lambda: names(rig) == ["sub/second.md"], what="a sync after the deletion")
    scheduler = rig.engine.sync._service.scheduler
    rig.engine.close()
    assert scheduler._thread is not None and not scheduler._thread.is_alive()
    rig.engine.close = lambda: None  # closed already: the fixture's teardown must not close it twice


def test_a_file_written_before_the_folder_is_watched_gets_a_sync(tmp_path: Path) -> None:
    """The race behind a red CI run: the thread read the source list just before the source was added, so its
    first sync ran before the folder was watched, and a file written then made no event. The watch's start
    counts as a change: a second sync follows, without waiting for the hour-long interval."""
    folder = tmp_path / "notes"
    folder.mkdir()
    source = Source("notes", "folder", str(folder), "notes", interval_s=3600)
    listed = threading.Event()  # the first listing is empty: the source is added after it
    runs: list[float] = []

    def sources() -> list[Source]:
        if not listed.is_set():
            listed.set()
            return []
        return [source]

    def run(name: str, stop: threading.Event) -> RunOutcome:
        if not runs:
            write(folder, "late.md", text("late"))  # before any watch began: no event
        runs.append(time.monotonic())
        return RunOutcome("idle", None)

    scheduler = Scheduler(run, sources, SyncSettings(enabled=True, debounce_s=0.2, default_interval_s=3600))
    try:
        scheduler.request("notes")
        wait_for(lambda: len(runs) >= 2, timeout=60, what="a sync after the watch began")
    finally:
        scheduler.close()


def test_a_question_is_answered_while_a_sync_runs(
    make_engine: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "notes"
    for i in range(3):
        aged(write(folder, f"n{i}.md", text(f"kettle model {i}")))
    rig = make_engine(sync={"enabled": False, "settle_s": 0.0, "batch_files": 1})
    rig.engine.sync.add("notes", "folder", str(folder), "notes", start=False)
    rig.engine.sync.run("notes")
    aged(write(folder, "n9.md", text("a lamp")))
    inside, go_on = threading.Event(), threading.Event()
    real = runner_module.ingest_synced

    def held(*args: Any, **kwargs: Any) -> Any:
        inside.set()
        assert go_on.wait(120)
        return real(*args, **kwargs)

    monkeypatch.setattr(runner_module, "ingest_synced", held)
    rig.engine.sync.sync_now("notes")
    try:
        assert inside.wait(120)
        assert rig.engine.sync.source("notes").state == "running"
        found = rig.engine.chat.retrieve("Why does kettle model 1 matter?")
        assert found.chunks and found.chunks[0].chunk.source == "n1.md"
        assert rig.engine.sync.source("notes").state == "running"  # the sync is still where it stopped
    finally:
        go_on.set()
    wait_for(lambda: "n9.md" in names(rig), what="the sync's end")
