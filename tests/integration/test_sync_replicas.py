"""Two replicas following one folder through one shared catalog (a SQLite file both open, or the PostgreSQL
database they share), one vector store and one files folder, as a deployment behind a balancer has: only one
syncs a source at a time, the other says so, and nothing is indexed twice."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import ragapp.sync.runner as runner_module
from ragapp.config import Settings
from ragapp.ingest.pipeline import Ingestor, KnowledgeStore
from ragapp.models.embedders import EMBEDDERS
from ragapp.store.bm25 import Bm25Index
from ragapp.store.catalog import Catalog
from ragapp.store.files import FileStore
from ragapp.store.vectors import ChromaVectorIndex
from ragapp.sync.service import SyncService, open_sync
from tests.integration.sync_helpers import aged, text, write

pytestmark = pytest.mark.integration

Replicas = Callable[[], tuple[SyncService, SyncService, Catalog]]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "shared-docs"
    for i in range(6):
        aged(write(root, f"part{i % 2}/doc{i}.md", text(f"subject {i}")))
    return root


@pytest.fixture
def replicas(
    store_target: Callable[[str], Any], make_settings: Callable[..., Settings], tmp_path: Path
) -> Iterator[Replicas]:
    settings = make_settings(sync={"enabled": False, "settle_s": 0.0, "batch_files": 2})
    embedder = EMBEDDERS.get(settings.embedding.backend)(settings)
    vectors = ChromaVectorIndex.embedded(tmp_path / "chroma", embedder.name)
    files = FileStore(tmp_path / "files")
    opened: list[tuple[SyncService, Catalog]] = []

    def replica(name: str) -> tuple[SyncService, Catalog]:
        catalog = Catalog(store_target("catalog")).start()  # a catalog object (and connection) of its own
        store = KnowledgeStore(
            catalog, vectors, Bm25Index(tmp_path / name / "bm25").start(), embedder, threading.Lock(), files
        )
        service = open_sync(store, Ingestor(store, settings.ingest), settings).start(background=False)
        opened.append((service, catalog))
        return service, catalog

    def make() -> tuple[SyncService, SyncService, Catalog]:
        (a, catalog), (b, _other) = replica("a"), replica("b")
        return a, b, catalog

    yield make
    for service, catalog in opened:
        service.close()
        catalog.close()


def test_one_replica_syncs_a_source_and_the_other_says_so(
    replicas: Replicas, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, catalog = replicas()
    a.add("docs", "folder", str(folder), "docs", background=False)
    inside, go_on = threading.Event(), threading.Event()
    real = runner_module.ingest_synced

    def held(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread().name == "replica-a":  # replica a stops mid-sync until told to go on
            inside.set()
            assert go_on.wait(120)
        return real(*args, **kwargs)

    monkeypatch.setattr(runner_module, "ingest_synced", held)
    outcomes: list[Any] = []
    thread = threading.Thread(target=lambda: outcomes.append(a.run("docs")), name="replica-a")
    thread.start()
    try:
        assert inside.wait(120)
        busy = b.run("docs")
        assert (busy.state, busy.report) == ("busy elsewhere", None)
        (status,) = b.sources()
        assert status.state == "running" and status.total == 6  # b sees a's progress
    finally:
        go_on.set()
        thread.join()
    (done,) = outcomes
    assert done.state == "idle" and len(done.report.added) == 6
    later = b.run("docs")  # b finds the work done: the file rows are shared
    assert later.report is not None and (later.report.hashed, later.report.ingested) == (0, 0)
    documents = catalog.documents()
    assert sorted(d.name for d in documents) == sorted(f"part{i % 2}/doc{i}.md" for i in range(6))
    assert len({d.content_hash for d in documents}) == 6


def test_replicas_syncing_at_once_index_each_file_once(replicas: Replicas, folder: Path) -> None:
    a, b, catalog = replicas()
    a.add("docs", "folder", str(folder), "docs", background=False)
    outcomes: list[Any] = []
    threads = [threading.Thread(target=lambda s=s: outcomes.append(s.run("docs"))) for s in (a, b)]  # type: ignore[misc]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ingested = sum(o.report.ingested for o in outcomes if o.report is not None)
    assert ingested == 6  # whichever ran (one after the other, or one while the other was refused)
    assert catalog.document_count() == 6


def test_a_replica_that_died_mid_sync_leaves_the_source_to_another(replicas: Replicas, folder: Path) -> None:
    from ragapp.sync.state import SyncStore

    a, b, catalog = replicas()
    a.add("docs", "folder", str(folder), "docs", background=False)
    store = SyncStore(catalog.database)
    assert store.take("docs", "a replica that died", -1.0)  # its lease ran out the moment it was taken
    assert b.sources()[0].state == "failed"  # shown as what it is: nobody is running it any more
    out = b.run("docs")
    assert out.state == "idle" and out.report is not None and len(out.report.added) == 6


def test_what_one_replica_synced_the_other_carries_on_from(replicas: Replicas, folder: Path) -> None:
    a, b, catalog = replicas()
    a.add("docs", "folder", str(folder), "docs", background=False)
    a.run("docs")
    doc_id = {d.name: d.doc_id for d in catalog.documents()}["part0/doc0.md"]
    (folder / "part0/doc0.md").rename(folder / "part0/renamed.md")
    (folder / "part1/doc1.md").unlink()
    out = b.run("docs")
    assert out.report is not None and out.report.renamed == [("part0/doc0.md", "part0/renamed.md")]
    assert out.report.removed == ["part1/doc1.md"] and out.report.ingested == 0
    assert {d.name: d.doc_id for d in catalog.documents()}["part0/renamed.md"] == doc_id
