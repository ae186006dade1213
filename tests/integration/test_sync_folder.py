"""A knowledge base following a real folder: the first sync indexes everything, later ones only what changed
(new, changed, renamed, deleted), a file mid-write waits, an unreadable one is reported, not fatal."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.integration.sync_helpers import aged, text, wait_for, write

pytestmark = pytest.mark.integration

QUIET = {"sync": {"enabled": False, "settle_s": 0.3}}  # only the syncs a test asks for


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "handbook"
    for i, topic in enumerate(["boilers", "ladders", "forklifts"]):
        aged(write(root, f"safety/{topic}.md", text(topic)))
        aged(write(root, f"notes/{i}.txt", text(f"note {i} {topic}")))
    aged(write(root, "drafts/wip.md", text("drafts")))
    aged(write(root, "image.bin", "not a document type"))
    return root


def names(rig: Any, kb: str = "handbook") -> list[str]:
    return sorted(d.name for d in rig.engine.library.documents() if d.kb == kb)


def follow(rig: Any, folder: Path, **extra: Any) -> None:
    rig.engine.sync.add("handbook", "folder", str(folder), "handbook", start=False, **extra)


def test_first_sync_indexes_the_tree_and_a_second_does_no_work(make_engine: Callable[..., Any], folder: Path) -> None:
    rig = make_engine(**QUIET)
    follow(rig, folder, exclude=["drafts/*"])
    first = rig.engine.sync.run("handbook")
    assert first.state == "idle" and first.report is not None
    wanted = ["notes/0.txt", "notes/1.txt", "notes/2.txt", "safety/boilers.md", "safety/forklifts.md",
              "safety/ladders.md"]  # fmt: skip
    assert sorted(first.report.added) == wanted and names(rig) == wanted
    assert (first.report.hashed, first.report.ingested, first.report.refused, first.report.ignored) == (6, 6, [], 1)
    again = rig.engine.sync.run("handbook")
    assert again.report is not None
    assert (again.report.hashed, again.report.ingested, again.report.unchanged) == (0, 0, 6)
    (status,) = rig.engine.sync.sources()
    assert status.state == "idle" and status.report == again.report and status.last_run_at


def test_include_patterns_match_paths_and_file_names(make_engine: Callable[..., Any], folder: Path) -> None:
    rig = make_engine(**QUIET)
    follow(rig, folder, include=["*.md"], exclude=["drafts/*"])
    rig.engine.sync.run("handbook")
    assert names(rig) == ["safety/boilers.md", "safety/forklifts.md", "safety/ladders.md"]


def test_a_resync_does_only_the_changes(make_engine: Callable[..., Any], folder: Path) -> None:
    rig = make_engine(**QUIET)
    follow(rig, folder)
    rig.engine.sync.run("handbook")
    docs = {d.name: d for d in rig.engine.library.documents()}
    aged(write(folder, "safety/boilers.md", text("boilers, revised")))  # changed
    (folder / "safety/ladders.md").rename(folder / "archive-ladders.md")  # renamed
    (folder / "notes/1.txt").unlink()  # deleted
    aged(write(folder, "new/cranes.md", text("cranes")))  # new
    touched = folder / "notes/2.txt"
    os.utime(touched, ns=(touched.stat().st_atime_ns, touched.stat().st_mtime_ns + 10**9))  # same bytes
    out = rig.engine.sync.run("handbook")
    report = out.report
    assert report is not None and out.state == "idle"
    assert report.updated == ["safety/boilers.md"] and report.added == ["new/cranes.md"]
    assert report.renamed == [("safety/ladders.md", "archive-ladders.md")]
    assert report.removed == ["notes/1.txt"]
    # Work: the changed, new, renamed and touched files are read; only the changed and new ones ingested.
    assert (report.hashed, report.ingested, report.unchanged) == (4, 2, 4)
    after = {d.name: d for d in rig.engine.library.documents()}
    assert "notes/1.txt" not in after and "safety/ladders.md" not in after
    assert after["archive-ladders.md"].doc_id == docs["safety/ladders.md"].doc_id  # renamed, not re-embedded
    assert after["safety/boilers.md"].doc_id != docs["safety/boilers.md"].doc_id
    assert after["notes/2.txt"].doc_id == docs["notes/2.txt"].doc_id
    view = rig.engine.library.document_view(after["archive-ladders.md"].doc_id)
    assert {c.source for c in view.chunks} == {"archive-ladders.md"}  # its passages cite the new path


def test_a_file_still_being_written_waits_for_the_next_sync(make_engine: Callable[..., Any], folder: Path) -> None:
    rig = make_engine(**QUIET)
    follow(rig, folder)
    growing = folder / "safety/growing.md"
    growing.write_text("The growing note begins.\n", "utf-8")
    stop, wrote = threading.Event(), threading.Event()

    def writer() -> None:
        n = 0
        while not stop.is_set():
            with growing.open("a", encoding="utf-8") as handle:
                handle.write(f"Line {n} of the growing note.\n")
            n += 1
            wrote.set()
            stop.wait(0.02)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert wrote.wait(10)
        out = rig.engine.sync.run("handbook")
    finally:
        stop.set()
        thread.join()
    assert out.report is not None and out.report.retrying == ["safety/growing.md"]
    assert "safety/growing.md" not in names(rig) and len(out.report.added) == 7
    aged(growing)
    later = rig.engine.sync.run("handbook")
    assert later.report is not None and later.report.added == ["safety/growing.md"] and not later.report.retrying


def _unprivileged() -> list[str]:
    """The command prefix that makes a file's mode count: root reads a mode-000 file, unless its capabilities to
    override file permissions are dropped (``setpriv``); anyone else needs nothing."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: a file's mode cannot be made to count")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search"]


