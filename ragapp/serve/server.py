"""The served app: a FastAPI root with the HTTP API (/v1, ``ragapp.serve.api``) and the Gradio page mounted at
/, behind the security headers, our sign-in page, sign-ins kept in the database and per-user uploads, run by uvicorn.
``serve`` runs it for ``app.py``; ``start_server`` runs it in a thread for tests."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import uvicorn
from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool

from ragapp.core.errors import LoginRefused
from ragapp.engine.engine import Engine
from ragapp.serve.api.app import add_api
from ragapp.serve.api.auth import KeyCheck
from ragapp.serve.gate import RequestGate
from ragapp.serve.headers import SecurityHeaders
from ragapp.serve.mcp_mount import BODY_LIMIT, lifespan, mount_mcp
from ragapp.serve.oidc import NOTICES, OidcLogout, add_oidc, oidc_link
from ragapp.serve.sessions import SessionCookies, Sessions, SessionTokens, login_client, sign_in_method
from ragapp.serve.signin_page import SignInFirst, add_sign_in_page, note_refusal
from ragapp.serve.uploads import UploadOwners
from ragapp.ui.mount import mount_page

log = logging.getLogger(__name__)


def build_app(
    engine: Engine,
    blocks: Any = None,
    clock: Callable[[], float] = time.time,
    host: str | None = None,
) -> FastAPI:
    """``blocks`` (default: the app's page, four answers at a time) mounted at / of a new FastAPI app, the
    HTTP API beside it.

    ``clock`` (seconds since the epoch) times the sign-ins, for tests; ``host`` (default: the configured one) is
    the address served on: the API asks for keys on any but loopback.
    """
    settings = engine.settings
    # FastAPI's own docs pages load their scripts from a CDN: the API serves a page of its own at /docs.
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    accounts = engine.accounts is not None

    async def login(name: str, password: str) -> bool:
        # Gradio's POST /login calls this in the server's event loop: the check (bcrypt, an LDAP directory that
        # may take seconds to answer) runs in a worker thread, so every other request goes on meanwhile.
        try:
            actor = await run_in_threadpool(engine.sign_in, name, password, login_client.get())
        except LoginRefused as refused:
            note_refusal(refused)  # for the sign-in page to say why
            return False
        # Gradio stores the sign-in's token right after this returns, in the same task: the row says how
        sign_in_method.set(
            "ldap" if engine.accounts and engine.accounts.source_of(actor.name) == "ldap" else "password"
        )
        return True

    # Routes of our own go on `app` before the mount: the mount at / answers every path not routed before it.
    served_on = host if host is not None else settings.ui.host
    check = KeyCheck(engine, served_on)
    app.state.api_jobs = add_api(app, engine, check)
    app.state.mcp = mount_mcp(app, engine, check, served_on) if settings.mcp.enabled else None
    tokens = SessionTokens(engine.sign_ins, clock)
    # OIDC signs browsers in as Gradio's /login does, under the cookies of the page mounted below.
    oidc = add_oidc(app, engine, tokens, lambda: page.cookie_id) if settings.oidc.enabled else None
    links = [oidc_link(settings.oidc.label)] if oidc is not None else []
    directory = engine.accounts is not None and engine.accounts.directory is not None
    add_sign_in_page(app, settings.ui.root_path, accounts, links, NOTICES, directory=directory)
    page = mount_page(app, engine, login if accounts else None, blocks)
    page.use_tokens(tokens, engine.sign_ins.cookie_id())
    sessions = Sessions(tokens, page.cookie_id)
    # The last added runs first: every response, a refusal included, gets the headers.
    json_limit = int(settings.ui.max_json_mb * 1024 * 1024)
    page_limit = int(settings.ui.max_page_json_mb * 1024 * 1024)
    app.add_middleware(RequestGate, check=check, json_limit=json_limit, mcp_limit=BODY_LIMIT,
                       sessions=sessions if accounts else None, page_limit=page_limit)  # fmt: skip
    if accounts:  # signed-out browsers get our sign-in page, not Gradio's
        app.add_middleware(SignInFirst, sessions=sessions, page_paths=page.page_paths, root_path=settings.ui.root_path)
    if oidc is not None:  # a sign-out there too, for a browser that signed in through the provider
        app.add_middleware(OidcLogout, oidc=oidc, public_url=settings.oidc.public_url, root_path=settings.ui.root_path)
    app.add_middleware(UploadOwners, sessions=sessions)
    app.add_middleware(SessionCookies, sessions=sessions, signed_out=engine.sign_out)
    app.add_middleware(SecurityHeaders, https=settings.ui.https, frame_ancestors=settings.ui.frame_ancestors)
    app.state.page = page
    app.state.sign_ins = tokens  # for a company sign-in's callback: ``tokens.begin(token, user, "oidc")``
    return app


class _Server(uvicorn.Server):
    """uvicorn's server, which ``stop()`` stops at once instead of at its main loop's next tick (every 0.1 s)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._woken: asyncio.Event | None = None

    async def main_loop(self) -> None:
        # uvicorn's own loop (the date header each second, the request limit, should_exit), whose 0.1 s sleep a
        # stop() ends early: the tests start and stop about a hundred apps a run.
        self._woken, self._loop = asyncio.Event(), asyncio.get_running_loop()
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._woken.wait(), 0.1)
            should_exit = await self.on_tick(counter)

    def stop(self) -> None:
        """Shut down gracefully (as on Ctrl-C), from any thread, starting now."""
        self.should_exit = True
        loop, woken = self._loop, self._woken
        if loop is not None and woken is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed already: nothing to wake
                loop.call_soon_threadsafe(woken.set)


