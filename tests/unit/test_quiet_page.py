"""The middleware that puts the page's quieting script first (ragapp.ui.quiet_page): Gradio's page gets it before
its first script, with a right Content-Length; every other response is left as it was."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse
from fastapi.testclient import TestClient

from ragapp.ui.quiet_page import QuietPage

PAGE = "<!doctype html><html><head><meta charset='utf-8'><script>window.gradio_config = {};</script></head></html>"
OTHER = "<!doctype html><html><head><script>sign_in()</script></head></html>"


def _client() -> TestClient:
    app = FastAPI()
    app.get("/")(lambda: HTMLResponse(PAGE))
    app.post("/")(lambda: HTMLResponse(PAGE))
    app.get("/signin")(lambda: HTMLResponse(OTHER))
    app.get("/api")(lambda: JSONResponse({"page": PAGE}))
    halves = [PAGE[:40].encode(), PAGE[40:].encode()]
    app.get("/chunks")(lambda: StreamingResponse(iter(halves), media_type="text/html"))
    large = [b"<html><head><script>x()</script>", b"<p>" + b"a" * (5 * 1024 * 1024), b"b" * (5 * 1024 * 1024) + b"</p>"]
    app.get("/large")(lambda: StreamingResponse(iter(large), media_type="text/html"))
    app.add_middleware(QuietPage)
    return TestClient(app)


def test_gradios_page_gets_the_script_before_its_first_script_with_its_length() -> None:
    for path in ("/", "/chunks"):
        response = _client().get(path)
        body = response.text
        assert body.index("requestAnimationFrame") < body.index("window.gradio_config"), path
        assert body.index("<meta charset") < body.index("requestAnimationFrame"), path
        assert "prefers-reduced-motion: reduce" in body
        assert body.count("requestAnimationFrame = ") == 1
        if "content-length" in response.headers:
            assert int(response.headers["content-length"]) == len(response.content)


def test_other_responses_pass_as_they_were() -> None:
    client = _client()
    assert client.get("/signin").text == OTHER
    assert client.post("/").text == PAGE
    assert client.get("/api").json() == {"page": PAGE}
    large = client.get("/large").content  # past what is held: passed on as it came, in its parts
    assert large.startswith(b"<html><head><script>x()</script><p>aaa") and large.endswith(b"bbb</p>")
    assert len(large) == 10 * 1024 * 1024 + len(b"<html><head><script>x()</script><p></p>")
