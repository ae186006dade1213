"""Sync outside the app (the command line, the benchmark): the catalog's database alone for looking and
editing, the whole knowledge store (embedder, vectors, keywords) for a sync. It opens what a replica opens."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from ragapp.config import Settings
from ragapp.db import Database, open_database
from ragapp.ingest.pipeline import Ingestor, KnowledgeStore
from ragapp.models.embedders import load_embedder
from ragapp.store.catalog import Catalog
from ragapp.sync.service import SyncService, open_sync
from ragapp.sync.state import SyncStore


def _database(settings: Settings) -> Database | None:
    url = settings.store.database_url.get_secret_value().strip()
    return open_database(url, pool_size=2) if url else None


@dataclass
class Opened:
    """What was opened; ``close`` closes it in the reverse order."""

    stack: ExitStack = field(default_factory=ExitStack)

    def close(self) -> None:
        self.stack.close()


def open_store(settings: Settings) -> tuple[SyncStore, Opened]:
    """The sync tables only: listing, adding, pausing, resuming and removing sources need nothing more."""
    opened = Opened()
    database = _database(settings)
    if database is not None:
        opened.stack.callback(database.close)
    target: Path | Database = database if database is not None else settings.paths.state_dir / "catalog.sqlite3"
    catalog = Catalog(target).start()
    opened.stack.callback(catalog.close)
    return SyncStore(catalog.database).start(), opened


def open_service(settings: Settings) -> tuple[SyncService, KnowledgeStore, Opened]:
    """The sync service over the whole knowledge store, as the app opens it (no scheduler started)."""
    opened = Opened()
    database = _database(settings)
    if database is not None:
        opened.stack.callback(database.close)
    state = settings.paths.state_dir
    state.mkdir(parents=True, exist_ok=True)
    store = KnowledgeStore.open(state, load_embedder(settings), settings.store, database=database)
    opened.stack.callback(store.catalog.close)
    service = open_sync(store, Ingestor(store, settings.ingest), settings).start(background=False)
    opened.stack.callback(service.close)
    return service, store, opened
