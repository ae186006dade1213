"""The served app over HTTP (ragapp.serve on a loopback port, called with httpx): security headers on every
kind of response, sign-ins that expire, logout, and uploaded files readable by their uploader alone."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ragapp.accounts.store import UserStore
from ragapp.serve.headers import CONTENT_SECURITY_POLICY
from ragapp.serve.server import RunningServer, start_server

pytestmark = pytest.mark.integration

HOURS = 2.0


class Clock:
    """Seconds, moved on by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def serve(make_engine: Callable[..., Any], tmp_path: Path) -> Iterator[Callable[..., tuple[Any, RunningServer]]]:
    """``serve(accounts=False, clock=None, **overrides)``: a real engine served on a free loopback port; with
    accounts, alice and bob (editors) and rita (reader) may sign in."""
    servers: list[RunningServer] = []

    def start(accounts: bool = False, clock: Callable[[], float] | None = None, **overrides: Any) -> Any:
        if accounts:
            users = tmp_path / "users.json"
            store = UserStore(users, 4)
            for name, role in (("alice", "editor"), ("bob", "editor"), ("rita", "reader")):
                store.add(name, f"{name} password", role)
            auth = {"enabled": True, "users_file": users, "bcrypt_rounds": 4, "session_hours": HOURS}
            overrides["auth"] = auth | overrides.get("auth", {})
        rig = make_engine(f"state{len(servers)}", **overrides)
        server = start_server(rig.engine, "127.0.0.1", 0, clock=clock or time.time)
        servers.append(server)
        return rig, server

    yield start
    for server in servers:
        server.close()


def _signed_in(url: str, name: str) -> httpx.Client:
    client = httpx.Client(base_url=url, timeout=30)
    reply = client.post("/login", data={"username": name, "password": f"{name} password"})
    assert reply.status_code == 200, reply.text
    return client


def _upload(client: httpx.Client, name: str, text: str) -> str:
    reply = client.post("/gradio_api/upload", files={"files": (name, text.encode(), "text/markdown")})
    assert reply.status_code == 200, reply.text
    (path,) = reply.json()
    return str(path)


def test_every_kind_of_response_carries_the_security_headers(serve: Callable[..., Any]) -> None:
    _rig, server = serve()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        replies = {
            "page": client.get("/"),
            "config": client.get("/config"),
            "api info": client.get("/gradio_api/info"),
            "static": client.get("/theme.css"),
            "missing file": client.get("/gradio_api/file=/etc/passwd"),
            "not found": client.get("/no-such-page"),
        }
    assert replies["page"].status_code == 200 and "gradio_config" in replies["page"].text
    assert replies["missing file"].status_code == 403
    for what, reply in replies.items():
        headers = reply.headers
        assert headers.get("content-security-policy") == CONTENT_SECURITY_POLICY, what
        assert headers.get("x-content-type-options") == "nosniff", what
        assert headers.get("x-frame-options") == "SAMEORIGIN", what
        assert headers.get("referrer-policy") == "no-referrer", what
        assert "camera=()" in headers.get("permissions-policy", ""), what
        assert "strict-transport-security" not in headers, what  # plain HTTP, no proxy said otherwise
    for part in ("frame-ancestors 'self'", "object-src 'none'", "base-uri 'self'", "connect-src 'self'"):
        assert part in CONTENT_SECURITY_POLICY


def test_strict_transport_security_only_when_served_over_https(serve: Callable[..., Any]) -> None:
    _rig, https = serve(ui={"https": True})
    _rig, proxied = serve(ui={"trust_proxy": True, "proxy_ips": "127.0.0.1"})
    _rig, untrusting = serve()
    forwarded = {"X-Forwarded-Proto": "https"}
    assert httpx.get(https.url + "/config").headers["strict-transport-security"].startswith("max-age=")
    assert "strict-transport-security" in httpx.get(proxied.url + "/config", headers=forwarded).headers
    assert "strict-transport-security" not in httpx.get(proxied.url + "/config").headers
    # Without trust_proxy anybody could send the header: it is ignored.
    assert "strict-transport-security" not in httpx.get(untrusting.url + "/config", headers=forwarded).headers


