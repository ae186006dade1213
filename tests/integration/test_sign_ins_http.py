"""Sign-ins kept in the database, over HTTP (the served app on loopback ports, called with httpx): a browser's
cookie still works after the app restarts on the same state dir, and on another replica of one PostgreSQL
database, where an admin's revocation signs it out; only an admin lists and ends sign-ins, and never sees a
token; a new password or a removed user ends that user's sign-ins, in the Admin tab's engine calls and in
``python -m ragapp.users``. In a real browser:
tests/e2e/test_admin_browser.py."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ragapp.accounts.cli import main as users_main
from ragapp.accounts.store import UserStore
from ragapp.serve.server import RunningServer, start_server

pytestmark = pytest.mark.integration


@pytest.fixture
def users(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A users file with rita (reader), eddie (editor) and ada (admin), and an API key of each."""
    path = tmp_path / "users.json"
    store = UserStore(path, 4)
    keys = {}
    for name, role in (("rita", "reader"), ("eddie", "editor"), ("ada", "admin")):
        store.add(name, f"{name} password", role)
        keys[name] = store.add_key(name)[1]
    return path, keys


@pytest.fixture
def serve(
    make_engine: Callable[..., Any], users: tuple[Path, dict[str, str]]
) -> Iterator[Callable[..., tuple[Any, RunningServer]]]:
    """``serve(name, **overrides)``: an engine with accounts on state dir ``name``, served on a free port."""
    servers: list[RunningServer] = []

    def start(name: str = "state", **overrides: Any) -> tuple[Any, RunningServer]:
        auth = {"enabled": True, "users_file": users[0], "bcrypt_rounds": 4} | overrides.pop("auth", {})
        rig = make_engine(name, auth=auth, **overrides)
        servers.append(start_server(rig.engine, "127.0.0.1", 0))
        return rig, servers[-1]

    yield start
    for server in servers:
        server.close()


def _signed_in(url: str, name: str) -> httpx.Client:
    browser = httpx.Client(base_url=url, timeout=30)
    reply = browser.post("/login", data={"username": name, "password": f"{name} password"})
    assert reply.status_code == 200, reply.text
    return browser


def _token(browser: httpx.Client) -> str:
    (token,) = {c.value for c in browser.cookies.jar if c.name.startswith("access-token")}
    return token


def _signed_out(reply: httpx.Response) -> bool:
    """Refused, and told to forget its cookies (SessionCookies)."""
    cleared = [v for k, v in reply.headers.multi_items() if k == "set-cookie" and "Max-Age=0" in v]
    return reply.status_code == 401 and len(cleared) == 2


def test_a_sign_in_survives_a_restart_of_the_app(serve: Callable[..., Any]) -> None:
    rig, server = serve("state")
    rita = _signed_in(server.url, "rita")
    assert rita.get("/config").status_code == 200
    server.close()
    rig.engine.close()

    _rig, again = serve("state")  # the same state dir: a restart
    with httpx.Client(base_url=again.url, timeout=30, cookies=rita.cookies) as same_browser:
        assert same_browser.get("/config").status_code == 200
        page = same_browser.get("/")
        assert page.status_code == 200 and "gradio_config" in page.text  # not sent to /signin
    rita.close()


def test_replicas_on_one_database_share_sign_ins_and_an_admin_ends_one_on_either(
    serve: Callable[..., Any], postgres_url: str, users: tuple[Path, dict[str, str]]
) -> None:
    shared: dict[str, Any] = {"store": {"database_url": postgres_url}, "auth": {"session_recheck_s": 0}}
    _first, one = serve("one", **shared)
    _second, two = serve("two", **shared)  # another replica: its own state dir, the same database
    rita = _signed_in(one.url, "rita")
    assert rita.get("/config").status_code == 200
    with httpx.Client(base_url=two.url, timeout=30, cookies=rita.cookies) as on_two:  # the balancer moved her
        assert on_two.get("/config").status_code == 200
        admin = {"Authorization": f"Bearer {users[1]['ada']}"}
        listed = httpx.get(f"{two.url}/v1/sessions", headers=admin, timeout=30).json()
        (session,) = [s for s in listed if s["user"] == "rita"]
        assert session["client"] == "127.0.0.1" and session["method"] == "password"
        assert session["agent"].startswith("python-httpx/")
        ended = httpx.delete(f"{two.url}/v1/sessions/{session['id']}", headers=admin, timeout=30)
        assert ended.json() == {"ended": 1, "user": "rita"}
        assert _signed_out(rita.get("/config"))  # on the first replica too
        assert _signed_out(on_two.get("/config"))
    rita.close()


