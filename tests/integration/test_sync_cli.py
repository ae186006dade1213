"""``python -m ragapp.sync``: list, add, run, show, pause, resume, remove, with their messages and exit codes,
on a real state folder (the app's settings, as an operator's shell has them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.config import Settings
from ragapp.sync.cli import main
from tests.integration.sync_helpers import aged, text, write

pytestmark = pytest.mark.integration


@pytest.fixture
def cli(make_settings: Callable[..., Settings], capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str]]:
    settings = make_settings(sync={"enabled": False, "settle_s": 0.0})

    def run(*argv: str) -> tuple[int, str]:
        code = main(list(argv), settings)
        out = capsys.readouterr()
        return code, out.out + out.err

    return run


def test_the_command_line_follows_a_folder(cli: Callable[..., tuple[int, str]], tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    for topic in ("pumps", "valves"):
        aged(write(folder, f"{topic}.md", text(topic)))
    code, out = cli()
    assert code == 0 and "No sources yet" in out
    code, out = cli("add", "docs", "--folder", str(folder), "--kb", "docs", "--exclude", "*.tmp")
    assert code == 0 and "added docs: folder" in out
    code, out = cli("show", "docs")
    assert code == 0 and "never synced yet" in out
    code, out = cli("run", "docs")
    assert code == 0 and "2 added" in out and "pumps.md" in out
    (folder / "valves.md").unlink()
    code, out = cli("--json", "run", "docs")
    assert code == 0 and json.loads(out)["report"]["removed"] == ["valves.md"]
    code, out = cli("--json")
    (listed,) = json.loads(out)
    assert listed["state"] == "idle" and listed["source"]["kb"] == "docs" and listed["report"]["removed"]
    code, out = cli("pause", "docs")
    assert code == 0 and "paused" in out
    code, out = cli("run", "docs")
    assert code == 3 and "it is paused" in out
    assert cli("resume", "docs")[0] == 0
    code, out = cli("remove", "docs", "--delete-documents")
    assert code == 0 and "its 1 documents" in out
    code, out = cli("run", "docs")
    assert code == 2 and out.startswith("error: No source named 'docs'")


def test_bad_requests_say_why(cli: Callable[..., tuple[int, str]], tmp_path: Path) -> None:
    code, out = cli("add", "docs", "--folder", "relative", "--kb", "docs")
    assert code == 2 and "give its absolute path" in out
    code, out = cli("pause", "nothing")
    assert code == 2 and "No source named 'nothing'" in out
    cli("add", "repo", "--git", str(tmp_path / "missing"), "--kb", "repo")
    code, out = cli("run", "repo")
    assert code == 1 and "failed: git clone failed" in out


def test_python_dash_m_reads_the_app_settings(tmp_path: Path, make_settings: Callable[..., Any]) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGAPP_")}
    env |= {"RAGAPP_PATHS__STATE_DIR": str(tmp_path / "state"), "PYTHONPATH": str(Path(__file__).parents[2])}
    (tmp_path / "docs").mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "ragapp.sync", "add", "d", "--folder", str(tmp_path / "docs"), "--kb", "d"],
        env=env, capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    listed = subprocess.run(
        [sys.executable, "-m", "ragapp.sync"], env=env, capture_output=True, text=True, check=False, timeout=120
    )
    assert listed.returncode == 0
    assert listed.stdout.startswith(f"d  folder {tmp_path / 'docs'} -> d  [new]  never synced")
