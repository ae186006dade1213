"""pytest's temporary folders in memory (``/dev/shm``) where the machine has room for them, not on the disk (a
pytest plugin the root conftest loads).

What a test of the stores waits for is mostly the disk: SQLite syncs its WAL and the journal-mode switch of each
of an engine's seven databases, Chroma syncs its own, and each sync waits for the disk. On a tmpfs a sync returns
at once; the databases, files and formats are the same, so the tests read and write exactly what they did
(only a power cut could tell the two apart, and no test makes one). What it saves depends on who else uses the
disk: on a 2-core machine where other processes wrote, an engine's build took 0.2 to 0.5 s on the disk and 0.05 s
in memory, and a group of ingest and sync test files a third to a half less time; with the disk quiet, about a
tenth less.

A root given with ``--basetemp`` or ``PYTEST_DEBUG_TEMPROOT`` (pytest's own override of the system's temporary
folder) is kept, and the disk is kept where ``/dev/shm`` is missing or short of room (a container's is often
64 MB). pyproject.toml keeps only failed tests' folders (``tmp_path_retention_policy``), so memory holds no more
than the run in progress and the failures to look into.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

MEMORY_ROOT = Path("/dev/shm")
ROOM_NEEDED = 4 << 30  # bytes free; 59 ingest and sync tests wrote 42 MB, the 3,000 tests of a run far less each


def pytest_configure(config: pytest.Config) -> None:
    # xdist's workers are handed their folders under the controller's (``workerinput``): only it picks the root.
    if config.option.basetemp or os.environ.get("PYTEST_DEBUG_TEMPROOT") or hasattr(config, "workerinput"):
        return
    try:
        room = shutil.disk_usage(MEMORY_ROOT).free
    except OSError:
        return  # no /dev/shm: the system's temporary folder, as before
    if room >= ROOM_NEEDED and os.access(MEMORY_ROOT, os.W_OK | os.X_OK):
        # Read by pytest when it first makes a temporary folder, which is after this hook; the processes the tests
        # start inherit it, and only a pytest among them would read it.
        os.environ["PYTEST_DEBUG_TEMPROOT"] = str(MEMORY_ROOT)
