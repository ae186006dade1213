"""The ``--durations-json`` file (tests/durations.py) of a run on two xdist workers, as ``make test`` runs: every
test of both workers in one file, and each worker's busy seconds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

SAMPLE = """
import time

import pytest


@pytest.fixture
def slow_setup():
    time.sleep(0.05)


@pytest.mark.parametrize("n", range(8))
def test_sample(slow_setup, n):
    time.sleep(0.05)
"""


def _run(tmp_path: Path, *options: str) -> dict:
    (tmp_path / "test_sample.py").write_text(SAMPLE, "utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", "utf-8")
    out = tmp_path / "durations.json"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.durations",
         "-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path), *options,
         "--durations-json", str(out), str(tmp_path / "test_sample.py")],
        cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(json.loads(out.read_text("utf-8")))


def test_two_workers_write_one_file_with_every_test_and_each_workers_seconds(tmp_path: Path) -> None:
    record = _run(tmp_path, "-n", "2")
    assert record["tests"] == 8
    assert {t["test"] for t in record["slowest"]} == {f"test_sample.py::test_sample[{n}]" for n in range(8)}
    assert all({"setup", "call", "teardown"} <= t.keys() and t["setup"] >= 0.04 for t in record["slowest"])
    assert set(record["workers"]) == {"gw0", "gw1"}, record["workers"]
    assert abs(sum(record["workers"].values()) - sum(t["total"] for t in record["slowest"])) < 0.2


def test_a_run_without_workers_is_one_main_worker(tmp_path: Path) -> None:
    record = _run(tmp_path)
    assert record["tests"] == 8 and list(record["workers"]) == ["main"]
