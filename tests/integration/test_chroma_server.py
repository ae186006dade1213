"""Vectors on a real Chroma server (``chroma run`` on loopback): ingest, search, move, delete and reconcile go
through ``chromadb.HttpClient`` with the same collections, ids and metadata as the embedded store; prefixes
keep deployments apart; a server that is not there is a ``ConfigError``, one that goes away fails the file."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from ragapp.config import Settings
from ragapp.core.errors import ConfigError
from ragapp.engine.build import build_engine
from ragapp.store.vectors import ChromaVectorIndex
from ragcluster.services import ChromaServer, free_port

if TYPE_CHECKING:
    from conftest import Rig

pytestmark = pytest.mark.integration

CHROMA = Path(sys.executable).with_name("chroma")
QUESTION = "What is the gateway password?"
KETTLE = ("kettle.txt", "The Orion kettle gateway password is osprey. Rinse the kettle filter every 14 days.")
ROUTER = ("router.txt", "The Vega router gateway password is pelican. Reboot the router every 30 days.")


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    if not CHROMA.exists():
        pytest.skip(f"{CHROMA} is missing (chromadb installs it)")
    server = ChromaServer(tmp_path_factory.mktemp("chroma-server"))
    yield server
    server.stop()


def on_server(url: str, prefix: str) -> dict[str, object]:
    return {"store": {"chroma_url": url, "chroma_prefix": prefix}}


def add(rig: Rig, tmp_path: Path, file: tuple[str, str], kb: str = "default") -> str:
    name, text = file
    path = tmp_path / f"{rig.state_dir.name}-{name}"
    path.write_text(text, "utf-8")
    (result,) = rig.engine.library.ingest([(path, name)], kb=kb)
    assert result.status == "added", result.message
    assert result.doc_id is not None
    return result.doc_id


def remote_index(rig: Rig) -> ChromaVectorIndex:
    """The rig's collections, opened independently of its engine."""
    return ChromaVectorIndex.remote(rig.settings.store, rig.embedder)


def catalog_ids(rig: Rig) -> set[str]:
    docs = rig.engine.library.documents()
    return {cid for d in docs for cid in (f"{d.doc_id}-{i:04d}" for i in range(d.chunk_count))}


def vector_hits(rig: Rig, kbs: frozenset[str] | None = None) -> set[str]:
    result = rig.engine.chat.retrieve(QUESTION, kbs=kbs)
    (vector,) = [r for r in result.channel_results if r.channel == "vector"]
    return {h.chunk_id for h in vector.hits}


def test_ingest_search_move_and_delete_on_the_server(
    chroma_server: ChromaServer, make_engine: Callable[..., Rig], tmp_path: Path
) -> None:
    rig = make_engine("one", **on_server(chroma_server.url, "one-"))
    kettle = add(rig, tmp_path, KETTLE, kb="alpha")
    router = add(rig, tmp_path, ROUTER, kb="beta")

    assert not (rig.state_dir / "chroma").exists()  # nothing embedded: the vectors are on the server
    index = remote_index(rig)
    assert index.ids() == catalog_ids(rig)
    assert {cid.rsplit("-", 1)[0] for cid in vector_hits(rig)} == {kettle, router}
    assert {cid.rsplit("-", 1)[0] for cid in vector_hits(rig, frozenset({"alpha"}))} == {kettle}

    rig.engine.library.move(kettle, "beta")
    assert set(remote_index(rig).kb_tags().values()) == {"beta"}
    assert {cid.rsplit("-", 1)[0] for cid in vector_hits(rig, frozenset({"beta"}))} == {kettle, router}
    assert vector_hits(rig, frozenset({"alpha"})) == set()

    rig.engine.library.delete(kettle)
    assert remote_index(rig).ids() == catalog_ids(rig)
    assert {cid.rsplit("-", 1)[0] for cid in vector_hits(rig)} == {router}


def test_reconcile_puts_back_vectors_deleted_behind_its_back(
    chroma_server: ChromaServer, make_engine: Callable[..., Rig], tmp_path: Path
) -> None:
    rig = make_engine("two", **on_server(chroma_server.url, "two-"))
    add(rig, tmp_path, KETTLE)
    add(rig, tmp_path, ROUTER)
    expected = catalog_ids(rig)
    index = remote_index(rig)
    index.delete(sorted(expected)[:1])
    stray = np.random.default_rng(0).standard_normal((1, 384)).astype(np.float32)  # e5-small's dimension
    index.add(["0123456789abcdef-0000"], stray / np.linalg.norm(stray), ["0123456789abcdef"])  # no catalog entry

    again = make_engine("two", **on_server(chroma_server.url, "two-"))  # same state: reconciles on start

    assert remote_index(again).ids() == expected
    assert catalog_ids(again) == expected


