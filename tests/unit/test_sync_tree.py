"""Reading a followed folder without leaving it (``ragapp.sync.tree``) and the git locations a sync may reach
(``ragapp.sync.git``), on real folders, links and FIFOs under tmp_path."""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from ragapp.config import SyncSettings
from ragapp.db import SqliteDatabase
from ragapp.sync.git import check_location, transport
from ragapp.sync.service import add_source
from ragapp.sync.sources import SyncError
from ragapp.sync.state import SyncStore
from ragapp.sync.tree import FileProblem, Tree

EXTENSIONS = {".md"}


def _bounded(work: Callable[[], object], within_s: float = 20.0) -> None:
    """``work()`` in a thread, its exception raised here; fails when it blocks past ``within_s`` (a hostile FIFO)."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(within_s)
    assert not thread.is_alive(), f"blocked for over {within_s:.0f} s"
    if errors:
        raise errors[0]


def _write(root: Path, rel: str, text: str = "text") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")
    return path


def _walk(root: Path, max_depth: int = 64) -> tuple[list[str], list[tuple[str, str]]]:
    with Tree.open(root) as tree:
        seen, _ignored, refused = tree.walk(lambda _rel: True, EXTENSIONS, max_depth)
    return [s.rel_path for s in seen], [(r.path, r.reason) for r in refused]


def test_the_walk_stops_at_the_depth_limit_and_says_where(tmp_path: Path) -> None:
    _write(tmp_path, "a/b/c/at-limit.md")
    _write(tmp_path, "a/b/c/d/too-deep.md")
    seen, refused = _walk(tmp_path, max_depth=3)
    assert seen == ["a/b/c/at-limit.md"]
    assert refused == [("a/b/c/d/", "folder more than 3 folders deep: not read (RAGAPP_SYNC__MAX_DEPTH)")]


def test_the_walk_follows_no_link_to_a_folder_or_a_file(tmp_path: Path) -> None:
    outside = _write(tmp_path / "outside", "secret.md").parent
    root = tmp_path / "root"
    _write(root, "mine.md")
    (root / "linked").symlink_to(outside)
    (root / "linked.md").symlink_to(outside / "secret.md")
    assert _walk(root) == (["mine.md"], [])


def test_a_file_swapped_for_a_link_or_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    outside = _write(tmp_path / "outside", "secret.md", "secret")
    root = tmp_path / "root"
    _write(root, "a.md")
    _write(root, "sub/b.md")
    with Tree.open(root) as tree:
        assert tree.read("a.md").size == 4
        (root / "link").symlink_to(outside)
        os.replace(root / "link", root / "a.md")
        with pytest.raises(FileProblem, match="symbolic link"):
            tree.read("a.md")
        (root / "sublink").symlink_to(outside.parent, target_is_directory=True)
        os.rename(root / "sub", tmp_path / "sub-away")
        os.replace(root / "sublink", root / "sub")  # a folder on the way is a link now
        with pytest.raises(FileProblem, match="link") as caught:
            tree.read("sub/secret.md")
        assert not caught.value.retry
        os.mkfifo(root / "fifo.md")
        with pytest.raises(FileProblem, match=r"not a regular file now \(a FIFO\)"):
            _bounded(lambda: tree.read("fifo.md"))
        with pytest.raises(FileProblem) as gone:
            tree.read("never-there.md")
        assert gone.value.retry
        with pytest.raises(FileProblem, match="not a path inside"):
            tree.read("../outside/secret.md")


def test_a_copy_holds_the_bytes_read_and_their_hash(tmp_path: Path) -> None:
    _write(tmp_path / "root", "a.md", "the bytes")
    with Tree.open(tmp_path / "root") as tree:
        read = tree.copy("a.md", tmp_path / "copy.md")
        sizes: list[int] = []
        tree.read("a.md", check=sizes.append)
    assert (tmp_path / "copy.md").read_text("utf-8") == "the bytes" and sizes == [9]
    assert read.content_hash == hashlib.sha256(b"the bytes").hexdigest()


def test_a_folder_is_followed_only_inside_the_allowed_roots(tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    (allowed / "docs").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (allowed / "sneaky").symlink_to(tmp_path / "elsewhere")
    with Tree.open(allowed / "docs", [allowed]) as tree:
        assert tree.real == (allowed / "docs").resolve()
    for outside in (tmp_path / "elsewhere", allowed / "sneaky"):  # by its real place, not its name
        with pytest.raises(SyncError, match="RAGAPP_SYNC__ALLOWED_ROOTS"):
            Tree.open(outside, [allowed])


@pytest.mark.parametrize(
    ("location", "expected"),
    [("fd::17", "fd"), ("ext::sh -c id", "ext"), ("https://h/r.git", "https"), ("git+ssh://h/r", "ssh"),
     ("git@host:org/r.git", "ssh"), ("/srv/repo", "file"), ("file:///srv/repo", "file"), ("./a:b", "file"),
     ("HTTP://h/r", "http")],
)  # fmt: skip
def test_the_transport_of_a_git_location(location: str, expected: str) -> None:
    assert transport(location) == expected


def test_git_locations_outside_the_rules_are_refused(tmp_path: Path) -> None:
    protocols = SyncSettings().git_protocols
    refused = [("fd::17", "transport 'fd'"), ("ext::sh -c id", "transport 'ext'"),
               ("http://h/r.git", "transport 'http'"), ("--upload-pack=touch x", "git option")]  # fmt: skip
    for location, match in refused:
        with pytest.raises(SyncError, match=match):
            check_location(location, protocols)
    check_location("https://example.org/r.git", protocols)
    (tmp_path / "in").mkdir()
    check_location(str(tmp_path / "in"), protocols, [tmp_path / "in"])
    with pytest.raises(SyncError, match="outside the folders"):
        check_location(f"file://{tmp_path}", protocols, [tmp_path / "in"])
    with pytest.raises(ValueError, match="never allowed"):
        SyncSettings(git_protocols=["https", "fd"])


def test_adding_a_source_outside_the_rules_is_refused_at_once(tmp_path: Path) -> None:
    store = SyncStore(SqliteDatabase(tmp_path / "sync.sqlite3")).start()
    allowed, outside = tmp_path / "shared", tmp_path / "private"
    (allowed / "docs").mkdir(parents=True)
    outside.mkdir()
    (allowed / "escape").symlink_to(outside)
    settings = SyncSettings(allowed_roots=[allowed])
    assert add_source(store, settings, "docs", "folder", str(allowed / "docs"), "docs").location.endswith("docs")
    for kind, location in [("folder", outside), ("folder", allowed / "escape"), ("git", outside)]:
        with pytest.raises(SyncError, match="RAGAPP_SYNC__ALLOWED_ROOTS"):
            add_source(store, settings, "x", kind, str(location), "x")
    with pytest.raises(SyncError, match="transport 'fd'"):
        add_source(store, settings, "fd", "git", "fd::17", "fd")
    assert [s.name for s in store.sources()] == ["docs"]
