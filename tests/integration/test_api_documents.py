"""Documents, upload jobs, retrieval, traces and test cases over HTTP (httpx against the served app), and
the bad inputs: an oversize file, a malformed multipart body, an unsupported type, an unknown knowledge base."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
import pytest

from tests.integration.api_helpers import KETTLE, LAMP, Served

pytestmark = pytest.mark.integration


def _wait_for(http: httpx.Client, job_id: str) -> dict[str, object]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        job = http.get(f"/v1/jobs/{job_id}").json()
        if job["finished"]:
            return job  # type: ignore[no-any-return]
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} did not end")


def test_upload_list_read_and_delete_documents(serve_api: Callable[..., Served]) -> None:
    served = serve_api()
    with served.client() as http:
        files = [("files", ("kettle.md", KETTLE.encode(), "text/markdown")), ("files", ("lamp.md", LAMP.encode()))]
        accepted = http.post("/v1/documents", files=files, data={"kb": "products"})
        assert accepted.status_code == 202, accepted.text
        assert accepted.headers["location"] == f"/v1/jobs/{accepted.json()['id']}"
        job = _wait_for(http, accepted.json()["id"])
        assert job["status"] == "done" and job["fraction"] == 1.0 and job["kb"] == "products"
        results = {r["name"]: r for r in job["results"]}  # type: ignore[attr-defined]
        assert {r["status"] for r in results.values()} == {"added"}
        assert [j["id"] for j in http.get("/v1/jobs").json()] == [job["id"]]

        documents = http.get("/v1/documents").json()
        assert sorted(d["name"] for d in documents) == ["kettle.md", "lamp.md"]
        assert http.get("/v1/documents", params={"kb": "products"}).json() == documents
        assert http.get("/v1/documents", params={"kb": "nowhere"}).status_code == 404
        assert http.get("/v1/knowledge-bases").json() == [{"name": "products", "documents": 2, "chunks": 2}]

        kettle = results["kettle.md"]["doc_id"]
        detail = http.get(f"/v1/documents/{kettle}").json()
        assert detail["name"] == "kettle.md" and detail["file_kept"] is True
        assert "1.7 litres" in detail["chunk_list"][0]["text"] and detail["chunk_list"][0]["location"]
        assert detail["report"]["coverage"] == 1.0 and detail["report"]["unread"] == []  # all of its text indexed

        again = http.post("/v1/documents", params={"wait": "true"}, files=[("files", ("kettle.md", KETTLE.encode()))])
        assert again.status_code == 200 and again.json()["results"][0]["status"] == "duplicate"

        deleted = http.delete(f"/v1/documents/{kettle}")
        assert deleted.json() == {"id": kettle, "name": "kettle.md", "deleted": True}
        assert http.get(f"/v1/documents/{kettle}").status_code == 404
        gone = http.delete(f"/v1/documents/{kettle}")
        assert gone.status_code == 404 and gone.json()["error"]["code"] == "unknown_document"
        assert http.get("/v1/jobs/nope").status_code == 404


def test_bad_uploads_are_refused_and_nothing_is_stored(serve_api: Callable[..., Served]) -> None:
    served = serve_api(ingest={"max_file_mb": 0.01})  # about 10 kB
    with served.client() as http:
        big = http.post("/v1/documents", files={"files": ("big.md", b"# Big\n\n" + b"word " * 4000)})
        assert big.status_code == 413, big.text
        assert "0.01 MB limit" in big.json()["error"]["message"] and "RAGAPP_INGEST__MAX_FILE_MB" in big.text

        boundary = "x" * 20
        malformed = http.post(
            "/v1/documents",
            content=f"--{boundary}\r\nContent-Disposition: form-data\r\n\r\nnot closed".encode(),
            headers={"content-type": f"multipart/form-data; boundary={boundary}"},
        )
        assert malformed.status_code == 400 and malformed.json()["error"]["code"] == "malformed_multipart"
        no_boundary = http.post("/v1/documents", content=b"abc", headers={"content-type": "multipart/form-data"})
        assert no_boundary.status_code == 400 and "boundary" in no_boundary.json()["error"]["message"]
        not_multipart = http.post("/v1/documents", json={"files": ["kettle.md"]})
        assert not_multipart.status_code == 400 and not_multipart.json()["error"]["code"] == "not_multipart"
        no_file = http.post("/v1/documents", files={"x": ("", b"")}, data={"kb": "products"})
        assert no_file.status_code in (400,) and "error" in no_file.json()

        unsupported = http.post("/v1/documents", files={"files": ("tool.exe", b"MZ")})
        assert unsupported.status_code == 415 and "not a supported file type" in unsupported.text
        bad_kb = http.post("/v1/documents", files={"files": ("k.md", KETTLE.encode())}, data={"kb": "../etc"})
        assert bad_kb.status_code == 400 and "is not allowed" in bad_kb.json()["error"]["message"]

        assert http.get("/v1/documents").json() == [] and http.get("/v1/jobs").json() == []
    assert served.rig.engine.library.documents() == []


def test_retrieve_shows_every_channel_the_fusion_and_the_gate(serve_api: Callable[..., Served]) -> None:
    served = serve_api({"kettle.md": KETTLE, "lamp.md": LAMP})
    with served.client() as http:
        found = http.post("/v1/retrieve", json={"query": "How long does the Lumen lamp battery last?"}).json()
        assert found["query"] == "How long does the Lumen lamp battery last?" and found["kbs"] is None
        top = found["chunks"][0]
        assert top["document"] == "lamp.md" and "14 hours" in top["text"] and top["in_prompt"] is True
        assert set(top["channel_ranks"]) == {c["channel"] for c in found["channels"]} >= {"keyword", "vector"}
        assert set(top["channel_scores"]) == set(top["channel_ranks"]) and top["fused_rank"] >= 1
        assert top["relevance"]["kept"] is True and top["relevance"]["reason"]
        assert found["knobs"]["fusion"] and "context_top_k" in found["knobs"]
        assert len(found["candidates"]) >= len(found["chunks"])

        scoped = http.post("/v1/retrieve", json={"query": "battery", "kbs": ["default"]}).json()
        assert scoped["kbs"] == ["default"]
        unknown = http.post("/v1/retrieve", json={"query": "battery", "kbs": ["nowhere"]})
        assert unknown.status_code == 404 and "GET /v1/knowledge-bases" in unknown.json()["error"]["message"]
        blank = http.post("/v1/retrieve", json={"query": "  "})
        assert blank.status_code == 400 and "question" in blank.json()["error"]["message"]
        wrong = http.post("/v1/retrieve", json={"query": 42, "kbs": "default"})
        assert wrong.status_code == 422 and wrong.json()["error"]["type"] == "invalid_request_error"
    assert served.rig.llm.calls == []  # retrieval alone asks no model


def test_traces_test_cases_and_evaluation(serve_api: Callable[..., Served]) -> None:
    served = serve_api({"kettle.md": KETTLE, "lamp.md": LAMP})
    served.rig.llm.enqueue("It runs 14 hours [1].")
    with served.client() as http:
        asked = {"model": "ragapp-workflow", "messages": [{"role": "user", "content": "Lumen battery life?"}]}
        trace_id = http.post("/v1/chat/completions", json=asked).json()["ragapp"]["trace_id"]
        (summary,) = http.get("/v1/traces", params={"kind": "chat"}).json()
        assert summary["id"] == trace_id and summary["question"] == "Lumen battery life?"
        assert http.get(f"/v1/traces/{trace_id}").json()["answer"]["text"] == "It runs 14 hours [1]."
        assert http.post(f"/v1/traces/{trace_id}/feedback", json={"rating": "up"}).status_code == 204
        assert http.get("/v1/traces", params={"rating": "up"}).json()[0]["rating"] == "up"
        assert http.get("/v1/traces/nope").status_code == 404

        assert http.post("/v1/evaluate", json={}).status_code == 400  # no cases yet
        case = http.post("/v1/test-cases", json={"question": "Lumen battery life?", "expected": ["lamp.md"]})
        assert case.status_code == 201 and case.json()["expected"] == ["lamp.md"]
        assert http.post("/v1/test-cases", json={"question": "x", "expected": []}).status_code == 422
        assert [c["id"] for c in http.get("/v1/test-cases").json()] == [case.json()["id"]]
        reports = http.post("/v1/evaluate", json={"changes": {"fusion": "rrf"}, "k": 5}).json()
        assert [r["label"] for r in reports] == ["current settings", "with changes"]
        assert reports[0]["hit_rate"] == 1.0 and reports[0]["results"][0]["ranked"][0] == "lamp.md"
        bad = http.post("/v1/evaluate", json={"changes": {"no_such_knob": 1}})
        assert bad.status_code == 400 and "no_such_knob" in bad.json()["error"]["message"]
        bad_value = http.post("/v1/evaluate", json={"changes": {"fusion": "nonsense"}})
        assert bad_value.status_code == 400 and "fusion" in bad_value.json()["error"]["message"]
        assert http.delete(f"/v1/test-cases/{case.json()['id']}").status_code == 204
        assert http.get("/v1/test-cases").json() == []


def test_health_readiness_and_the_docs_page(serve_api: Callable[..., Served]) -> None:
    served = serve_api()
    with served.client() as http:
        assert http.get("/healthz").json() == {"status": "ok"}
        ready = http.get("/readyz").json()
        assert ready["status"] == "ready" and ready["llm"] == "scripted"
        served.rig.engine.warming = True
        assert http.get("/readyz").status_code == 503
        served.rig.engine.warming = False
        spec = http.get("/openapi.json").json()
        assert {"/v1/chat/completions", "/v1/documents", "/v1/retrieve", "/v1/traces", "/readyz"} <= set(spec["paths"])
        docs = http.get("/docs")
        assert docs.status_code == 200 and "/v1/chat/completions" in docs.text and "<script" not in docs.text
        assert "default-src 'self'" in docs.headers["content-security-policy"]  # and nothing it loads breaks it
        assert http.get("/").status_code == 200 and "gradio_config" in http.get("/").text  # the page is still there


def test_an_upload_jobs_progress_says_the_file_its_stage_and_counts(serve_api: Callable[..., Served]) -> None:
    served = serve_api()
    lock = served.rig.engine._store.write_lock  # held, as by another upload: the job waits to store its first file
    lock.acquire()
    held = True
    try:
        with served.client() as http:
            files = [("files", ("kettle.md", KETTLE.encode())), ("files", ("lamp.md", LAMP.encode()))]
            job_id = http.post("/v1/documents", files=files).json()["id"]
            deadline, progress = time.monotonic() + 60, None
            while time.monotonic() < deadline and (progress is None or progress["stage"] != "store"):
                progress = http.get(f"/v1/jobs/{job_id}").json()["progress"]
                time.sleep(0.1)
            first = {"file": "kettle.md", "file_index": 0, "file_count": 2, "stage": "store", "done": 1, "total": 1}
            assert progress == first
            lock.release()
            held = False
            job = _wait_for(http, job_id)
    finally:
        if held:
            lock.release()
    assert job["status"] == "done"
    last = {"file": None, "file_index": 2, "file_count": 2, "stage": "index", "done": None, "total": None}
    assert job["progress"] == last  # every file done, the keyword index rebuilt
