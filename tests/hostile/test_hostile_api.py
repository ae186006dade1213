"""Hostile requests to the served app (the real app on a loopback port): the key is checked before the body is
read, and each route reads a body only up to its limit; /mcp answers what its parser cannot read with a JSON-RPC
error, not a bare 500."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from ragapp.accounts.store import UserStore
from ragcluster.services import Replica
from tests.hostile.http_raw import answer
from tests.integration.api_helpers import KETTLE, Served

pytestmark = pytest.mark.integration

HUNDRED_MB = 100_000_000
JSON = {"Content-Type": "application/json"}
MCP_HEADERS = JSON | {"Accept": "application/json, text/event-stream"}


def test_a_keyless_post_is_refused_from_its_headers_before_its_body_is_read(
    serve_api: Callable[..., Served],
) -> None:
    served = serve_api({"kettle.md": KETTLE}, accounts=True)
    for path in ("/v1/chat/completions", "/v1/retrieve", "/v1/documents/x/tags"):
        # Headers only: a server that reads the body first waits for 100 MB that never come, and never answers
        refused = answer(served.url, path, JSON, HUNDRED_MB, timeout_s=20)
        assert refused.status == 401 and refused.headers["www-authenticate"] == "Bearer", path
        assert "python -m ragapp.users key NAME" in refused.json()["error"]["message"]
    wrong = answer(served.url, "/v1/retrieve", JSON | {"Authorization": "Bearer rag-nothing"}, HUNDRED_MB)
    assert wrong.status == 401 and "not valid" in wrong.json()["error"]["message"]
    upload = answer(served.url, "/v1/documents", {"Content-Type": "multipart/form-data; boundary=x"}, HUNDRED_MB)
    assert upload.status == 401
    mcp = answer(served.url, "/mcp", MCP_HEADERS, HUNDRED_MB)  # a JSON-RPC error, for MCP clients
    assert mcp.status == 401 and "python -m ragapp.users key NAME" in mcp.json()["error"]["message"]
    page = answer(served.url, "/gradio_api/queue/join", JSON, HUNDRED_MB)  # the page's own routes: a sign-in
    assert page.status == 401 and page.json() == {"detail": "Not authenticated"}


def test_a_body_over_its_routes_limit_is_refused_before_it_is_read(serve_api: Callable[..., Served]) -> None:
    served = serve_api({"kettle.md": KETTLE}, accounts=True, ui={"max_json_mb": 1})
    key = {"Authorization": f"Bearer {served.keys['rita']}"}
    declared = answer(served.url, "/v1/retrieve", JSON | key, HUNDRED_MB)  # said in the headers: at once
    assert declared.status == 413 and declared.sent == 0
    assert "RAGAPP_UI__MAX_JSON_MB" in declared.json()["error"]["message"]
    chunked = answer(served.url, "/v1/retrieve", JSON | key | {"Transfer-Encoding": "chunked"}, 0)
    assert chunked.status in (400, 422)  # an empty chunked body is read and found wanting, not waited on
    mcp = answer(served.url, "/mcp", MCP_HEADERS | key, HUNDRED_MB)  # the MCP SDK's limit, as it was
    assert mcp.status == 413 and mcp.json()["error"]["code"] == -32600
    with served.client("rita") as reader:  # a body within the limit is read as ever
        assert reader.post("/v1/retrieve", json={"query": "kettle boils"}).json()["chunks"]


@pytest.mark.parametrize(
    ("body", "said"),
    [(b"[" * 100_000 + b"]" * 100_000, "nested too deeply"), (b'{"jsonrpc": "2.0", "id": 1, "\xff": 1}', "not UTF-8")],
    ids=["100k-deep", "bad-utf8"],
)
def test_mcp_answers_a_body_its_parser_cannot_read_with_a_json_rpc_error(
    serve_api: Callable[..., Served], body: bytes, said: str
) -> None:
    served = serve_api()
    with served.client() as http:
        reply = http.post("/mcp", content=body, headers=MCP_HEADERS)
        assert reply.status_code == 400, reply.text
        assert reply.json()["error"]["code"] == -32700 and said in reply.json()["error"]["message"]
        assert http.get("/healthz").status_code == 200


def _memory_mb(pid: int, field: str) -> float:
    """``field`` (VmRSS: now; VmHWM: the most ever) of ``pid`` in MB, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no {field} for {pid}")


# Behind `slow`: it starts the real app in a process of its own (about 20 s to ready), so that the memory
# measured is the server's alone.
@pytest.mark.slow
def test_keyless_100_mb_posts_leave_the_servers_memory_where_it_was(tmp_path: Path) -> None:
    users = tmp_path / "users.json"
    UserStore(users, 4).add("ada", "ada password", "admin")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("RAGAPP_", "OMP_"))}
    env |= {
        "RAGAPP_PATHS__STATE_DIR": str(tmp_path / "state"),
        "RAGAPP_PATHS__LOAD_DEMO": "false",
        "RAGAPP_AUTH__ENABLED": "true",
        "RAGAPP_AUTH__USERS_FILE": str(users),
        # Nothing here asks a question: a model server that is not there spares loading the local model.
        "RAGAPP_LLM__BACKEND": "openai",
        "RAGAPP_LLM__BASE_URL": "http://127.0.0.1:9/v1",
    }
    app = Replica("app", tmp_path, env)
    try:
        pid = app.process.pid
        before = _memory_mb(pid, "VmHWM")
        # 100 MB of one JSON string, sent as fast as the server takes it, until it answers
        for path in ("/v1/chat/completions", "/v1/retrieve") * 2:
            refused = answer(app.url, path, JSON, HUNDRED_MB, body=b"a" * 65536, timeout_s=60)
            assert refused.status == 401, path
        grown = _memory_mb(pid, "VmHWM") - before
        # It was a gigabyte (819 MB to 1,855 MB for these four); what is left is the server's own noise.
        assert grown < 64, f"the server's peak memory grew by {grown:.0f} MB"
        assert httpx.get(f"{app.url}/healthz", timeout=10).status_code == 200
    finally:
        app.stop()
