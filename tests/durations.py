"""``--durations-json=PATH``: every test's cost, kept in a file after the run (a pytest plugin the root conftest
loads; give the path after "=": with ``-n``, a path after a space was read as the tests to run). ``make test``
writes ``.cache/test-durations.json`` and ``make test-slow`` ``.cache/test-durations-slow.json`` (docs/development.md,
"What a test costs").

pytest's own ``--durations=N`` prints the slowest N to the terminal and forgets them; this keeps them all, with
each phase apart (a costly fixture shows in ``setup``, not ``call``) and the total of each file, slowest first.

Under pytest-xdist (``make test`` runs ``-n auto``) the controller writes the file: every worker's reports reach
it, each naming its worker, so the file also holds each worker's busy seconds (``workers``): the sum of its tests'
seconds, against the run's ``wall_s``, shows how evenly the files were shared out.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--durations-json",
        metavar="PATH",
        default=None,
        help="write every test's setup, call and teardown seconds (and each file's total) to PATH as JSON",
    )


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("--durations-json")
    if path and not hasattr(config, "workerinput"):  # under xdist the controller sees every report and writes
        config.pluginmanager.register(DurationsFile(Path(path), config), "durations-json")


class DurationsFile:
    """Collects each report's seconds by test and phase; writes them when the session ends."""

    def __init__(self, path: Path, config: pytest.Config) -> None:
        self._path = path
        self._config = config
        self._phases: dict[str, dict[str, float]] = defaultdict(dict)
        self._busy: dict[str, float] = defaultdict(float)
        self._started = time.monotonic()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._phases[report.nodeid][report.when] = round(report.duration, 3)
        self._busy[_worker(report)] += report.duration

    def pytest_sessionfinish(self, exitstatus: int) -> None:
        tests = sorted(
            ({"test": nodeid, "total": round(sum(p.values()), 3), **p} for nodeid, p in self._phases.items()),
            key=lambda t: -float(t["total"]),
        )
        files: dict[str, float] = defaultdict(float)
        for test in tests:
            files[str(test["test"]).split("::", 1)[0]] += float(test["total"])
        record: dict[str, Any] = {
            "args": list(self._config.invocation_params.args),
            "exit_status": int(exitstatus),
            "wall_s": round(time.monotonic() - self._started, 1),
            "tests": len(tests),
            "workers": {worker: round(busy, 1) for worker, busy in sorted(self._busy.items())},
            "files": dict(sorted(((f, round(s, 2)) for f, s in files.items()), key=lambda fs: -fs[1])),
            "slowest": tests,
        }
        self._path.parent.mkdir(parents=True, exist_ok=True)
        self._path.write_text(json.dumps(record, indent=1) + "\n", "utf-8")


def _worker(report: pytest.TestReport) -> str:
    """The xdist worker that ran the test ("gw0", "gw1", ...), or "main" in a run without workers."""
    node = getattr(report, "node", None)  # xdist's controller puts the worker on each report it receives
    return str(getattr(getattr(node, "gateway", None), "id", None) or "main")
