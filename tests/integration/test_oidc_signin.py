"""OpenID Connect sign-in over HTTP against a real provider (node's ``oidc-provider`` on loopback,
tests/oidc/provider.mjs): the code flow with PKCE signs a browser in with the role and groups its provider groups
map to; every refusal (the user cancels, a forged or replayed state, a wrong nonce, a flow too old, the provider
down, no role, a local account's name) lands on the sign-in page saying why and signs nobody in; a sign-in
expires as a local one does; signing out goes on to the provider; a flow started on one replica finishes on
another, once. The browser side: tests/e2e/test_oidc_browser.py."""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from ragapp.accounts.model import KbRule
from ragapp.accounts.oidc import Flow
from ragapp.accounts.store import UserStore
from ragapp.agent.mcp_tools import mcp_session
from ragapp.core.errors import ConfigError
from ragapp.store.owner_signature import Signer
from ragcluster.services import free_port
from tests.integration.api_helpers import run_async
from tests.oidc.provider import (
    CLIENT_ID,
    CLIENT_SECRET,
    PUBLIC_CLIENT_ID,
    provider_answer,
    query,
    running_provider,
    sign_in_at_provider,
)

pytestmark = pytest.mark.integration

ACCOUNTS = {
    "ann": {"groups": ["rag-admins", "staff"], "email": "ann@example.com"},
    "rita": {"groups": ["sales"]},
    "kim": {"realm_access": {"roles": ["rag-admins"]}},
    "alice": {"groups": ["staff"]},  # also a local account
}
SALES = "# Sales targets\n\nThe sales target for 2027 is 3.1 million euros across all regions.\n"
FINANCE = "# Budget 2027\n\nThe finance department's travel budget for 2027 is 48,000 euros, approved in March.\n"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Rigged:
    """The app served with OIDC on against a running provider."""

    def __init__(self, rig: Any, url: str, issuer: str) -> None:
        self.rig, self.url, self.issuer = rig, url, issuer

    def browser(self) -> httpx.Client:
        return httpx.Client(follow_redirects=False, timeout=30)

    def sign_in(self, client: httpx.Client, login: str) -> httpx.Response:
        """The app's answer when the provider sends ``login``'s browser back."""
        return sign_in_at_provider(client, f"{self.url}/oidc/login", login)


class _Providers:
    """The module's OpenID providers, one per kind (its accounts, claims in the ID token or not), each started on
    first use knowing the callbacks of ``PORTS`` app ports held for it: a provider reads its clients once, at start,
    and one started per app cost a node start (about a second) each. A port is held bound here (so that no other
    process takes it) until an app is served on it; past ``PORTS`` apps a kind gets a new provider."""

    PORTS = 12

    def __init__(self, folder: Path, stack: ExitStack) -> None:
        self._folder, self._stack = folder, stack
        self._kinds: dict[str, tuple[str, list[socket.socket]]] = {}

    def app_port(self, accounts: dict[str, Any], id_token_claims: bool) -> tuple[str, socket.socket]:
        """(issuer, held): a provider of this kind, and the socket holding a port it knows (close it, then bind)."""
        kind = json.dumps([accounts, id_token_claims], sort_keys=True)
        if kind not in self._kinds or not self._kinds[kind][1]:
            held = [self._stack.enter_context(socket.socket()) for _ in range(self.PORTS)]
            for sock in held:
                sock.bind(("127.0.0.1", 0))  # no SO_REUSEADDR: nobody else binds it while it is held
            bases = [f"http://127.0.0.1:{sock.getsockname()[1]}" for sock in held]
            folder = self._folder / f"provider-{len(self._kinds)}-{held[0].getsockname()[1]}"
            folder.mkdir()
            provider = self._stack.enter_context(running_provider(folder, bases, accounts, id_token_claims))
            self._kinds[kind] = (provider.issuer, held)
        issuer, held = self._kinds[kind]
        return issuer, held.pop(0)


@pytest.fixture(scope="module")
def providers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Providers]:
    with ExitStack() as stack:
        yield _Providers(tmp_path_factory.mktemp("oidc-providers"), stack)


