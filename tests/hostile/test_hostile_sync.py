"""Hostile trees and repositories for sync (issue 49): a followed folder whose file is swapped for a link or a
FIFO between planning and reading, a 10,000-deep tree, a file gone for a moment, a git location that reads a
process's descriptors (``fd::17``) and one whose transport hangs. Each case runs the real sync over a real
folder (real embedder, Chroma, catalog) and is bounded in time: a sync that blocks fails the test.

The swaps happen at one chosen moment, right after the sync has planned: ``ragapp.sync.runner.plan`` is wrapped
to do them once it returns, so no sleep races the sync."""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import ragapp.sync.runner
from ragapp.sync.sources import Source, SyncError
from ragapp.sync.standalone import open_service, open_store
from tests.hostile.test_hostile_text import finishes
from tests.integration.sync_helpers import aged, text, wait_for, write

pytestmark = pytest.mark.integration

QUIET = {"sync": {"enabled": False, "settle_s": 0.0}}  # only the syncs a test asks for
BOUND_S = 120.0  # a sync of three small files never comes near this: past it, it is stuck
SECRET = "The vault combination is 31-07-2049; tell nobody.\n"
DEEP = 10_000


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _hashes(rig: Any) -> dict[str, str]:
    """Document name -> content hash, of every document."""
    return {d.name: d.content_hash for d in rig.engine.library.documents()}


