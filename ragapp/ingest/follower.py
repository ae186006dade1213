"""Replicas over one shared catalog: another replica's upload or delete moves the catalog's version, and this
replica's keyword index (bm25s, in memory) must follow. A thread polls the version and rebuilds when it moved.

Polling, not PostgreSQL's LISTEN/NOTIFY: a version read is one indexed row every few seconds, works the same
through any connection pooler, and a missed notification can never leave a replica stale for good. The poll
only saves a search the wait: every search reads the catalog's version anyway and catches up first when it
moved (``KnowledgeStore.catch_up``), so a write that has returned is seen by the next search on any replica.
"""

from __future__ import annotations

import logging
import threading

from ragapp.ingest.pipeline import KnowledgeStore

log = logging.getLogger(__name__)


class CatalogFollower:
    def __init__(self, store: KnowledgeStore, interval_s: float) -> None:
        self._store = store
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="catalog-follower", daemon=True)

    def start(self) -> None:
        """Start polling; a second call (or one after ``close``) does nothing."""
        if not self._thread.is_alive() and not self._stop.is_set():
            self._thread.start()

    def check(self) -> bool:
        """Rebuild the keyword index now if the catalog moved; True when it did."""
        before = self._store.keywords.version
        self._store.refresh_keywords()
        return self._store.keywords.version != before

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                if self.check():
                    log.info("keyword index rebuilt: the shared catalog is at version %d", self._store.keywords.version)
            except Exception as exc:  # the database away for a moment: try again at the next tick
                log.warning("could not follow the shared catalog: %s", exc)

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
