"""The background worker that enriches knowledge bases: every registered step (``ragapp.enrich.STEPS``) over
every base, a batch at a time.

The steps run in the order they registered, each finishing a base before the next starts on it: ``vectors``
first (``ragapp.enrich.vectors``, registered by this module's import and listed first in ``build.BUILTIN_MODULES``)
so a base becomes searchable by meaning as early as it can; later steps (the questions written for each chunk)
after. The runner knows no step by name.

What is to do is asked of each step (``pending``), never kept in a queue: a restart, a replica taking over, a
deleted document or a new upload all simply change what the stores hold. One replica at a time works on a base
(a lease in the catalog's database, ``EnrichState``); a base can be paused and resumed (kept there too, so a
pause survives a restart); and before each batch the worker waits while a question is being answered: answers
first, the model and the two cores are theirs. A batch is ``enrich.batch`` chunks, or fewer where a step says so
with a ``batch`` attribute of its own (a step that calls the model, seconds a chunk, keeps its batches short so
that an answer never waits long behind one).
"""

from __future__ import annotations

import inspect
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence

import ragapp.enrich.vectors as _vectors  # noqa: F401  (registers "vectors" first: it runs before the others)
from ragapp.config import EnrichSettings
from ragapp.core.types import Scope
from ragapp.enrich import STEPS, EnrichStep
from ragapp.enrich.progress import KbProgress, StepProgress
from ragapp.enrich.state import EnrichState
from ragapp.ingest.knowledge_store import KnowledgeStore

log = logging.getLogger(__name__)

ANSWER_POLL_S = 0.2  # how often a worker waiting for answers looks again
PACE_WEIGHT = 0.3  # a new batch's share in the pace shown (the rest: the batches before it)


def build_steps(parts: Mapping[str, object]) -> list[EnrichStep]:
    """Every registered step, in its ``order`` (registration order among equals: imports decide registration,
    so it is no order to rely on), each factory given the parts it declares by name (``store``, ``settings``,
    ``llm``, ``embedder``, ``reranker``)."""
    steps = []
    for name in STEPS.in_order():
        factory = STEPS.get(name)
        wanted = inspect.signature(factory).parameters
        steps.append(factory(**{k: parts[k] for k in wanted if k in parts}))
    return sorted(steps, key=lambda step: step.order)


def in_background(settings: EnrichSettings, kb: str) -> bool:
    """``kb`` is enriched in the background (else an upload into it is indexed inline)."""
    return settings.background and (not settings.kbs or kb in settings.kbs)


