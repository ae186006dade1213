"""Run a hostile file's parse in a child process held to a time and a memory limit.

A parse that runs away must fail its test, not take the machine down with it: the child is watched from here
(its resident memory read from ``/proc`` every few milliseconds) and killed the moment it passes either limit.
These limits are the one place a test asserts time or memory: they are ceilings a user's upload must stay
under (issue 33: no file stalls the app), not measurements.

Memory is read from ``/proc`` (Linux, as CI runs); elsewhere only the child's own high-water mark at the end is
checked. Children are forked from a ``forkserver`` that has already imported the parsers, so a case costs a fork, not a
Python start. The work must be a module-level function (it is pickled by name) and its result picklable.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

T = TypeVar("T")
WITHIN_S = 60.0  # no file may keep the app busier than this
MAX_MB = 2048  # nor take more memory than this (peak resident set of the process doing the work)
_POLL_S = 0.005
_context = multiprocessing.get_context("forkserver")
# One forkserver serves a test process, and the last preload list set before it starts is the one it imports: every
# module a test forks from is listed here (test_crash_ingest.py's driver builds the whole engine).
_context.set_forkserver_preload(["ragapp.ingest.parsing", "ragapp.ingest.boilerplate", "tests.hostile.crash_driver"])


def _resident_mb(pid: int, field: str = "VmRSS") -> float:
    """``field`` of ``/proc/<pid>/status`` in MB (0 when the process is gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _child(work: Callable[..., Any], args: tuple[Any, ...], out: Connection) -> None:
    try:
        value: tuple[str, Any] = ("value", work(*args))
    except BaseException as exc:  # handed to the parent, which raises it in the test
        exc.add_note("in the child:\n" + traceback.format_exc())
        value = ("error", exc)
    # Its own high-water mark; where there is no /proc (macOS), getrusage's (bytes there, not KB).
    peak = _resident_mb(os.getpid(), "VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
    out.send((*value, peak))
    out.close()


def forked(target: Callable[..., Any], *args: Any) -> multiprocessing.Process:
    """``target(*args)`` started in a child forked from the forkserver (a module-level function); join it to wait."""
    child = _context.Process(target=target, args=args, daemon=True)
    child.start()
    return child


def bounded(work: Callable[..., T], *args: Any, within_s: float = WITHIN_S, max_mb: float = MAX_MB) -> T:
    """``work(*args)`` run in a child; its value, or its exception raised here. Fails the test when the child
    runs past ``within_s`` seconds or its resident memory passes ``max_mb`` (the child is killed at once)."""
    receive, send = _context.Pipe(duplex=False)
    child = _context.Process(target=_child, args=(work, args, send), daemon=True)
    start = time.monotonic()
    child.start()
    send.close()
    peak = 0.0
    try:
        while not receive.poll(_POLL_S):
            peak = max(peak, _resident_mb(child.pid or 0))
            assert peak <= max_mb, f"took over {max_mb:,.0f} MB of memory (killed at {peak:,.0f} MB)"
            elapsed = time.monotonic() - start
            assert elapsed <= within_s, f"still running after {within_s:.0f} s (killed)"
            assert child.is_alive() or receive.poll(), f"the child died (exit code {child.exitcode})"
        kind, value, high_water = receive.recv()
    finally:
        child.kill()
        child.join()
    elapsed = time.monotonic() - start
    assert elapsed <= within_s, f"took {elapsed:.0f} s, over the {within_s:.0f} s limit"
    assert high_water <= max_mb, f"took {high_water:,.0f} MB of memory, over the {max_mb:,.0f} MB limit"
    if kind == "error":
        raise value
    return value  # type: ignore[no-any-return]