def _after_planning(monkeypatch: pytest.MonkeyPatch, then: Callable[[], None]) -> None:
    """Run ``then`` once, right after the next sync has planned (before it reads a file to ingest it)."""
    real = ragapp.sync.runner.plan
    done: list[bool] = []

    def planned(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        if not done:
            done.append(True)
            then()
        return out

    monkeypatch.setattr(ragapp.sync.runner, "plan", planned)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "shared"
    aged(write(root, "notes.md", text("the kettle")))
    aged(write(root, "other.md", text("the ladder")))
    return root


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A file outside the followed folder that the server can read."""
    path = tmp_path / "private" / "vault.md"
    path.parent.mkdir()
    path.write_text(SECRET, "utf-8")
    return path


def test_a_link_swapped_in_after_planning_is_not_followed_and_the_restored_file_is_indexed(
    make_engine: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, folder: Path, secret: Path, tmp_path: Path
) -> None:
    rig = make_engine(**QUIET)
    rig.engine.sync.add("shared", "folder", str(folder), "shared", start=False)
    notes, kept = folder / "notes.md", tmp_path / "kept-notes.md"
    original = notes.read_bytes()

    def swap() -> None:  # what `mv -T link notes.md` does, the original put aside to come back later
        os.rename(notes, kept)
        (folder / ".swap").symlink_to(secret)
        os.replace(folder / ".swap", notes)

    _after_planning(monkeypatch, swap)
    out = finishes(lambda: rig.engine.sync.run("shared"), BOUND_S)
    assert out.report is not None and out.report.added == ["other.md"], out.report
    assert _sha(secret.read_bytes()) not in _hashes(rig).values()  # the secret was never indexed
    (skipped,) = [r for r in out.report.refused if r.path == "notes.md"]
    assert "link" in skipped.reason

    monkeypatch.undo()
    os.replace(kept, notes)  # the same file back: same size and modification time as planned
    again = finishes(lambda: rig.engine.sync.run("shared"), BOUND_S)
    assert again.report is not None and again.report.added == ["notes.md"], again.report
    assert _hashes(rig)["notes.md"] == _sha(original)


def test_a_fifo_swapped_in_after_planning_does_not_block_the_sync(
    make_engine: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, folder: Path
) -> None:
    rig = make_engine(**QUIET)
    rig.engine.sync.add("shared", "folder", str(folder), "shared", start=False)
    notes = folder / "notes.md"

    def swap() -> None:
        os.mkfifo(folder / ".fifo")
        os.replace(folder / ".fifo", notes)

    _after_planning(monkeypatch, swap)
    try:
        out = finishes(lambda: rig.engine.sync.run("shared"), BOUND_S)
    finally:  # a reader stuck in open() gets its end of file, so a failing test leaves no thread behind
        if notes.exists() and not notes.is_file():
            with contextlib.suppress(OSError):  # nobody is reading it: the sync did not block
                os.close(os.open(notes, os.O_WRONLY | os.O_NONBLOCK))
    assert out.report is not None and out.report.added == ["other.md"], out.report
    (skipped,) = [r for r in out.report.refused if r.path == "notes.md"]
    assert "not a regular file" in skipped.reason
    assert sorted(_hashes(rig)) == ["other.md"]


def _deep_tree(top: Path, depth: int) -> None:
    """``top/d/d/…`` ``depth`` folders deep, a file at the bottom: each folder made relative to its parent's
    descriptor (the whole path is far over PATH_MAX), one descriptor open at a time."""
    top.mkdir(parents=True)
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        bottom = os.open("bottom.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(bottom, text("the bottom").encode())
        os.close(bottom)
    finally:
        os.close(fd)


def _remove_deep_tree(top: Path) -> None:
    """Take ``_deep_tree``'s chain apart from the top, one level at a time (``shutil.rmtree`` recurses)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        while os.path.exists(os.path.join(top, "d")):
            os.rename("d", "gone", src_dir_fd=fd, dst_dir_fd=fd)
            if "d" in os.listdir(os.open("gone", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)):
                os.rename("gone/d", "d", src_dir_fd=fd, dst_dir_fd=fd)
            for name in os.listdir(os.path.join(top, "gone")):
                os.unlink(os.path.join(top, "gone", name))
            os.rmdir("gone", dir_fd=fd)
    finally:
        os.close(fd)


@pytest.fixture
def deep(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "deep"
    aged(write(root, "top.md", text("the top")))
    _deep_tree(root / "tree", DEEP)
    yield root
    _remove_deep_tree(root / "tree")


def test_a_tree_ten_thousand_folders_deep_is_refused_and_other_sources_go_on(
    deep: Path, folder: Path, make_engine: Callable[..., Any]
) -> None:  # ``deep`` first: the tree is taken apart after the engine (and its watcher) closed
    rig = make_engine(sync={"enabled": True, "settle_s": 0.0, "debounce_s": 0.2})
    rig.engine.sync.add("deep", "folder", str(deep), "deep")  # the scheduler's thread syncs both
    rig.engine.sync.add("shared", "folder", str(folder), "shared")

    def synced(name: str) -> bool:
        report = rig.engine.sync.source(name).report
        return report is not None and bool(report.finished_at)

    wait_for(lambda: synced("shared") and synced("deep"), BOUND_S, "both sources synced by the scheduler")
    assert rig.engine.sync.source("shared").report.added == ["notes.md", "other.md"]
    report = rig.engine.sync.source("deep").report
    assert report.added == ["top.md"] and not report.error, report
    (refused,) = report.refused
    assert refused.path.startswith("tree/d/d/") and "folders deep" in refused.reason


def test_a_file_gone_for_a_moment_is_indexed_when_it_comes_back(
    make_engine: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, folder: Path, tmp_path: Path
) -> None:
    rig = make_engine(**QUIET)
    rig.engine.sync.add("shared", "folder", str(folder), "shared", start=False)
    notes, away = folder / "notes.md", tmp_path / "away.md"
    _after_planning(monkeypatch, lambda: os.rename(notes, away))  # an editor's save: moved out, then back
    out = finishes(lambda: rig.engine.sync.run("shared"), BOUND_S)
    assert out.report is not None and "notes.md" in out.report.retrying, out.report
    monkeypatch.undo()
    os.rename(away, notes)  # the same bytes, size and time as planned
    again = finishes(lambda: rig.engine.sync.run("shared"), BOUND_S)
    assert again.report is not None and again.report.added == ["notes.md"], again.report
    assert sorted(_hashes(rig)) == ["notes.md", "other.md"]


def test_a_git_location_reading_a_descriptor_is_refused_at_once(make_engine: Callable[..., Any]) -> None:
    rig = make_engine(**QUIET)
    with pytest.raises(SyncError, match="transport 'fd'"):
        finishes(lambda: rig.engine.sync.add("fd", "git", "fd::17", "fd", start=False), BOUND_S)
    store, opened = open_store(rig.settings)  # one stored before the rule is refused when it syncs
    try:
        store.add(Source("old", "git", "fd::17", "old"))
    finally:
        opened.close()
    out = finishes(lambda: rig.engine.sync.run("old"), BOUND_S)
    assert out.state == "failed" and out.report is not None and "transport 'fd'" in out.report.error


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A loopback port that accepts connections and never answers: a transport that hangs."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def _git_processes(marker: str) -> list[int]:
    """Ids of the live processes whose command line holds ``marker``."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as cmdline:
                    if marker.encode() in cmdline.read():
                        found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_a_hanging_git_transport_is_bounded_and_leaves_no_process(
    make_engine: Callable[..., Any], silent_server: int
) -> None:
    url = f"http://127.0.0.1:{silent_server}/manual.git"
    rig = make_engine(sync={**QUIET["sync"], "git_timeout_s": 3.0, "git_protocols": ["file", "http", "https"]})
    rig.engine.sync.add("hang", "git", url, "hang", start=False)
    out = finishes(lambda: rig.engine.sync.run("hang"), BOUND_S)
    assert out.state == "failed" and out.report is not None and "took over 3 s" in out.report.error
    assert _git_processes(url) == []  # git and its transport helper, killed together


def test_a_git_child_ends_with_the_sync_that_started_it(make_settings: Callable[..., Any], silent_server: int) -> None:
    url = f"http://127.0.0.1:{silent_server}/manual.git"
    settings = make_settings(sync={**QUIET["sync"], "git_protocols": ["http"]})  # the default time limit: minutes
    service, _store, opened = open_service(settings)
    try:
        service.add("hang", "git", url, "hang", background=False)
        service.request("hang")  # the scheduler's thread runs it
        wait_for(lambda: len(_git_processes(url)) >= 2, BOUND_S, "git and its transport helper running")
        finishes(service.close, BOUND_S)  # the app closing
        assert _git_processes(url) == []
        report = service.status("hang").report
        assert report is not None and report.stopped, report
    finally:
        opened.close()
