"""The sync planner and the source rules on hand-built folders and rows: what is skipped unread, hashed,
renamed, removed or left for later; which paths a source wants; what a synced document is called."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ragapp.ingest.names import MAX_NAME_CHARS
from ragapp.sync.planner import plan
from ragapp.sync.sources import Source, SyncReport, display_name
from ragapp.sync.state import FileRow
from ragapp.sync.tree import Tree

EXTENSIONS = {".md", ".txt"}


def _file(root: Path, rel: str, text: str, age_s: float = 60.0) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - int(age_s * 1e9)))
    return path


def _row(root: Path, rel: str, doc_id: str = "d") -> FileRow:
    path = root / rel
    st = path.stat()
    return FileRow(rel, hashlib.sha256(path.read_bytes()).hexdigest(), st.st_size, st.st_mtime_ns, doc_id)


def test_patterns_match_the_relative_path_or_the_file_name() -> None:
    source = Source("s", "folder", "/x", "kb", include=("*.md", "docs/*"), exclude=("drafts/*", "*.tmp.md"))
    assert source.wants("a.md") and source.wants("deep/b.md") and source.wants("docs/c.txt")
    assert not source.wants("notes.txt") and not source.wants("drafts/a.md") and not source.wants("x/y.tmp.md")
    assert Source("s", "folder", "/x", "kb").wants("anything/at/all.bin")


def test_a_long_path_keeps_a_name_of_its_own() -> None:
    first, second = "a/" * 150 + "one.md", "a/" * 150 + "two.md"
    assert display_name("guide/install.md") == "guide/install.md"
    assert len(display_name(first)) == MAX_NAME_CHARS and display_name(first).endswith(".md")
    assert display_name(first) != display_name(second)


def test_walk_skips_git_links_and_types_not_read(tmp_path: Path) -> None:
    _file(tmp_path, "a.md", "a")
    _file(tmp_path, ".git/config.txt", "not mine")
    _file(tmp_path, "b.bin", "binary")
    (tmp_path / "link.md").symlink_to(tmp_path / "a.md")
    with Tree.open(tmp_path) as tree:
        seen, ignored, refused = tree.walk(Source("s", "folder", str(tmp_path), "kb").wants, EXTENSIONS, 64)
    assert [s.rel_path for s in seen] == ["a.md"] and ignored == 1 and refused == []


def test_only_files_whose_stat_moved_are_read(tmp_path: Path) -> None:
    source = Source("s", "folder", str(tmp_path), "kb")
    for name in ("same.md", "touched.md", "changed.md", "old-name.md", "gone.md"):
        _file(tmp_path, name, f"text of {name}")
    before = {r.rel_path: r for r in (_row(tmp_path, n) for n in
              ("same.md", "touched.md", "changed.md", "old-name.md", "gone.md"))}  # fmt: skip
    _file(tmp_path, "touched.md", "text of touched.md", age_s=30)  # same bytes, new time
    _file(tmp_path, "changed.md", "new text", age_s=30)
    (tmp_path / "old-name.md").rename(tmp_path / "new-name.md")
    (tmp_path / "gone.md").unlink()
    _file(tmp_path, "new.md", "brand new")
    with Tree.open(tmp_path) as tree:
        seen, _ignored, _refused = tree.walk(source.wants, EXTENSIONS, 64)
        out = plan(tree, seen, before, settle_s=0.0)
    assert [r.rel_path for r in out.unchanged] == ["same.md"]
    assert [r.rel_path for r in out.touched] == ["touched.md"]
    assert sorted(c.row.rel_path for c in out.changes) == ["changed.md", "new.md"]
    assert [(c.before.rel_path, c.row.rel_path, c.row.doc_id) for c in out.renames if c.before] == [
        ("old-name.md", "new-name.md", "d")
    ]
    assert [r.rel_path for r in out.removed] == ["gone.md"]
    assert out.hashed == 4  # touched, changed, new-name, new: never same.md


def test_a_file_that_moves_during_the_settle_window_waits(tmp_path: Path) -> None:
    path = _file(tmp_path, "growing.md", "start", age_s=0)
    tree = Tree.open(tmp_path)
    seen, _ignored, _refused = tree.walk(Source("s", "folder", str(tmp_path), "kb").wants, EXTENSIONS, 64)

    def meanwhile(_seconds: float) -> None:  # the writer goes on while the planner waits
        with path.open("a", encoding="utf-8") as handle:
            handle.write(" and more")

    with tree:
        out = plan(tree, seen, {}, settle_s=5.0, sleep=meanwhile)
    assert out.retrying == ["growing.md"] and out.changes == [] and out.hashed == 0


def test_a_report_round_trips_through_json() -> None:
    report = SyncReport(added=["a"], renamed=[("b", "c")], unchanged=3, hashed=1)
    assert SyncReport.from_json(report.to_json()) == report
    assert report.summary() == "1 added, 0 updated, 1 renamed, 0 removed, 0 refused, 3 unchanged"
