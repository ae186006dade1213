"""The local cluster for real (``make cluster``'s layout): PostgreSQL, a Chroma server, one LLM server, two app
replicas and the balancer, all on loopback. What one replica writes, the other answers from; a replica killed
with -9 in the middle of an upload comes back with the catalog, the vectors and every keyword index agreeing,
and nothing that was stored before is lost.

Slow (about 4 min on 2 cores: three model loads and real answers): `make test-cluster`, which CI runs after
`make test`."""

from __future__ import annotations

import json
from collections.abc import Iterator

import chromadb
import httpx
import psycopg
import pytest

from ragcluster.cluster import Cluster
from ragcluster.services import wait_until
from tests.workers import MODEL_THREADS

pytestmark = [pytest.mark.slow, pytest.mark.integration]

KETTLE = "The Orion kettle gateway password is osprey. Rinse the Orion kettle filter every 14 days.\n"
ROUTER = "The Vega router gateway password is pelican. Reboot the Vega router every 30 days.\n"
QUESTION = "What is the gateway password of the Orion kettle?"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    folder = tmp_path_factory.mktemp("cluster")
    env = {
        "RAGAPP_PATHS__LOAD_DEMO": "false",
        "RAGAPP_STORE__KEYWORD_POLL_S": "0.5",
        "RAGAPP_EMBEDDING__THREADS": str(MODEL_THREADS),  # this xdist worker's share of the cores
        # Uploads indexed inline, as before staged ingest: the kill test kills a replica while an upload is
        # embedding, before anything of it is stored (a kill during background enrichment: still to test here).
        "RAGAPP_ENRICH__BACKGROUND": "false",
    }
    running = Cluster(folder, env=env, llm_threads=MODEL_THREADS)
    running.start()
    KEY["admin"] = running.api_key
    yield running
    running.stop()


KEY: dict[str, str] = {}  # the cluster's admin API key, once it is up


def client(url: str) -> httpx.Client:
    return httpx.Client(base_url=url, timeout=180, headers={"Authorization": f"Bearer {KEY['admin']}"})


def upload(url: str, name: str, text: str, *, wait: bool = True) -> dict:
    with client(url) as http:
        reply = http.post(
            "/v1/documents", params={"wait": wait}, data={"kb": "default"},
            files=[("files", (name, text.encode(), "text/plain"))],
        )  # fmt: skip
    assert reply.status_code in (200, 202), reply.text
    return dict(reply.json())


def found(url: str, query: str) -> list[str]:
    """The documents a search on the replica at ``url`` puts in the prompt."""
    with client(url) as http:
        reply = http.post("/v1/retrieve", json={"query": query})
    assert reply.status_code == 200, reply.text
    return [c["document"] for c in reply.json()["chunks"]]


def ask(url: str, question: str) -> dict:
    with client(url) as http:
        reply = http.post(
            "/v1/chat/completions",
            json={"model": "ragapp-workflow", "messages": [{"role": "user", "content": question}]},
        )
    assert reply.status_code == 200, reply.text
    return dict(reply.json()["choices"][0]["message"])


def catalog_chunks(cluster: Cluster) -> set[str]:
    with psycopg.connect(cluster.postgres.url) as conn:
        return {row[0] for row in conn.execute("SELECT chunk_id FROM chunks")}


def vector_ids(cluster: Cluster) -> set[str]:
    chroma = chromadb.HttpClient(host="127.0.0.1", port=cluster.chroma.port)
    ids: set[str] = set()
    for collection in chroma.list_collections():
        ids |= set(chroma.get_collection(collection.name).get(include=[])["ids"])
    return ids


def keyword_ids(cluster: Cluster, name: str) -> set[str]:
    meta = json.loads((cluster.folder / name / "bm25" / "meta.json").read_text("utf-8"))
    return set(meta["chunk_ids"])


def agree(cluster: Cluster) -> bool:
    wanted = catalog_chunks(cluster)
    return vector_ids(cluster) == wanted and all(keyword_ids(cluster, n) == wanted for n in cluster.names)


def test_what_one_replica_stores_the_other_answers_from(cluster: Cluster) -> None:
    a, b = cluster.replicas["a"].url, cluster.replicas["b"].url
    job = upload(a, "kettle.txt", KETTLE)
    assert job["status"] == "done" and job["results"][0]["status"] == "added", job

    assert "kettle.txt" in found(b, QUESTION)  # B finds it at once: the vectors and the catalog are shared
    answer = ask(b, QUESTION)
    assert [c["document"] for c in answer["citations"]][:1] == ["kettle.txt"], answer
    assert "osprey" in answer["content"].lower(), answer
    wait_until(lambda: agree(cluster), 30, "B's keyword index following the catalog")

    with client(cluster.url) as http:  # the balancer in front: either replica, the same documents
        assert [d["name"] for d in http.get("/v1/documents").json()] == ["kettle.txt"]

    router = upload(b, "router.txt", ROUTER)
    with client(b) as http:
        assert http.delete(f"/v1/documents/{job['results'][0]['doc_id']}").status_code == 200
    assert "kettle.txt" not in found(a, QUESTION)  # deleted through B: gone from A's answers
    with client(a) as http:
        assert [d["name"] for d in http.get("/v1/documents").json()] == ["router.txt"]
    assert router["results"][0]["status"] == "added"
    wait_until(lambda: agree(cluster), 30, "both keyword indexes following the delete")


def test_a_replica_killed_mid_upload_comes_back_consistent(cluster: Cluster) -> None:
    a, b = cluster.replicas["a"], cluster.replicas["b"]
    before = catalog_chunks(cluster)
    assert before, "the first test left router.txt"
    # Long enough that the upload is still embedding when the kill comes (a few hundred chunks).
    manual = "\n\n".join(f"Section {i}. The Nimbus pump model {i} runs {i % 7 + 2} hours per charge." * 6
                         for i in range(300))  # fmt: skip
    job = upload(a.url, "nimbus.txt", manual, wait=False)

    def embedding() -> bool:
        with client(a.url) as http:
            state = http.get(f"/v1/jobs/{job['id']}").json()
        assert state["status"] in ("queued", "running"), f"the upload ended before the kill: {state}"
        return "embedded" in state["message"]

    wait_until(embedding, 120, "the upload reaching the embedding phase")
    a.kill()

    with client(cluster.url) as http:  # the balancer skips the dead replica
        assert http.get("/v1/documents").status_code == 200

    cluster.start_replica("a")
    wait_until(lambda: agree(cluster), 60, "catalog, vectors and keyword indexes agreeing after the restart")
    after = catalog_chunks(cluster)
    assert before <= after  # nothing stored before the kill is lost
    assert "router.txt" in found(cluster.replicas["a"].url, "What is the gateway password of the Vega router?")
    assert "router.txt" in found(b.url, "What is the gateway password of the Vega router?")
    with client(cluster.replicas["a"].url) as http:
        names = [d["name"] for d in http.get("/v1/documents").json()]
    assert names == ["router.txt"] and after == before  # killed while embedding: nothing of it was written
