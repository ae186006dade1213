"""The bounded, named thread pools that model calls run on.

A model call runs on a worker thread so that the request waiting for it can give up when its time budget runs
out (``stream_within``): a backend that hangs must not hold the request. The request goes on at once, but the
worker stays busy until the backend returns (an HTTP backend within its own timeout, ``llm.timeout_s``; the
local model at its next token, or when its queue gives up). The pools are sized for that:

- ``MODEL_CALLS`` streams the model's replies. 64 workers: the calls the app serves at once (the UI runs 4 chats
  at a time, the HTTP API up to 40 requests) with room for calls left hung after a timeout. A call that finds
  every worker busy waits for one, but its budget keeps running: it times out as usual, never blocks forever.
- ``STEPS`` runs the steps before the answer that wait for the model (rewrite, routing, translation) while the
  request reports their place in the model's queue (``run_observed``). One step per request at a time, and a
  step never waits longer than its own model calls' budgets. A pool of its own: a step waits for a model call,
  so steps filling the model pool could leave their calls no worker.

Nothing starts at import: a pool starts its threads on first use. ``Engine.close`` closes them
(``close_pools``); a pool used again afterwards (another engine in the same process) starts afresh.
"""

from __future__ import annotations

import contextvars
import logging
import queue
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

Job = Callable[[], object] | None  # None: the worker ends


class WorkerPool:
    """A bounded pool of daemon threads named ``<name>_<n>``, started as work needs them.

    Ours, not ``concurrent.futures.ThreadPoolExecutor``: its workers are joined when the interpreter exits, so a
    backend call left hung after its request gave up would keep the process from ending."""

    def __init__(self, name: str, size: int) -> None:
        self.name = name
        self.size = size
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        self._threads = 0
        self._idle = 0  # workers waiting for a job and not yet promised one
        self._waiting = 0  # jobs handed in while every worker was busy, not yet promised one
        self._started = 0  # for the threads' names

    def run(self, work: Callable[[], None]) -> None:
        """Run ``work`` on a worker (later, if every one is busy), in a copy of the caller's context: a model
        call inside a traced request reports to that request's trace. ``work`` handles its own errors."""
        context = contextvars.copy_context()
        with self._lock:
            self._jobs.put(lambda: context.run(work))
            if self._idle > 0:
                self._idle -= 1
            elif self._threads < self.size:
                self._threads += 1
                self._started += 1
                name = f"{self.name}_{self._started}"
                threading.Thread(target=self._work, args=(self._jobs,), name=name, daemon=True).start()
            else:
                self._waiting += 1

    def _work(self, jobs: queue.SimpleQueue[Job]) -> None:
        while (job := jobs.get()) is not None:
            try:
                job()
            except Exception:  # work handles its own errors; this is the last net, so the worker lives on
                log.exception("%s: a job failed", threading.current_thread().name)
            with self._lock:
                if jobs is not self._jobs:  # closed: end once the jobs handed in before are done
                    continue
                if self._waiting > 0:
                    self._waiting -= 1  # this worker takes a job that waited
                else:
                    self._idle += 1

    def close(self) -> None:
        """Take no more work here: what is running or waiting still runs, then the threads end. Work handed
        in later starts new threads."""
        with self._lock:
            jobs, threads = self._jobs, self._threads
            self._jobs, self._threads, self._idle, self._waiting = queue.SimpleQueue(), 0, 0, 0
        for _ in range(threads):
            jobs.put(None)


MODEL_CALLS = WorkerPool("ragapp-model", 64)
STEPS = WorkerPool("ragapp-step", 32)


def close_pools() -> None:
    """Close both pools (``Engine.close``)."""
    MODEL_CALLS.close()
    STEPS.close()