def test_prefixes_keep_deployments_apart(
    chroma_server: ChromaServer, make_engine: Callable[..., Rig], tmp_path: Path
) -> None:
    a = make_engine("a", **on_server(chroma_server.url, "deploy-a-"))
    kettle = add(a, tmp_path, KETTLE)
    b = make_engine("b", **on_server(chroma_server.url, "deploy-b-"))  # its start must not touch a's vectors
    router = add(b, tmp_path, ROUTER)

    assert {cid.rsplit("-", 1)[0] for cid in vector_hits(a)} == {kettle}
    assert {cid.rsplit("-", 1)[0] for cid in vector_hits(b)} == {router}
    assert remote_index(a).ids() == catalog_ids(a)
    assert remote_index(b).ids() == catalog_ids(b)
    # The same prefix and embedder open the same collections: that is how replicas will share them.
    shared = Settings(store={"chroma_url": chroma_server.url, "chroma_prefix": "deploy-a-"})
    assert ChromaVectorIndex.remote(shared.store, a.embedder).ids() == catalog_ids(a)


def test_an_unreachable_server_is_a_config_error(make_settings: Callable[..., Settings]) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    with pytest.raises(ConfigError, match=r"RAGAPP_STORE__CHROMA_URL") as caught:
        build_engine(make_settings("gone", store={"chroma_url": url}))
    assert url in str(caught.value)
    with pytest.raises(ConfigError, match=r"not a server address"):
        build_engine(make_settings("bad", store={"chroma_url": "localhost:8000"}))


def test_a_server_that_goes_away_fails_the_file_and_degrades_search(
    make_engine: Callable[..., Rig], tmp_path: Path
) -> None:
    (tmp_path / "own-server").mkdir()
    server = ChromaServer(tmp_path / "own-server")
    try:
        rig = make_engine("away", **on_server(server.url, ""))
        kettle = add(rig, tmp_path, KETTLE)
    finally:
        server.stop()
    path = tmp_path / ROUTER[0]
    path.write_text(ROUTER[1], "utf-8")

    (result,) = rig.engine.library.ingest([(path, ROUTER[0])])

    assert result.status == "failed"
    assert "vector store" in result.message and "Chroma server" in result.message
    assert [d.doc_id for d in rig.engine.library.documents()] == [kettle]  # the catalog never took it
    searched = rig.engine.chat.retrieve(QUESTION)
    assert searched.degraded
    assert {cid.rsplit("-", 1)[0] for r in searched.channel_results for cid in (h.chunk_id for h in r.hits)} == {
        kettle
    }  # the keyword channel still answers


def test_a_replica_searches_what_another_added_after_it_started(
    chroma_server: ChromaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragapp.config import StoreSettings
    from ragapp.store import vectors

    store = StoreSettings(chroma_url=chroma_server.url, chroma_prefix="late-")
    early = ChromaVectorIndex.remote(store, "synthetic")  # started while the collections were empty
    writer = ChromaVectorIndex.remote(store, "synthetic")
    vector = np.zeros(8, dtype=np.float32)
    vector[0] = 1.0
    writer.add(["c-1"], vector[None, :], ["d-1"], ["en"])
    monkeypatch.setattr(vectors, "SHARED_COUNT_TTL_S", 0.0)  # its count of the empty collection is old enough
    assert [cid for cid, _score in early.search(vector, 5, language="en")] == ["c-1"]
    assert early.count() == 1


def test_replicas_read_each_others_writes_at_once(
    chroma_server: ChromaServer,
    postgres_url: str,
    make_engine: Callable[..., Rig],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two replicas on one database and one Chroma server, each with its own bm25s index in memory: once an
    upload or a delete through one has returned, the other's next search sees it, in both channels, without
    waiting for its poll (an hour here) or its count of the empty collections to age (an hour too)."""
    from ragapp.store import vectors

    monkeypatch.setattr(vectors, "SHARED_COUNT_TTL_S", 3600.0)
    store = {"chroma_url": chroma_server.url, "chroma_prefix": "ryw-", "database_url": postgres_url}
    shared = {"store": store | {"keyword_poll_s": 3600}}
    a, b = make_engine("a", **shared), make_engine("b", **shared)
    assert vector_hits(b) == set()  # B has searched (and counted) the empty collections

    doc_id = add(a, tmp_path, KETTLE)
    result = b.engine.chat.retrieve(QUESTION)
    hits = {r.channel: {h.chunk_id for h in r.hits} for r in result.channel_results}
    (chunk_id,) = {c.chunk.chunk_id for c in result.chunks}
    assert hits["keyword"] == {chunk_id} and hits["vector"] == {chunk_id}

    add(b, tmp_path, ROUTER)
    assert chunk_id in {c.chunk.chunk_id for c in a.engine.chat.retrieve(QUESTION).chunks}  # and cached
    b.engine.library.delete(doc_id)
    after = a.engine.chat.retrieve(QUESTION)
    found = {r.channel: {h.chunk_id for h in r.hits} for r in after.channel_results}
    assert chunk_id not in found["keyword"] | found["vector"]
    assert doc_id not in {c.chunk.doc_id for c in after.chunks} and after.chunks, after.chunks
