"""How a test run shares the machine's cores among pytest-xdist's workers (the root conftest imports its hooks).

``make test`` runs ``pytest -n auto``: one worker per core the process may use, fewer where memory is short (each
worker loads its own embedder, reranker and, for some tests, the local LLM). Each worker's models then get the
cores divided by the number of workers (``MODEL_THREADS``): two workers on two cores run one thread each, as two
models with two threads each on two cores would wait on each other's spinning threads (llama.cpp, OpenMP).

xdist sets ``PYTEST_XDIST_WORKER_COUNT`` in a worker's environment before it reads any conftest, so the count is
known here at import time, before a model runtime reads ``OMP_NUM_THREADS``.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import pytest
from xdist.scheduler import LoadFileScheduling

GIB = 1024**3
WORKER_MEMORY = 4 * GIB  # a worker's peak with the embedder, the reranker, the 1.5B GGUF and Chromium pages


def usable_cores() -> int:
    """The CPUs this process may run on (a container's or taskset's limit, not the host's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _workers_in_run() -> int:
    return int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)


MODEL_THREADS = max(1, usable_cores() // _workers_in_run())
"""CPU threads for each model of this test process: the embedder, the reranker (torch) and llama.cpp."""


def _available_memory() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:  # not Linux: the cores alone decide
        pass
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: a worker per usable core, as many as the memory holds (at least one); the
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` variable, when set, decides instead (xdist reads it)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    available = _available_memory()
    cores = usable_cores()
    return cores if available is None else max(1, min(cores, available // WORKER_MEMORY))


# The files whose tests run the packaged local model (llama.cpp) for real: the served app at ``app_url`` (the
# ``page`` fixture's: built once per worker, demo and all, its first act the classifier's long prompt read), the
# upload-routing app and the engines that route, answer or call tools with it. xdist hands them to one worker as
# one unit of work (``FileUnits``), so that worker builds ``app_url`` once, and the model keeps the demo tree's
# candidate list read (``SharedModels``) for every one of them; spread over two workers, each paid for both.
LOCAL_MODEL_FILES = frozenset({
    "tests/e2e/test_browser.py",
    "tests/e2e/test_agent_mode.py",
    "tests/e2e/test_clarify.py",
    "tests/e2e/test_intents_tab.py",
    "tests/e2e/test_traces_tab.py",
    "tests/e2e/test_upload_routing_browser.py",
    "tests/integration/test_workflow_local.py",
    "tests/integration/test_agent_local.py",
    "tests/integration/test_agent_tool_groups_local.py",
})  # fmt: skip
LOCAL_MODEL = "the packaged local model's files"

# The units of work that take longest (`make test-slow`'s .cache/test-durations-slow.json, "files"), longest
# first: collected first, they start first, on different workers, and the short ones fill in around them instead
# of one long file starting last while the other worker waits (the slow run's workers were once busy 768 s and
# 536 s). The other units follow as xdist orders them itself, most tests first.
LONGEST_FIRST = (
    LOCAL_MODEL,
    "tests/cluster/test_cluster.py",
    "tests/e2e/test_one_language_browser.py",
    "tests/hostile/test_hostile_large_files.py",
    "tests/e2e/test_language_browser.py",
    "tests/e2e/test_admin_browser.py",
    "tests/hostile/test_hostile_api.py",
)


def work_unit(nodeid: str) -> str:
    """The unit of xdist's work a test belongs to: its file, or ``LOCAL_MODEL`` for ``LOCAL_MODEL_FILES``."""
    path = nodeid.split("::", 1)[0]
    return LOCAL_MODEL if path in LOCAL_MODEL_FILES else path


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The ``LONGEST_FIRST`` units first, in that order, then the others by their number of tests (most first);
    within a unit every test keeps its place. ``FileUnits`` hands the units out in this order."""
    rank = {unit: i for i, unit in enumerate(LONGEST_FIRST)}
    sizes = Counter(work_unit(item.nodeid) for item in items)

    def order(item: pytest.Item) -> tuple[int, int]:
        unit = work_unit(item.nodeid)
        return rank.get(unit, len(rank)), -sizes[unit]

    items.sort(key=order)  # a stable sort


class FileUnits(LoadFileScheduling):
    """``--dist loadfile`` with the local model's files as one unit (``work_unit``)."""

    def _split_scope(self, nodeid: str) -> str:
        return work_unit(nodeid)

    def _reschedule(self, node: Any) -> None:
        """A worker is given its next unit once it has one test left, not three as in xdist: with units of a test
        or two, a worker held three units ahead, which the other, idle at the end of the run, could not take. One
        is needed: a worker starts a test once it knows the next one (or that none is coming)."""
        if node.shutting_down or not self.workqueue or self._pending_of(self.assigned_work[node]) <= 1:
            super()._reschedule(node)


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> LoadFileScheduling | None:
    """``--dist loadfile``: ``FileUnits``, handing the units out in the collection's order (xdist's own reorder,
    most tests first, would put a one-test file that takes minutes last). Any other mode: xdist's own."""
    if config.getvalue("dist") != "loadfile":
        return None
    config.option.loadscopereorder = False
    return FileUnits(config, log)
