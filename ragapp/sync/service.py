"""Sync as the engine, the HTTP API and the command line use it: the sources, adding and removing them, and
syncing, pausing and resuming one. Access is checked by the engine's facade, not here."""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Sequence
from pathlib import Path

from ragapp.config import Settings, SyncSettings
from ragapp.core.errors import IngestError
from ragapp.core.said import Said
from ragapp.ingest.names import kb_name
from ragapp.ingest.parsing import supported_extensions
from ragapp.ingest.pipeline import Ingestor, KnowledgeStore
from ragapp.store.catalog import Catalog
from ragapp.sync.git import check_location
from ragapp.sync.runner import RunOutcome, SyncRunner
from ragapp.sync.scheduler import Scheduler
from ragapp.sync.sources import KINDS, Source, SourceStatus, SyncError, display_name
from ragapp.sync.state import SyncStore
from ragapp.sync.tree import check_allowed
from ragapp.sync.web_address import Scope

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}")


class SyncService:
    """The sync tables, the runner and the scheduler of one replica. ``start`` opens the tables and, when
    sources exist, the scheduler's thread; ``close`` stops it."""

    def __init__(
        self,
        store: SyncStore,
        runner: SyncRunner,
        ingestor: Ingestor,
        catalog: Catalog,
        settings: SyncSettings,
        state_dir: Path | None = None,
    ) -> None:
        self._state_dir = state_dir
        self._store = store
        self._runner = runner
        self._ingestor = ingestor
        self._catalog = catalog
        self._settings = settings
        self.scheduler = Scheduler(self._runner.run, self._store.sources, settings)

    def start(self, background: bool = True) -> SyncService:
        """Open the tables; with ``background`` and syncing on (``sync.enabled``), start the scheduler (it follows
        the sources another replica adds too)."""
        self._store.start()
        if background and self._settings.enabled:
            self.scheduler.start()
        return self

    def close(self) -> None:
        self.scheduler.close()

    def sources(self) -> list[SourceStatus]:
        return self._store.statuses()

    def status(self, name: str) -> SourceStatus:
        found = next((s for s in self._store.statuses() if s.source.name == name), None)
        if found is None:
            raise SyncError(said=Said("source.unknown_listed", {"name": name}))
        return found

    def add(
        self,
        name: str,
        kind: str,
        location: str,
        kb: str,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        interval_s: float | None = None,
        branch: str = "",
        *,
        background: bool = True,
    ) -> Source:
        """``add_source``, then (with ``background``) its first sync starts in the background."""
        source = add_source(
            self._store, self._settings, name, kind, location, kb, include, exclude, interval_s, branch, self._state_dir
        )
        if background:
            self.scheduler.request(source.name)
        return source

    def run(self, name: str, stop: threading.Event | None = None) -> RunOutcome:
        """Sync ``name`` now, in this thread (the command line, tests); ``request`` starts one in the background."""
        return self._runner.run(name, stop)

    def request(self, name: str) -> None:
        """Sync ``name`` soon, in the background."""
        self.status(name)  # an unknown name is refused now, not logged later
        self.scheduler.request(name)

    def pause(self, name: str) -> None:
        """Stop syncing ``name``: a sync under way stops after its current batch, none starts until ``resume``."""
        if not self._store.set_paused(name, True):
            raise SyncError(said=Said("source.unknown", {"name": name}))

    def resume(self, name: str, start: bool = True) -> None:
        """Sync ``name`` again on its schedule; with ``start``, one sync begins now in the background."""
        if not self._store.set_paused(name, False):
            raise SyncError(said=Said("source.unknown", {"name": name}))
        if start:
            self.scheduler.request(name)

    def remove(self, name: str, delete_documents: bool = False) -> int:
        """Stop following ``name``. Its documents stay (as ordinary documents) unless ``delete_documents``;
        returns how many documents were deleted."""
        source = self._store.source(name)
        if source is None:
            raise SyncError(said=Said("source.unknown", {"name": name}))
        self._store.set_paused(name, True)  # a sync under way stops at its next batch
        deleted = 0
        if delete_documents:
            for row in self._store.files(name).values():
                doc = self._catalog.document(row.doc_id) if row.doc_id else None
                if doc is not None and doc.kb == source.kb and doc.name == display_name(row.rel_path):
                    with contextlib.suppress(IngestError):  # deleted meanwhile
                        self._ingestor.delete(doc.doc_id)
                        deleted += 1
        self._store.remove(name)
        return deleted


