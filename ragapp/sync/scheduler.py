"""The background thread that runs syncs: each source on its interval, soon after its files change (debounced),
and whenever asked. One thread: syncs of one replica run one after another, off every request's path."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ragapp.config import SyncSettings
from ragapp.sync.runner import RunOutcome
from ragapp.sync.sources import Source
from ragapp.sync.watcher import FolderWatcher

log = logging.getLogger(__name__)

TICK_S = 1.0  # how often the thread looks at the sources (added, removed, paused elsewhere)


class Scheduler:
    """``run(name, stop)`` syncs one source; ``sources()`` lists them (read every tick: another replica may add,
    pause or remove one). With ``settings.enabled`` off only requested syncs run."""

    def __init__(
        self,
        run: Callable[[str, threading.Event], RunOutcome],
        sources: Callable[[], list[Source]],
        settings: SyncSettings,
    ) -> None:
        self._run = run
        self._sources = sources
        self._settings = settings
        self._wake = threading.Condition()
        self._stop = threading.Event()
        self._requested: list[str] = []
        self._dirty: dict[str, float] = {}  # source -> monotonic time of its latest file event
        self._last: dict[str, float] = {}  # source -> monotonic time its latest sync here began
        self._thread: threading.Thread | None = None
        self._watcher = FolderWatcher(self._changed)
        self.current: str | None = None  # the source being synced now

    def start(self) -> None:
        """Start the thread (once; later calls do nothing)."""
        with self._wake:
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(target=self._loop, name="ragapp-sync", daemon=True)
                self._thread.start()

    def request(self, name: str) -> None:
        """Sync ``name`` as soon as the thread is free."""
        self.start()
        with self._wake:
            if name not in self._requested:
                self._requested.append(name)
            self._wake.notify()

    def _changed(self, name: str) -> None:
        with self._wake:
            self._dirty[name] = time.monotonic()
            self._wake.notify()

    def _due(self, sources: list[Source]) -> str | None:
        with self._wake:
            if self._requested:
                return self._requested.pop(0)
        if not self._settings.enabled:
            return None
        now = time.monotonic()
        for source in sources:
            if source.paused:
                continue
            quiet = self._dirty.get(source.name)
            if quiet is not None and now - quiet >= self._settings.debounce_s:
                return source.name
            last = self._last.get(source.name)
            if last is None or now - last >= source.interval_s:
                return source.name
        return None

    def _follow(self, sources: list[Source]) -> None:
        """Watch the folders of ``sources``; a failure here only costs the events, never the syncs."""
        if not self._settings.enabled:
            return
        try:
            self._watcher.follow({s.name: Path(s.location) for s in sources if s.kind == "folder" and not s.paused})
        except Exception:
            log.exception("sync scheduler: could not watch the followed folders; they sync on their intervals")

    def _loop(self) -> None:
        """One source at a time, for ever: whatever one source does (a tree too deep, git hanging, an error
        nobody foresaw) is caught and recorded on it, and the loop goes on to the next."""
        while not self._stop.is_set():
            try:
                sources = self._sources()
            except Exception:  # the database may be briefly away: try again next tick
                log.exception("sync scheduler: could not read the sources")
                sources = None
            name = None
            if sources is not None:
                self._follow(sources)
                name = self._due(sources)
            if name is None:
                with self._wake:
                    self._wake.wait(TICK_S)
                continue
            with self._wake:
                self._dirty.pop(name, None)  # events from now on make another sync
            self._last[name] = time.monotonic()
            self.current = name
            try:
                self._run(name, self._stop)
            except Exception:
                log.exception("sync of %s failed", name)
            finally:
                self.current = None

    def close(self) -> None:
        """Stop the thread (a sync under way stops after its current batch; a git command, at once) and the watcher."""
        self._stop.set()
        with self._wake:
            self._wake.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout=60)
        self._watcher.close()