def test_an_unreadable_file_is_reported_and_the_rest_goes_on(folder: Path, tmp_path: Path) -> None:
    # The sync runs in a process of its own (python -m ragapp.sync), where the file's mode is obeyed even as root.
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGAPP_")} | {
        "RAGAPP_PATHS__STATE_DIR": str(tmp_path / "state"), "RAGAPP_SYNC__SETTLE_S": "0",
        "PYTHONPATH": str(Path(__file__).parents[2]), "HF_HUB_OFFLINE": "1",
    }  # fmt: skip

    def sync(*args: str) -> subprocess.CompletedProcess[str]:
        command = [*_unprivileged(), sys.executable, "-m", "ragapp.sync", *args]
        return subprocess.run(command, env=env, capture_output=True, text=True, check=False, timeout=600)

    assert sync("add", "handbook", "--folder", str(folder), "--kb", "handbook").returncode == 0
    secret = aged(write(folder, "safety/secret.md", text("secret")))
    secret.chmod(0)
    try:
        done = sync("--json", "run", "handbook")
    finally:
        secret.chmod(0o644)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)["report"]
    assert report["refused"] == [{"path": "safety/secret.md", "reason": "not readable: Permission denied"}]
    assert len(report["added"]) == 7 and "safety/secret.md" not in report["added"]
    later = sync("--json", "run", "handbook")  # readable again: picked up
    assert json.loads(later.stdout)["report"]["added"] == ["safety/secret.md"], later.stderr


def test_a_file_the_ingest_refuses_is_reported_and_not_read_again(
    make_engine: Callable[..., Any], folder: Path
) -> None:
    rig = make_engine(**QUIET)
    follow(rig, folder)
    aged(write(folder, "empty.md", "   \n"))
    out = rig.engine.sync.run("handbook")
    assert out.report is not None
    (refusal,) = out.report.refused
    assert refusal.path == "empty.md" and "no text" in refusal.reason
    again = rig.engine.sync.run("handbook")
    assert again.report is not None and again.report.hashed == 0
    assert [r.path for r in again.report.refused] == ["empty.md"]  # still reported, not re-parsed


def test_copies_share_one_document_that_outlives_either(make_engine: Callable[..., Any], folder: Path) -> None:
    rig = make_engine(**QUIET)
    follow(rig, folder)
    aged(write(folder, "zz-copies/boilers.md", text("boilers")))
    out = rig.engine.sync.run("handbook")
    assert out.report is not None
    (refusal,) = out.report.refused
    assert refusal.path == "zz-copies/boilers.md" and "already in the knowledge base" in refusal.reason
    (folder / "safety/boilers.md").unlink()  # the copy keeps the content, under its own name now
    out = rig.engine.sync.run("handbook")
    assert out.report is not None and out.report.removed == ["safety/boilers.md"]
    assert "zz-copies/boilers.md" in names(rig) and "safety/boilers.md" not in names(rig)
    (folder / "zz-copies/boilers.md").unlink()
    rig.engine.sync.run("handbook")
    assert "zz-copies/boilers.md" not in names(rig)


def test_a_file_committed_before_the_process_died_is_taken_as_its_own(
    make_engine: Callable[..., Any], folder: Path
) -> None:
    rig = make_engine(**QUIET)
    follow(rig, folder)
    # As if a sync stored this file and died before it wrote the file's row.
    (done,) = rig.engine.library.ingest([(folder / "safety/boilers.md", "safety/boilers.md")], kb="handbook")
    out = rig.engine.sync.run("handbook")
    assert out.report is not None and out.report.refused == [] and len(out.report.added) == 7
    assert {d.name: d.doc_id for d in rig.engine.library.documents()}["safety/boilers.md"] == done.doc_id


def test_pause_and_resume(make_engine: Callable[..., Any], folder: Path) -> None:
    rig = make_engine(**QUIET)
    follow(rig, folder)
    rig.engine.sync.pause("handbook")
    out = rig.engine.sync.run("handbook")
    assert out.state == "paused" and names(rig) == []
    assert rig.engine.sync.source("handbook").state == "paused"
    rig.engine.sync.resume("handbook")  # starts a sync in the background
    wait_for(lambda: len(names(rig)) == 7 and rig.engine.sync.source("handbook").state == "idle", what="the sync")
    report = rig.engine.sync.source("handbook").report
    assert report is not None and len(report.added) == 7