def open_sync(store: KnowledgeStore, ingestor: Ingestor, settings: Settings) -> SyncService:
    """The sync service over a knowledge store: its tables in the catalog's database, git copies under the
    state folder. Cheap: nothing is opened until ``start``."""
    runner = SyncRunner(
        SyncStore(store.catalog.database), ingestor, store.catalog, settings.sync,
        settings.paths.state_dir / "sync" / "git", lambda: set(supported_extensions()),
    )  # fmt: skip
    return SyncService(
        SyncStore(store.catalog.database), runner, ingestor, store.catalog, settings.sync, settings.paths.state_dir
    )


def add_source(
    store: SyncStore,
    settings: SyncSettings,
    name: str,
    kind: str,
    location: str,
    kb: str,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    interval_s: float | None = None,
    branch: str = "",
    state_dir: Path | None = None,
) -> Source:
    """Follow a folder, a git repository or a website into knowledge base ``kb`` (recorded; nothing is synced yet).
    A folder holding the app's ``state_dir`` is refused: every sync would change it, and its events start the
    next. A website's location is its start page or its sitemap (``ragapp.sync.web_address.Scope``).

    Raises:
        SyncError: a name, kind, location, pattern or interval that cannot be used (the message says which:
            a folder outside ``sync.allowed_roots``, a git transport not in ``sync.git_protocols``...), a name
            taken, or a knowledge base another source fills already.
    """
    name = name.strip()
    if not _NAME.fullmatch(name):
        raise SyncError(said=Said("source.bad_name", {"name": name}))
    if kind not in KINDS:
        raise SyncError(said=Said("source.unknown_kind", {"kind": kind}))
    try:
        kb = kb_name(kb)
    except IngestError as exc:
        raise SyncError(str(exc), exc.said) from None
    location = location.strip()
    if kind == "folder":
        folder = Path(location).expanduser()
        if not folder.is_absolute() or not folder.is_dir():
            raise SyncError(said=Said("source.not_folder", {"location": location}))
        location = str(folder.resolve())
        check_allowed(Path(location), settings.allowed_roots, location)
        if state_dir is not None and state_dir.resolve().is_relative_to(location):
            raise SyncError(said=Said("source.holds_state", {"location": location, "state": str(state_dir)}))
    elif kind == "web":
        location = Scope.of(location).start  # one spelling of the address (checked: http or https, a host)
    elif not location:
        raise SyncError(said=Said("source.no_git_location"))
    else:
        check_location(location, settings.git_protocols, settings.allowed_roots)
    if interval_s is not None and interval_s <= 0:
        raise SyncError(said=Said("source.bad_interval"))
    include, exclude = tuple(p.strip() for p in include), tuple(p.strip() for p in exclude)
    if any(not p for p in (*include, *exclude)):
        raise SyncError(said=Said("source.empty_pattern"))
    if (other := store.kb_followed(kb)) is not None:
        raise SyncError(said=Said("source.kb_followed", {"kb": kb, "other": other}))
    default_s = settings.web_default_interval_s if kind == "web" else settings.default_interval_s
    source = Source(
        name, next(k for k in KINDS if k == kind), location, kb, include, exclude, interval_s or default_s,
        branch.strip() if kind == "git" else "",
    )  # fmt: skip
    if not store.add(source):
        raise SyncError(said=Said("source.name_taken", {"name": name}))
    return source
