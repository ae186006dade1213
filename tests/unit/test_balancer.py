"""The local cluster's balancer: a browser sticks to the replica that served it (cookie), an API client to one
replica per key, and others go round; a replica that refuses the connection is skipped, live, over real
loopback servers."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from ragcluster.proxy import COOKIE, app
from ragcluster.services import free_port


def _serve(application: Starlette, port: int) -> uvicorn.Server:
    server = uvicorn.Server(uvicorn.Config(application, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    return server


def _replica(name: str) -> Starlette:
    async def who(request: Request) -> PlainTextResponse:
        body = (await request.body()).decode()
        return PlainTextResponse(f"{name}:{request.url.path}:{body}", headers={"x-forwarded-for-seen":
                                 request.headers.get("x-forwarded-for", "")})  # fmt: skip

    return Starlette(routes=[Route("/{path:path}", who, methods=["GET", "POST"])])


@pytest.fixture
def balanced() -> Iterator[tuple[str, list[uvicorn.Server]]]:
    ports = [free_port(), free_port()]
    replicas = [_serve(_replica(n), p) for n, p in zip("ab", ports, strict=True)]
    down = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    front_port = free_port()
    front = _serve(app([f"http://127.0.0.1:{ports[0]}", down, f"http://127.0.0.1:{ports[1]}"]), front_port)
    yield f"http://127.0.0.1:{front_port}", [*replicas, front]
    for server in (*replicas, front):
        server.should_exit = True


def test_a_browser_sticks_and_a_dead_replica_is_skipped(balanced: tuple[str, list[uvicorn.Server]]) -> None:
    url, _servers = balanced
    with httpx.Client(base_url=url) as browser:
        first = browser.post("/queue/join", content=b"hello")
        assert first.status_code == 200 and first.text.endswith(":/queue/join:hello")
        name = first.text.split(":")[0]
        assert browser.cookies.get(COOKIE) is not None
        assert {browser.get("/page").text.split(":")[0] for _ in range(6)} == {name}  # sticky
        assert first.headers["x-forwarded-for-seen"] == "127.0.0.1"
    seen = set()
    for _ in range(6):  # no cookie, no key: in turn, the dead one skipped
        reply = httpx.get(f"{url}/page")
        assert reply.status_code == 200
        seen.add(reply.text.split(":")[0])
    assert seen == {"a", "b"}


def test_an_api_key_always_reaches_the_same_replica(balanced: tuple[str, list[uvicorn.Server]]) -> None:
    url, _servers = balanced
    for key in ("key-one", "key-two", "key-three"):
        names = {httpx.get(f"{url}/v1/jobs", headers={"Authorization": f"Bearer {key}"}).text.split(":")[0]
                 for _ in range(4)}  # fmt: skip
        assert len(names) == 1, key