def test_a_missing_folder_fails_the_sync_with_the_reason(make_engine: Callable[..., Any], folder: Path) -> None:
    rig = make_engine(**QUIET)
    follow(rig, folder)
    folder.rename(folder.with_name("elsewhere"))
    out = rig.engine.sync.run("handbook")
    assert out.state == "failed" and out.report is not None and "is not a folder" in out.report.error
    assert rig.engine.sync.source("handbook").state == "failed"


def test_removing_a_source_keeps_or_deletes_its_documents(make_engine: Callable[..., Any], folder: Path) -> None:
    rig = make_engine(**QUIET)
    follow(rig, folder)
    rig.engine.sync.run("handbook")
    assert rig.engine.sync.remove("handbook") == 0 and len(names(rig)) == 7
    follow(rig, folder)
    rig.engine.sync.run("handbook")  # its own documents again (recorded as duplicates of themselves)
    assert rig.engine.sync.remove("handbook", delete_documents=True) == 7 and names(rig) == []
    assert rig.engine.sync.sources() == []


def test_bad_sources_are_refused_with_the_fix(make_engine: Callable[..., Any], folder: Path, tmp_path: Path) -> None:
    from ragapp.engine.sync import SyncError

    rig = make_engine(**QUIET)
    follow(rig, folder)
    cases = [
        (("x", "folder", "relative/path", "kb2"), "absolute path"),
        (("x", "folder", str(tmp_path / "none"), "kb2"), "not a folder"),
        (("x", "svn", str(folder), "kb2"), "'folder', a 'git' repository or a 'web' site"),
        (("bad name!", "folder", str(folder), "kb2"), "not allowed"),
        (("handbook", "folder", str(folder), "kb2"), "already"),
        (("x", "folder", str(folder), "handbook"), "already follows the source 'handbook'"),
        (("x", "folder", str(folder), "bad/kb"), "Knowledge base name"),
        (("x", "folder", str(rig.state_dir.parent), "kb2"), "holds the app's state folder"),
    ]
    for args, message in cases:
        with pytest.raises(SyncError, match=message) as refused:
            rig.engine.sync.add(*args, start=False)
        said = refused.value.said  # each a record, for the page to word in its language
        assert said is not None and said.english == str(refused.value) and said.worded(True), args


def test_a_synced_file_says_where_it_lives_and_filters_find_it(make_engine: Callable[..., Any], folder: Path) -> None:
    from ragapp.core.filters import DocumentFilter

    rig = make_engine(**QUIET)
    follow(rig, folder, exclude=["drafts/*"])
    rig.engine.sync.run("handbook")
    docs = {d.name: d for d in rig.engine.library.documents()}
    meta = rig.engine.library.document_view(docs["safety/boilers.md"].doc_id).meta
    assert (meta["source"], meta["path"], meta["folder"]) == ("handbook", "safety/boilers.md", "safety")
    assert meta["changed"].startswith("20")  # the file's time of change, as UTC
    (folder / "plant").mkdir()
    (folder / "safety/boilers.md").rename(folder / "plant/boilers.md")  # moved: renamed, not embedded again
    rig.engine.sync.run("handbook")
    moved = rig.engine.library.document_view(docs["safety/boilers.md"].doc_id)
    assert moved.record.name == "plant/boilers.md"
    assert (moved.meta["path"], moved.meta["folder"]) == ("plant/boilers.md", "plant")
    found = rig.engine.chat.retrieve("boilers", where=DocumentFilter(source="handbook", path_prefix="plant/"))
    assert found.chunks and {c.chunk.source for c in found.chunks} == {"plant/boilers.md"}
    assert not rig.engine.chat.retrieve("boilers", where=DocumentFilter(path_prefix="safety/boilers")).chunks


def test_a_copy_of_another_bases_document_is_reported_without_naming_it(
    make_engine: Callable[..., Any], folder: Path, tmp_path: Path
) -> None:
    """A followed folder's readers may not read every base: a file whose content another base already holds is
    refused without that base's name or the document's (issue 49: forbidden looks like unknown)."""
    rig = make_engine(**QUIET)
    secret = tmp_path / "q3-budget-plan.md"
    secret.write_text(text("boilers"), "utf-8")  # the same bytes as safety/boilers.md
    rig.engine.library.ingest([(secret, "q3-budget-plan.md")], kb="finance")
    follow(rig, folder)
    out = rig.engine.sync.run("handbook")
    assert out.report is not None
    (refusal,) = out.report.refused
    assert refusal.path == "safety/boilers.md"
    assert "q3-budget-plan" not in refusal.reason and "finance" not in refusal.reason, refusal.reason
    assert "another knowledge base" in refusal.reason
