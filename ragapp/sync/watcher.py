"""File-system events of followed folders (watchdog): a change marks its source for a sync soon."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


class FolderWatcher:
    """Watches folders, calling ``changed(source name)`` on any event under one (``.git`` left out), and once
    when its watch begins. Each folder is watched recursively; a folder that cannot be watched (gone, over the
    system's inotify limit, or nested too deep for watchdog's recursive walk) is logged once and synced on its
    schedule only."""

    def __init__(self, changed: Callable[[str], None]) -> None:
        self._changed = changed
        self._observer: Any = None
        self._watches: dict[str, tuple[Path, Any]] = {}  # source name -> (folder, watchdog's watch; None: failed)

    def follow(self, folders: Mapping[str, Path]) -> None:
        """Watch exactly ``folders`` (source name -> folder) from now on."""
        for name in [n for n, (root, _w) in self._watches.items() if folders.get(n) != root]:
            _root, watch = self._watches.pop(name)
            if watch is not None:
                self._observer.unschedule(watch)
        for name, root in folders.items():
            if name not in self._watches:
                self._watch(name, root)

    def _watch(self, name: str, root: Path) -> None:
        from watchdog.events import FileSystemEvent, FileSystemEventHandler
        from watchdog.observers import Observer

        changed = self._changed

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.event_type in ("opened", "closed_no_write"):
                    return  # reading a file (the sync itself does) changes nothing
                path = str(event.src_path)
                if "/.git/" not in path and not path.endswith("/.git"):
                    changed(name)

        if self._observer is None:
            self._observer = Observer()
            self._observer.daemon = True
            self._observer.start()
        try:
            self._watches[name] = (root, self._observer.schedule(Handler(), str(root), recursive=True))
        except Exception as exc:  # OSError, or RecursionError from watchdog's os.walk of a very deep tree
            self._watches[name] = (root, None)  # not tried again every tick: only when its folder changes
            log.warning("not watching %s for source %s (%r): it is synced on its schedule only", root, name, exc)
            return
        # A file written after the folder's last sync but before this watch began made no event: count the
        # watch's start as a change, so a sync after it sees that file (at start-up, the first sync does).
        changed(name)

    def close(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=10)
            self._observer = None
        self._watches.clear()