def test_a_sign_in_expires_after_session_hours_and_logout_ends_it(
    serve: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    _rig, server = serve(accounts=True, clock=clock)
    with httpx.Client(base_url=server.url, timeout=30) as anonymous:
        assert anonymous.get("/config").status_code == 401
        assert anonymous.get("/").headers["location"] == "/signin"  # the sign-in page (test_signin_http.py)

    alice = _signed_in(server.url, "alice")
    assert alice.get("/config").status_code == 200
    clock.now += HOURS * 3600 - 60
    assert alice.get("/config").status_code == 200  # a minute left
    clock.now += 61
    with caplog.at_level(logging.INFO, logger="ragapp"):
        expired = alice.get("/config")
    assert expired.status_code == 401
    assert any("expired" in r.getMessage() and "alice" in r.getMessage() for r in caplog.records)
    cleared = [v for k, v in expired.headers.multi_items() if k == "set-cookie"]
    assert len(cleared) == 2 and all("Max-Age=0" in c for c in cleared)
    assert not any(c.name.startswith("access-token") for c in alice.cookies.jar)
    assert alice.get("/").headers["location"] == "/signin"  # the page is the sign-in form again

    alice = _signed_in(server.url, "alice")  # signing in again starts a new session
    assert alice.get("/config").status_code == 200
    with caplog.at_level(logging.INFO, logger="ragapp.serve"):
        assert alice.get("/logout").status_code == 302
    assert any("alice signed out" in r.getMessage() for r in caplog.records)
    assert alice.get("/config").status_code == 401


def test_an_uploaded_file_is_readable_by_its_uploader_alone(serve: Callable[..., Any]) -> None:
    _rig, server = serve(accounts=True)
    alice, bob = _signed_in(server.url, "alice"), _signed_in(server.url, "bob")
    path = _upload(alice, "salaries.md", "# Salaries\n\nAlice earns 5,000 a month.\n")
    url = f"/gradio_api/file={path}"

    assert alice.get(url).status_code == 200 and "5,000" in alice.get(url).text
    for other in (bob.get(url), bob.head(url), bob.get(f"/gradio_api/file/{path}")):
        assert other.status_code == 403
        assert "5,000" not in other.text
    with httpx.Client(base_url=server.url, timeout=30) as anonymous:
        assert anonymous.get(url).status_code in (401, 403)
        assert "5,000" not in anonymous.get(url).text

    # The same bytes under the same name are one file to Gradio: bob uploading it too may then read it.
    assert _upload(bob, "salaries.md", "# Salaries\n\nAlice earns 5,000 a month.\n") == path
    assert bob.get(url).status_code == 200


def test_upload_names_are_cleaned_and_the_copy_goes_once_ingested(serve: Callable[..., Any]) -> None:
    from gradio.utils import get_upload_folder
    from gradio_client import Client, handle_file

    rig, server = serve(accounts=True)
    cache = Path(get_upload_folder()).resolve()
    alice = _signed_in(server.url, "alice")
    path = Path(_upload(alice, "../../etc/<evil> name.md", "# Evil\n\nNothing here.\n")).resolve()
    assert path.parent.parent == cache  # <cache>/<sha of the bytes>/<name>: no way out of the folder
    assert path.name == "evil name.md"  # Gradio keeps the last part, less separators, controls and <>
    path.unlink()

    text = f"# Kettle\n\nThe Orion Kettle K9 of {rig.state_dir.name} boils 1.7 litres in 3 minutes.\n"
    doc = rig.state_dir.parent / "kettle.md"
    doc.write_text(text, "utf-8")
    client = Client(server.url, auth=("alice", "alice password"), verbose=False)
    client.predict([handle_file(str(doc))], "default", [], "", api_name="/upload")
    assert [d.name for d in rig.engine.library.documents()] == ["kettle.md"]
    # Gradio's copy was removed by the handler: nothing in the cache holds the text any more.
    assert not [p for p in cache.glob("*/kettle.md") if p.read_text("utf-8", "replace") == text]


def test_failed_sign_ins_are_counted_per_client_address(
    serve: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    _rig, server = serve(accounts=True, ui={"trust_proxy": True, "proxy_ips": "127.0.0.1"})

    def sign_in(name: str, password: str, address: str) -> int:
        forwarded = {"X-Forwarded-For": address}
        data = {"username": name, "password": password}
        return httpx.post(server.url + "/login", data=data, headers=forwarded, timeout=30).status_code

    with caplog.at_level(logging.WARNING, logger="ragapp"):
        for n in range(5):  # a different name each time: only the address is over the limit
            assert sign_in(f"nobody{n}", "guess", "203.0.113.7") == 400
    assert any("203.0.113.7" in r.getMessage() for r in caplog.records)
    assert sign_in("alice", "alice password", "203.0.113.7") == 400  # that address waits, right password or not
    assert sign_in("alice", "alice password", "198.51.100.2") == 200  # everybody else does not


def test_other_sites_may_frame_the_app_only_when_the_setting_names_them(serve: Callable[..., Any]) -> None:
    _rig, server = serve(ui={"frame_ancestors": "'self' https://huggingface.co"})
    headers = httpx.get(server.url + "/").headers
    assert "frame-ancestors 'self' https://huggingface.co" in headers["content-security-policy"]
    assert "x-frame-options" not in headers  # SAMEORIGIN would forbid what the policy allows


def test_the_page_is_built_into_gradios_app_once_not_four_times(
    serve: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gradio builds an app of its own for a page when the page is made, when its ``with`` ends, at ``queue()`` and at
    the mount; the first three are thrown away unused, and the page is built without them. The mounted one answers
    and is the one the queue runs the page's events through: the page works."""
    from gradio.routes import App

    built: list[Any] = []
    create_app = App.create_app

    def recorded(blocks: Any, *args: Any, **kwargs: Any) -> Any:
        app = create_app(blocks, *args, **kwargs)
        if app is not None:
            built.append(app)
        return app

    monkeypatch.setattr(App, "create_app", staticmethod(recorded))
    _rig, server = serve()
    page = server.app.state.page
    assert built == [page.gradio] and page.blocks.app is page.gradio  # the mounted one alone, the queue's too
    with httpx.Client(base_url=server.url, timeout=30) as client:
        assert "gradio_config" in client.get("/").text
        assert client.get("/gradio_api/info").status_code == 200
