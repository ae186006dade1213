"""How a test run shares the machine's cores among pytest-xdist's workers (the root conftest imports its hook).

``make test`` runs ``pytest -n auto``: one worker per core the process may use, fewer where memory is short (each
worker loads its own embedder, reranker and, for some tests, the local LLM). Each worker's models then get the
cores divided by the number of workers (``MODEL_THREADS``): two workers on two cores run one thread each, as two
models with two threads each on two cores would wait on each other's spinning threads (llama.cpp, OpenMP).

xdist sets ``PYTEST_XDIST_WORKER_COUNT`` in a worker's environment before it reads any conftest, so the count is
known here at import time, before a model runtime reads ``OMP_NUM_THREADS``.
"""

from __future__ import annotations

import os

import pytest

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


# The files that take longest (`make test-slow`'s .cache/test-durations-slow.json, "files"), longest first. xdist's
# loadfile hands files to the workers in collection order, a few each at the start: collected first, these start
# on different workers at once, instead of meeting on one at the end while the other waits (the slow run's workers
# were busy 768 s and 536 s).
LONGEST_FIRST = (
    "tests/integration/test_sync_website.py",
    "tests/e2e/test_upload_routing_browser.py",
    "tests/e2e/test_browser.py",
    "tests/e2e/test_agent_mode.py",
    "tests/cluster/test_cluster.py",
    "tests/integration/test_agent_local.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Collect the ``LONGEST_FIRST`` files first, in that order; every other test keeps its place."""
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))  # a stable sort