def test_only_an_admin_lists_and_ends_sign_ins_and_never_sees_a_token(
    serve: Callable[..., Any], users: tuple[Path, dict[str, str]]
) -> None:
    _rig, server = serve()
    keys = users[1]
    rita, eddie = _signed_in(server.url, "rita"), _signed_in(server.url, "eddie")
    eddie_too = _signed_in(server.url, "eddie")  # a second browser
    with httpx.Client(base_url=server.url, timeout=30) as api:
        as_rita = {"Authorization": f"Bearer {keys['rita']}"}
        assert api.get("/v1/sessions", headers=as_rita).status_code == 403
        assert api.delete("/v1/sessions", params={"user": "eddie"}, headers=as_rita).status_code == 403

        admin = {"Authorization": f"Bearer {keys['ada']}"}
        listing = api.get("/v1/sessions", headers=admin)
        assert listing.status_code == 200
        assert sorted(s["user"] for s in listing.json()) == ["eddie", "eddie", "rita"]
        for browser in (rita, eddie, eddie_too):
            token = _token(browser)
            assert token not in listing.text and hashlib.sha256(token.encode()).hexdigest() not in listing.text
        first = listing.json()[0]
        assert set(first) == {"id", "user", "method", "client", "agent", "started_at", "expires_at", "last_seen_at"}
        (rita_id,) = [s["id"] for s in listing.json() if s["user"] == "rita"]
        assert api.delete(f"/v1/sessions/{rita_id}", headers=as_rita).status_code == 403
        assert rita.get("/config").status_code == 200  # the refusal ended nothing

        missing = api.delete("/v1/sessions/no-such-id", headers=admin)
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "unknown_session"
        ended = api.delete("/v1/sessions", params={"user": "eddie"}, headers=admin)
        assert ended.json() == {"ended": 2, "user": "eddie"}
        assert _signed_out(eddie.get("/config")) and _signed_out(eddie_too.get("/config"))
        assert rita.get("/config").status_code == 200
        assert [s["user"] for s in api.get("/v1/sessions", headers=admin).json()] == ["rita"]
    for browser in (rita, eddie, eddie_too):
        browser.close()


def test_a_new_password_or_removing_the_user_ends_their_sign_ins(serve: Callable[..., Any]) -> None:
    rig, server = serve()
    engine = rig.engine
    ada = engine.actor("ada")
    rita, eddie = _signed_in(server.url, "rita"), _signed_in(server.url, "eddie")
    engine.admin.set_password("eddie", "a new password", actor=ada)
    assert _signed_out(eddie.get("/config"))
    assert rita.get("/config").status_code == 200
    engine.admin.remove_user("rita", actor=ada)
    assert _signed_out(rita.get("/config"))
    assert engine.admin.sign_ins(actor=ada) == []
    rita.close()
    eddie.close()


def test_the_users_command_signs_a_user_out(
    serve: Callable[..., Any],
    users: tuple[Path, dict[str, str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rig, server = serve(auth={"session_recheck_s": 0})  # the app reads each sign-in afresh on every request
    rita, eddie = _signed_in(server.url, "rita"), _signed_in(server.url, "eddie")
    monkeypatch.setenv("RAGAPP_PATHS__STATE_DIR", str(rig.settings.paths.state_dir))
    monkeypatch.setenv("RAGAPP_AUTH__USERS_FILE", str(users[0]))
    monkeypatch.setenv("RAGAPP_AUTH__BCRYPT_ROUNDS", "4")
    assert users_main(["signout", "eddie"]) == 0
    assert "ended 1 sign-in(s) of eddie" in capsys.readouterr().out
    assert _signed_out(eddie.get("/config"))
    assert rita.get("/config").status_code == 200
    monkeypatch.setattr("sys.stdin", io.StringIO("another password\n"))
    assert users_main(["passwd", "rita", "--password-stdin"]) == 0
    assert "ended 1 sign-in(s) of rita" in capsys.readouterr().out
    assert _signed_out(rita.get("/config"))
    rita.close()
    eddie.close()


def test_logging_out_ends_every_sign_in_of_the_user_or_only_this_browsers(serve: Callable[..., Any]) -> None:
    _rig, server = serve()
    here, there = _signed_in(server.url, "rita"), _signed_in(server.url, "rita")
    assert here.get("/logout", params={"all_session": "false"}).status_code == 302
    assert here.get("/config").status_code == 401
    assert there.get("/config").status_code == 200  # her other browser stays signed in
    again = _signed_in(server.url, "rita")
    assert again.get("/logout").status_code == 302
    assert there.get("/config").status_code == 401  # every one of hers ended
    for browser in (here, there, again):
        browser.close()