@pytest.fixture
def serve_oidc(
    make_engine: Callable[..., Any], tmp_path: Path, providers: _Providers
) -> Iterator[Callable[..., Rigged]]:
    """``serve(oidc=, auth=, accounts=, id_token_claims=, issuer=, clock=)``: the app signing in with a provider of
    the module's (``clock``: what times the sign-ins; ``issuer``: none, the app pointed there)."""
    from ragapp.serve.server import start_server

    stack: list[Any] = []

    def serve(
        oidc: dict[str, Any] | None = None,
        auth: dict[str, Any] | None = None,
        accounts: dict[str, Any] | None = None,
        id_token_claims: bool = False,
        issuer: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> Rigged:
        held = None
        if issuer is None:
            issuer, held = providers.app_port(accounts or ACCOUNTS, id_token_claims)
            port = int(held.getsockname()[1])
        else:  # a given issuer stands for a provider that is down
            port = _free_port()
        folder = tmp_path / f"app-{port}"
        folder.mkdir()
        users = folder / "users.json"
        UserStore(users, 4).add("alice", "alice password", "editor")
        rig = make_engine(
            f"state-{port}",
            auth={"enabled": True, "users_file": users, "bcrypt_rounds": 4,
                  "group_roles": {"rag-admins": "admin", "staff": "editor"}, **(auth or {})},
            oidc={"enabled": True, "issuer": issuer, "client_id": CLIENT_ID,
                  "client_secret": CLIENT_SECRET, **(oidc or {})},
        )  # fmt: skip
        if held is not None:
            held.close()  # the port is the app's from here
        server = start_server(rig.engine, "127.0.0.1", port, clock=clock)
        stack.append(server)
        return Rigged(rig, server.url, issuer)

    yield serve
    for server in reversed(stack):
        server.close()


def _signed_in(rigged: Rigged, client: httpx.Client) -> bool:
    """Whether the app's page opens for this browser (else it is sent to the sign-in page)."""
    return client.get(f"{rigged.url}/").status_code == 200


def _notice(reply: httpx.Response) -> str:
    assert reply.status_code == 302, reply.text[:500]
    location = reply.headers["location"]
    assert location.startswith("/signin?notice="), location
    return location.split("=", 1)[1]


def test_signing_in_through_the_provider_gives_the_role_its_groups_map_to(serve_oidc: Callable[..., Rigged]) -> None:
    app = serve_oidc()
    with app.browser() as ann:
        assert not _signed_in(app, ann)
        landed = app.sign_in(ann, "ann")
        assert landed.status_code == 302 and landed.headers["location"] == "/"
        assert _signed_in(app, ann)
    actor = app.rig.engine.accounts.actor("ann")
    assert actor.role == "admin" and actor.groups == frozenset({"rag-admins", "staff"})
    with app.browser() as rita:
        app.sign_in(rita, "rita")
        assert _signed_in(app, rita)
    rita_actor = app.rig.engine.accounts.actor("rita")
    assert rita_actor.role == "reader" and rita_actor.groups == frozenset({"sales"})  # auth.default_role


def test_a_public_client_and_nested_claims_in_the_id_token(serve_oidc: Callable[..., Rigged]) -> None:
    app = serve_oidc(
        oidc={"client_id": PUBLIC_CLIENT_ID, "client_secret": None, "groups_claim": "realm_access.roles"},
        id_token_claims=True,
    )
    with app.browser() as kim:
        app.sign_in(kim, "kim")
        assert _signed_in(app, kim)
    assert app.rig.engine.accounts.actor("kim").role == "admin"


def test_a_group_reader_reaches_only_its_groups_bases_through_the_api_and_mcp(
    serve_oidc: Callable[..., Rigged], tmp_path: Path
) -> None:
    app = serve_oidc()
    store = app.rig.engine.accounts.store
    store.set_kb_rule("sales", KbRule(readers=("group:sales",)))
    store.set_kb_rule("finance", KbRule(readers=("group:finance",)))
    for kb, text in (("sales", SALES), ("finance", FINANCE)):
        path = tmp_path / f"{kb}.md"
        path.write_text(text, "utf-8")
        (result,) = app.rig.engine.library.ingest([(path, path.name)], kb=kb)
        assert result.status == "added"
    with app.browser() as rita:
        app.sign_in(rita, "rita")
    _record, key = store.add_key("rita")
    with httpx.Client(base_url=app.url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as api:
        assert [kb["name"] for kb in api.get("/v1/knowledge-bases").json()] == ["sales"]
        assert api.post("/v1/retrieve", json={"query": "travel budget", "kbs": ["finance"]}).status_code == 404
        found = api.post("/v1/retrieve", json={"query": "travel budget 2027 euros"}).json()["chunks"]
        assert found and all("48,000" not in json.dumps(chunk) for chunk in found)

        # A question through the API, in either mode: the model never sees the finance base's text
        ask = {"messages": [{"role": "user", "content": "What is the travel budget for 2027?"}]}
        llm = app.rig.llm
        llm.enqueue(*["Not in the documents."] * 3)  # if the sales passage is judged relevant, the model is asked
        assert api.post("/v1/chat/completions", json={**ask, "model": "ragapp-workflow"}).status_code == 200
        assert "48,000" not in "\n".join(t.content for call in llm.calls for t in call)
        llm.reset()
        finance_chunk = next(c.chunk_id for c in app.rig.engine._store.catalog.all_chunks() if "48,000" in c.text)
        llm.enqueue(
            json.dumps({"thought": "bases", "tool": "list_knowledge_bases", "arguments": {}}),
            json.dumps({"thought": "finance", "tool": "search_knowledge",
                        "arguments": {"query": "travel budget 2027", "knowledge_base": "finance"}}),
            json.dumps({"thought": "read", "tool": "read_chunk", "arguments": {"chunk_id": finance_chunk}}),
            '{"thought": "done", "answer": true}',  # nothing found: the answer says so without the model
        )  # fmt: skip
        assert api.post("/v1/chat/completions", json={**ask, "model": "ragapp-agent"}).status_code == 200
        assert llm.pending == 0  # every step of the script was taken: the tools were called
        model_saw = "\n".join(t.content for call in llm.calls for t in call)
        assert "Result of list_knowledge_bases:\n- sales:" in model_saw  # the bases listed: hers alone
        assert "'finance' is outside" in model_saw and "That chunk is outside" in model_saw
        assert "48,000" not in model_saw and "finance.md" not in model_saw

    # And an MCP client with her key: her bases alone, and the finance base refused by name
    async def through_mcp() -> tuple[Any, Any, Any]:
        async with mcp_session(url=f"{app.url}/mcp", headers={"Authorization": f"Bearer {key}"}) as client:
            bases = await client.call_tool("list_knowledge_bases", {})
            found = await client.call_tool("search", {"query": "travel budget 2027 euros"})
            refused = await client.call_tool("search", {"query": "travel budget", "knowledge_bases": ["finance"]})
            return bases, found, refused

    bases, found_mcp, refused = run_async(through_mcp)
    assert [kb["name"] for kb in bases.structuredContent["result"]] == ["sales"]
    assert not found_mcp.isError and "48,000" not in json.dumps(found_mcp.structuredContent)
    assert refused.isError


def test_the_user_cancelling_at_the_provider_is_said_and_signs_nobody_in(serve_oidc: Callable[..., Rigged]) -> None:
    app = serve_oidc()
    with app.browser() as client:
        back = client.get(provider_answer(client, f"{app.url}/oidc/login", None))
        assert _notice(back) == "oidc-refused"
        page = client.get(f"{app.url}/signin?notice=oidc-refused").text
        assert "did not let you in" in page and "公司登录未能通过" in page
        assert not _signed_in(app, client)


def _callback_of(client: httpx.Client, app: Rigged, login: str) -> tuple[str, dict[str, str]]:
    """The provider's answer for ``login`` (the callback's address), not yet delivered; and the flow's cookie."""
    callback = provider_answer(client, f"{app.url}/oidc/login", login)
    return callback, {c.name: str(c.value) for c in client.cookies.jar if c.name.startswith("ragapp-oidc-flow-")}


def test_a_forged_or_replayed_state_signs_nobody_in(serve_oidc: Callable[..., Rigged]) -> None:
    app = serve_oidc()
    with app.browser() as client:
        callback, cookies = _callback_of(client, app, "ann")
        state = query(callback)["state"]
        forged = callback.replace(state, "A" * len(state))
        assert _notice(client.get(forged, cookies=cookies)) == "oidc-invalid"
        elsewhere = callback.replace(quote(app.issuer, safe=""), quote("https://evil.example", safe=""))
        assert elsewhere != callback  # the provider says who answered (RFC 9207)
        assert _notice(client.get(elsewhere, cookies=cookies)) == "oidc-invalid"
        with app.browser() as stranger:  # the answer without the browser that started it
            assert _notice(stranger.get(callback)) == "oidc-invalid"
            assert not _signed_in(app, stranger)
        assert client.get(callback, cookies=cookies).headers["location"] == "/"  # the real one does
        assert _notice(client.get(callback, cookies=cookies)) == "oidc-expired"  # once


def test_an_id_token_for_another_nonce_is_refused(serve_oidc: Callable[..., Rigged]) -> None:
    app = serve_oidc()
    seal = Signer(app.rig.engine.signer.derive("oidc-flow").encode())
    with app.browser() as client:
        callback, cookies = _callback_of(client, app, "ann")
        ((name, sealed),) = cookies.items()
        packed = sealed.rsplit("~", 1)[0]
        flow = Flow(**json.loads(base64.urlsafe_b64decode(packed + "=" * (-len(packed) % 4))))
        other = Flow(**{**asdict(flow), "nonce": "not-the-nonce-sent"})
        resealed = seal.sign(base64.urlsafe_b64encode(json.dumps(asdict(other)).encode()).decode().rstrip("="))
        assert _notice(client.get(callback, cookies={name: resealed})) == "oidc-invalid"
        assert not _signed_in(app, client)


def test_a_flow_past_its_time_the_provider_down_or_no_role_are_said(
    serve_oidc: Callable[..., Rigged], make_engine: Callable[..., Any]
) -> None:
    slow = serve_oidc(oidc={"flow_minutes": 1e-9})
    with slow.browser() as client:
        assert _notice(slow.sign_in(client, "ann")) == "oidc-expired"

    strict = serve_oidc(auth={"default_role": None})
    with strict.browser() as client:
        assert _notice(strict.sign_in(client, "rita")) == "oidc-no_role"  # sales maps to no role
        assert not _signed_in(strict, client)
    with strict.browser() as client:
        assert _notice(strict.sign_in(client, "alice")) == "oidc-name"  # a local account's name
    assert strict.rig.engine.accounts.actor("alice").role == "editor"  # not taken over

    down = serve_oidc(issuer=f"http://127.0.0.1:{_free_port()}")
    with down.browser() as client:
        assert _notice(client.get(f"{down.url}/oidc/login")) == "oidc-unavailable"
        page = client.get(f"{down.url}/signin?notice=oidc-unavailable").text
        assert "did not answer" in page and "公司登录服务没有响应" in page


def test_the_sign_in_page_offers_the_provider_and_signing_out_goes_there(serve_oidc: Callable[..., Rigged]) -> None:
    app = serve_oidc(oidc={"label": "Example SSO"})
    with app.browser() as client:
        page = client.get(f"{app.url}/signin").text
        assert 'href="/oidc/login"' in page and "Sign in with Example SSO" in page and "使用Example SSO登录" in page
        assert 'id="signin-name"' in page  # the local form stays
        app.sign_in(client, "ann")
        assert _signed_in(app, client)
        out = client.get(f"{app.url}/logout")
        assert out.status_code == 302 and out.headers["location"].startswith(f"{app.issuer}/session/end?")
        asked = query(out.headers["location"])
        assert asked == {"client_id": CLIENT_ID, "post_logout_redirect_uri": f"{app.url}/signin"}
        assert not _signed_in(app, client)

    with app.browser() as local:  # a local sign-out stays here
        assert local.post(f"{app.url}/login", data={"username": "alice", "password": "alice password"}).is_success
        out = local.get(f"{app.url}/logout")
        assert out.status_code == 302 and not out.headers["location"].startswith(app.issuer)


def test_oidc_without_its_settings_is_a_clear_error_at_start(make_engine: Callable[..., Any]) -> None:
    from ragapp.serve.server import build_app

    rig = make_engine(auth={"enabled": True}, oidc={"enabled": True, "client_id": "ragapp"})  # no local user
    with pytest.raises(ConfigError, match="RAGAPP_OIDC__ISSUER is not set"):
        build_app(rig.engine)
    rig = make_engine("other", oidc={"enabled": True, "issuer": "https://sso.example.com", "client_id": "x"})
    with pytest.raises(ConfigError, match="RAGAPP_AUTH__ENABLED=true"):
        build_app(rig.engine)


def test_a_provider_sign_in_expires_after_the_session_hours_as_a_local_one_does(
    serve_oidc: Callable[..., Rigged],
) -> None:
    now = [1000.0]
    app = serve_oidc(auth={"session_hours": 2.0}, clock=lambda: now[0])
    with app.browser() as client:
        app.sign_in(client, "ann")
        now[0] += 2 * 3600 - 60
        assert _signed_in(app, client)
        now[0] += 61
        assert client.get(f"{app.url}/").headers["location"] == "/signin"  # signed out: the sign-in page


def test_a_flow_started_on_one_replica_finishes_on_another_and_only_once(
    make_engine: Callable[..., Any], postgres_url: str, tmp_path: Path
) -> None:
    """Two replicas sharing the database and the secret, behind a balancer without stickiness."""
    from ragapp.serve.server import start_server

    ports = _free_port(), _free_port()
    users = tmp_path / "users.json"
    UserStore(users, 4).add("alice", "alice password", "admin")
    with running_provider(tmp_path, f"http://127.0.0.1:{ports[0]}", ACCOUNTS) as provider, ExitStack() as servers:
        urls = []
        for replica, port in zip(("one", "two"), ports, strict=True):
            if replica == "two":  # replicas share the state dir's secret.key
                (tmp_path / "two").mkdir()
                shutil.copy(tmp_path / "one" / "secret.key", tmp_path / "two" / "secret.key")
            rig = make_engine(
                replica,
                store={"database_url": postgres_url},
                auth={"enabled": True, "users_file": users, "bcrypt_rounds": 4},
                oidc={"enabled": True, "issuer": provider.issuer, "client_id": CLIENT_ID,
                      "client_secret": CLIENT_SECRET},
            )  # fmt: skip
            server = start_server(rig.engine, "127.0.0.1", port)
            servers.callback(server.close)
            urls.append(server.url)
        with httpx.Client(follow_redirects=False, timeout=30) as client:
            callback, flow = _callback_of(client, Rigged(None, urls[0], provider.issuer), "ann")  # on the first
            assert client.get(callback.replace(urls[0], urls[1])).headers["location"] == "/"  # the second
            assert client.get(f"{urls[1]}/").status_code == 200
            # replayed on the first: refused by the record of finished flows, before the provider is asked
            assert _notice(client.get(callback, cookies=flow)) == "oidc-expired"


# Behind `slow`: it starts app.py in a process of its own (imports and stores: 10-25 s); the message itself is
# tested without it (test_oidc_without_its_settings_is_a_clear_error_at_start).
@pytest.mark.slow
def test_the_app_with_oidc_on_and_no_client_id_stops_with_the_reason_in_both_languages(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("RAGAPP_", "OMP_"))}
    env |= {
        "RAGAPP_PATHS__STATE_DIR": str(tmp_path / "state"),
        "RAGAPP_PATHS__LOAD_DEMO": "false",
        "RAGAPP_AUTH__ENABLED": "true",
        "RAGAPP_OIDC__ENABLED": "true",
        "RAGAPP_OIDC__ISSUER": "https://sso.example.com",
        "RAGAPP_UI__PORT": str(free_port()),
        "RAGAPP_LLM__BACKEND": "openai",  # nothing is asked: no local model to load
        "RAGAPP_LLM__BASE_URL": "http://127.0.0.1:9/v1",
    }
    app = Path(__file__).resolve().parents[2] / "app.py"
    done = subprocess.run([sys.executable, str(app)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300, check=False)  # fmt: skip
    assert done.returncode == 2, done.stderr[-3000:]
    assert "RAGAPP_OIDC__CLIENT_ID is not set" in done.stderr and "未设置 RAGAPP_OIDC__CLIENT_ID" in done.stderr
    assert "Traceback" not in done.stderr