class EnrichRunner:
    """Walks ``steps`` over the bases enriched in the background; ``answering()`` says a question is being
    answered now. Nothing runs until ``start``, and nothing at all with ``settings.background`` off."""

    def __init__(
        self,
        store: KnowledgeStore,
        state: EnrichState,
        settings: EnrichSettings,
        steps: Sequence[EnrichStep],
        answering: Callable[[], bool] = lambda: False,
    ) -> None:
        self._store = store
        self._state = state
        self._settings = settings
        self.steps = tuple(steps)
        self._answering = answering
        self._holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._wake = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._woken = True
        self._walked_at = -1  # the catalog version of the last walk that found nothing left to do
        self._indexing: set[str] = set()  # the bases with work left, as the last walk (or an upload) saw them
        self._stored: set[str] = set()  # the bases stored into since the walk under way began
        self._pace: dict[tuple[str, str], float] = {}

    def background(self, kb: str) -> bool:
        """``kb`` is enriched here in the background (else an upload into it is indexed inline)."""
        return in_background(self._settings, kb)

    # -- lifecycle --------------------------------------------------------------------------------

    def start(self) -> EnrichRunner:
        """Start the worker (once; with background enrichment off, never)."""
        with self._wake:
            if self._settings.background and self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(target=self._loop, name="ragapp-enrich", daemon=True)
                self._thread.start()
        return self

    def close(self) -> None:
        """Stop the worker after the batch under way."""
        self._stop.set()
        with self._wake:
            self._wake.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout=60)

    def wake(self, kb: str | None = None) -> None:
        """Look for work now (after an upload into ``kb``, which counts as being indexed from now on)."""
        with self._wake:
            if kb is not None and self.background(kb):
                self._indexing.add(kb)
                self._stored.add(kb)
            self._woken = True
            self._wake.notify_all()

    # -- what the facet asks ------------------------------------------------------------------------

    def progress(self, kb: str) -> KbProgress:
        """Each step's progress over ``kb``, counted from the stores now."""
        total = next((b.chunks for b in self._store.catalog.knowledge_bases() if b.name == kb), 0)
        kept = self._state.pace(kb)
        steps = []
        for step in self.steps:
            left = len(step.pending(self._store, kb)) if total else 0
            pace = self._pace.get((kb, step.name), kept.get(step.name, 0.0))
            steps.append(StepProgress(step.name, max(0, total - left), total, pace))
        return KbProgress(kb, self._state.is_paused(kb), tuple(steps), self.background(kb))

    def indexing(self, kbs: Scope = None) -> list[str]:
        """The bases of ``kbs`` (None: all) with work left, as last seen (no store is read)."""
        return sorted(k for k in self._indexing if kbs is None or k in kbs)

    def pause(self, kb: str) -> None:
        self._state.set_paused(kb, True)

    def resume(self, kb: str) -> None:
        self._state.set_paused(kb, False)
        self.wake(kb)

    def forget(self, chunk_ids: Iterable[str]) -> None:
        """Every step drops its output for ``chunk_ids``, chunks no longer in the catalog."""
        gone = list(chunk_ids)
        if gone:
            for step in self.steps:
                step.forget(self._store, gone)

    # -- the work ---------------------------------------------------------------------------------

    def finish(self, kb: str) -> bool:
        """Work on ``kb`` in this thread until it is done, paused, another replica holds it, or the runner is
        closed; True when every step is done. A chunk a step was given once and did not do (a step's bug, a
        model that failed) is not given again until the next walk: it never holds the worker in a loop."""
        if not self._state.take(kb, self._holder, self._settings.lease_s):
            return False
        try:
            for step in self.steps:
                todo = step.pending(self._store, kb)
                tried: set[str] = set()
                while todo:
                    if self._stop.is_set() or self._state.is_paused(kb):
                        return False
                    self._wait_for_answers()
                    size = getattr(step, "batch", None) or self._settings.batch  # a slow step may ask for fewer
                    batch, todo = todo[:size], todo[size:]
                    tried.update(batch)
                    began = time.monotonic()
                    done = step.run(self._store, batch)
                    self._measured(kb, step.name, done, time.monotonic() - began)
                    if not self._state.renew(kb, self._holder, self._settings.lease_s):
                        log.info("enrichment of %s: the lease was taken over by another replica", kb)
                        return False
                    if not todo:  # uploads meanwhile: the step goes on with them before the next starts
                        todo = [cid for cid in step.pending(self._store, kb) if cid not in tried]
            return not any(step.pending(self._store, kb) for step in self.steps)
        finally:
            self._state.release(kb, self._holder)

    def _wait_for_answers(self) -> None:
        """Answers first: wait (at most ``answer_wait_s``) while a question is being answered."""
        deadline = time.monotonic() + self._settings.answer_wait_s
        while self._answering() and time.monotonic() < deadline and not self._stop.is_set():
            self._stop.wait(ANSWER_POLL_S)

    def _measured(self, kb: str, step: str, done: int, seconds: float) -> None:
        if done <= 0 or seconds <= 0:
            return
        now = done / seconds * 60
        before = self._pace.get((kb, step))
        pace = now if before is None else before + PACE_WEIGHT * (now - before)
        self._pace[(kb, step)] = pace
        try:
            self._state.set_pace(kb, step, pace)
        except Exception:  # only the pace another replica shows is older
            log.warning("could not record the enrichment pace of %s", kb, exc_info=True)

    def _walk(self) -> None:
        """One pass over the bases: each one with work, not paused and not held elsewhere, until done."""
        version = self._store.catalog.version
        with self._wake:
            if not self._woken and version == self._walked_at and not self._indexing:
                return
            self._woken = False
            self._stored = set()
        paused = self._state.paused()
        left = set()
        for base in self._store.catalog.knowledge_bases():
            kb = base.name
            if self._stop.is_set() or not self.background(kb):
                continue
            if kb not in paused and any(step.pending(self._store, kb) for step in self.steps):
                self.finish(kb)
            if any(step.pending(self._store, kb) for step in self.steps):
                left.add(kb)
        with self._wake:
            self._indexing = left | self._stored  # a store during the walk counts until the next walk
            self._walked_at = version

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self._walk()
            except Exception:  # the database away for a moment, a step's bug: try again at the next tick
                log.exception("background enrichment failed; trying again")
            with self._wake:
                if not self._woken and not self._stop.is_set():
                    self._wake.wait(self._settings.tick_s)
