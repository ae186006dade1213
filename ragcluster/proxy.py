"""A small load balancer for the local cluster, for machines without nginx (use nginx or Caddy on real hosts:
docs/deployment.md, "Several replicas").

Requests go to the replicas in turn, and stick: a browser keeps going to the replica that served it first
(a cookie), an API client to the same replica per key (a hash of its Authorization header). Gradio's queue
streams an answer from the replica that took the question, and an upload job is polled where it runs, so
stickiness is needed even though every replica can answer any request. A replica that refuses the connection
is skipped and the next one tried (the cookie then moves; the browser stays signed in, as sign-ins are kept in
the shared database). Request bodies are read whole before they are sent, so a failed replica can be retried;
streamed responses (Gradio's server-sent events) pass through as they come.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import itertools
import logging
from collections.abc import AsyncIterator, Sequence

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

log = logging.getLogger(__name__)

COOKIE = "ragapp-replica"
# Hop-by-hop headers (RFC 9110 §7.6.1) are for one connection only; host is set by the client for the upstream.
_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
        "transfer-encoding", "upgrade", "host"}  # fmt: skip


class Balancer:
    def __init__(self, upstreams: Sequence[str]) -> None:
        if not upstreams:
            raise ValueError("no replicas to balance")
        self.upstreams = [u.rstrip("/") for u in upstreams]
        self._turn = itertools.cycle(range(len(self.upstreams)))
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(None, connect=5.0), follow_redirects=False)

    def order(self, request: Request) -> list[int]:
        """Replicas to try for ``request``: its sticky one first, then the others."""
        n = len(self.upstreams)
        cookie = request.cookies.get(COOKIE, "")
        key = request.headers.get("authorization", "")
        if cookie.isdigit() and int(cookie) < n:
            first = int(cookie)
        elif key:
            first = int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big") % n
        else:
            first = next(self._turn)
        return [(first + i) % n for i in range(n)]

    async def forward(self, request: Request) -> Response:
        body = await request.body()
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in _HOP]
        client = request.client.host if request.client else ""
        headers += [("x-forwarded-for", client), ("x-forwarded-proto", request.url.scheme),
                    ("x-forwarded-host", request.headers.get("host", ""))]  # fmt: skip
        for index in self.order(request):
            url = self.upstreams[index] + request.url.path + (f"?{request.url.query}" if request.url.query else "")
            upstream = self._client.build_request(request.method, url, headers=headers, content=body)
            try:
                answer = await self._client.send(upstream, stream=True)
            except httpx.TransportError as exc:
                log.warning("replica %s did not take %s %s: %s", self.upstreams[index], request.method, url, exc)
                continue
            kept = [(k, v) for k, v in answer.headers.multi_items() if k.lower() not in _HOP]
            response = StreamingResponse(
                answer.aiter_raw(), status_code=answer.status_code, background=BackgroundTask(answer.aclose)
            )
            response.raw_headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in kept]
            if request.cookies.get(COOKIE) != str(index):
                response.set_cookie(COOKIE, str(index), httponly=True, samesite="lax")
            return response
        return PlainTextResponse("No replica answers: every one refused the connection.", status_code=502)

    async def close(self) -> None:
        await self._client.aclose()


def app(upstreams: Sequence[str]) -> Starlette:
    balancer = Balancer(upstreams)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        yield
        await balancer.close()

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    return Starlette(routes=[Route("/{path:path}", balancer.forward, methods=methods)], lifespan=lifespan)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Balance HTTP requests over app replicas, sticky per browser.")
    parser.add_argument("upstreams", nargs="+", help="replica base URLs, e.g. http://127.0.0.1:7861")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=7860)
    args = parser.parse_args(argv)
    uvicorn.run(app(args.upstreams), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