def _config(app: FastAPI, engine: Engine, host: str, port: int) -> uvicorn.Config:
    ui = engine.settings.ui
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        # Forwarded headers only from the configured proxies, never from anybody who can reach the port
        proxy_headers=ui.trust_proxy,
        forwarded_allow_ips=ui.proxy_ips if ui.trust_proxy else None,
        # Open event streams (a page's queue) would otherwise hold a shutdown up for ever
        timeout_graceful_shutdown=3,
    )


def serve(engine: Engine, app: FastAPI | None = None) -> None:
    """Serve ``app`` (default: ``build_app(engine)``) at the configured address until interrupted."""
    ui = engine.settings.ui
    app = app if app is not None else build_app(engine)
    server = uvicorn.Server(_config(app, engine, ui.host, ui.port))
    log.info("serving on http://%s:%d%s (HTTP API at /v1, its docs at /docs)", ui.host, ui.port, ui.root_path or "/")
    try:
        server.run()
    finally:
        app.state.api_jobs.close()


@dataclass
class RunningServer:
    """The app served in a background thread: ``url`` to reach it, ``close()`` to stop it."""

    url: str
    app: FastAPI
    server: _Server
    thread: threading.Thread

    def close(self) -> None:
        # the page's queue and event streams first (on the server's loop), then the server
        self.app.state.page.close(getattr(self.app.state, "loop", None))
        self.app.state.api_jobs.close()
        self.server.stop()
        self.thread.join(timeout=10)


def start_server(
    engine: Engine,
    host: str = "127.0.0.1",
    port: int = 0,
    blocks: Any = None,
    clock: Callable[[], float] = time.time,
) -> RunningServer:
    """Serve ``build_app(engine, blocks, clock)`` on ``host:port`` (0: a free port) in a daemon thread."""
    app = build_app(engine, blocks, clock, host)
    server = _Server(_config(app, engine, host, port))
    thread = threading.Thread(target=server.run, name=f"serve-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the app did not start on {host}:{port} (is the port taken?)")
        time.sleep(0.01)
    bound = server.servers[0].sockets[0].getsockname()[1]
    return RunningServer(f"http://{host}:{bound}", app, server, thread)
