"""A knowledge base following a real git repository (built with ``git init`` on tmp_path): commits that add,
change, rename and delete files reach the knowledge base, and only they cost work."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.integration.sync_helpers import commit_all, git, new_repo, text, write

pytestmark = pytest.mark.integration

QUIET = {"sync": {"enabled": False, "settle_s": 0.0}}


def names(rig: Any) -> list[str]:
    return sorted(d.name for d in rig.engine.library.documents() if d.kb == "manual")


def test_commits_reach_the_knowledge_base(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    write(repo, "README.md", text("the manual"))
    write(repo, "guide/install.md", text("installing"))
    write(repo, "guide/upgrade.md", text("upgrading"))
    write(repo, "src/tool.py", "print('not a document type')\n")
    first_commit = commit_all(repo, "first")
    rig = make_engine(**QUIET)
    rig.engine.sync.add("manual", "git", str(repo), "manual", start=False)
    out = rig.engine.sync.run("manual")
    assert out.state == "idle" and out.report is not None, out
    assert out.report.commit == first_commit
    assert names(rig) == ["README.md", "guide/install.md", "guide/upgrade.md"]  # .git and .py left out
    before = {d.name: d.doc_id for d in rig.engine.library.documents()}

    write(repo, "guide/install.md", text("installing, second edition"))
    git(repo, "mv", "guide/upgrade.md", "guide/upgrading.md")
    git(repo, "rm", "--quiet", "README.md")
    write(repo, "guide/faq.md", text("questions"))
    second_commit = commit_all(repo, "second")
    out = rig.engine.sync.run("manual")
    report = out.report
    assert report is not None and report.commit == second_commit
    assert report.updated == ["guide/install.md"] and report.added == ["guide/faq.md"]
    assert report.renamed == [("guide/upgrade.md", "guide/upgrading.md")] and report.removed == ["README.md"]
    assert report.ingested == 2 and report.hashed == 3  # install, faq, the renamed file: nothing else read
    assert names(rig) == ["guide/faq.md", "guide/install.md", "guide/upgrading.md"]
    after = {d.name: d.doc_id for d in rig.engine.library.documents()}
    assert after["guide/upgrading.md"] == before["guide/upgrade.md"]
    assert rig.engine.sync.source("manual").commit == second_commit

    again = rig.engine.sync.run("manual")  # nothing new upstream: nothing done
    assert again.report is not None and (again.report.hashed, again.report.ingested) == (0, 0)


def test_a_branch_is_followed_and_a_missing_one_is_reported(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo", branch="trunk")
    write(repo, "a.md", text("on trunk"))
    commit_all(repo, "trunk")
    git(repo, "checkout", "--quiet", "-b", "release")
    write(repo, "b.md", text("on release"))
    commit_all(repo, "release")
    git(repo, "checkout", "--quiet", "trunk")
    rig = make_engine(**QUIET)
    rig.engine.sync.add("manual", "git", str(repo), "manual", branch="release", start=False)
    assert rig.engine.sync.run("manual").state == "idle"
    assert names(rig) == ["a.md", "b.md"]
    rig.engine.sync.add("other", "git", str(repo), "other", branch="nope", start=False)
    out = rig.engine.sync.run("other")
    assert out.state == "failed" and out.report is not None and "no branch 'nope'" in out.report.error
    said = out.report.error_said  # for the Sources panel, in the page's language
    assert said is not None and said.worded(True) is not None and "没有分支 'nope'" in said.worded(True)


def test_the_default_branch_and_an_unreachable_repository(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo", branch="trunk")
    write(repo, "a.md", text("on trunk"))
    commit_all(repo, "trunk")
    rig = make_engine(**QUIET)
    rig.engine.sync.add("manual", "git", f"file://{repo}", "manual", start=False)
    assert rig.engine.sync.run("manual").state == "idle" and names(rig) == ["a.md"]
    rig.engine.sync.add("gone", "git", str(tmp_path / "no-repo"), "gone", start=False)
    out = rig.engine.sync.run("gone")
    assert out.state == "failed" and out.report is not None and out.report.error.startswith("git clone failed")
