"""The served app: a FastAPI root with the HTTP API (/v1, ``ragapp.serve.api``) and the Gradio page mounted at
/, behind the security headers, expiring sign-ins and per-user uploads, run by uvicorn. ``serve`` runs it for
``app.py``; ``start_server`` runs it in a thread for tests."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import gradio as gr
import uvicorn
from fastapi import FastAPI
from gradio.routes import App as GradioApp
from starlette.routing import Mount

from ragapp.engine.engine import Engine
from ragapp.serve.api.app import add_api
from ragapp.serve.headers import SecurityHeaders
from ragapp.serve.sessions import SessionCookies, Sessions, SessionTokens, login_client
from ragapp.serve.uploads import UploadOwners
from ragapp.ui.i18n import HEAD, I18N
from ragapp.ui.layout import build_ui

log = logging.getLogger(__name__)

SIGN_IN_MESSAGE = "Sign in with the account your administrator gave you · 请用管理员分配的账号登录"


def build_app(
    engine: Engine,
    blocks: gr.Blocks | None = None,
    clock: Callable[[], float] = time.monotonic,
    host: str | None = None,
) -> FastAPI:
    """``blocks`` (default: the app's page, four answers at a time) mounted at / of a new FastAPI app, the
    HTTP API beside it.

    ``clock`` (seconds) times the sign-ins, for tests; ``host`` (default: the configured one) is the address
    served on: the API asks for keys on any but loopback.
    """
    settings = engine.settings
    if blocks is None:
        blocks = build_ui(engine).queue(default_concurrency_limit=4)
    # FastAPI's own docs pages load their scripts from a CDN: the API serves a page of its own at /docs.
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    accounts = engine.accounts is not None

    def login(name: str, password: str) -> bool:
        return engine.login(name, password, login_client.get())

    # Routes of our own go on `app` before the mount: the mount at / answers every path not routed before it.
    app.state.api_jobs = add_api(app, engine, host if host is not None else settings.ui.host)
    gr.mount_gradio_app(
        app,
        blocks,
        path="/",
        server_name=settings.ui.host,
        server_port=settings.ui.port,
        # Accounts on: Gradio's login page asks, the engine checks (bcrypt, throttled per name and address) and
        # every handler acts as the signed-in user's role.
        auth=login if accounts else None,
        auth_message=SIGN_IN_MESSAGE if accounts else None,
        root_path=settings.ui.root_path or None,
        show_error=False,
        # Gradio's upload route itself refuses files over the ingest limit, before they are written to disk.
        max_file_size=int(settings.ingest.max_file_mb * 1024 * 1024),  # bytes: Gradio reads "0.5mb" as 0
        # The page's words in the browser's language, and the header's English · 中文 switch (ragapp.ui.i18n)
        i18n=I18N,
        head=HEAD,
    )
    gradio_app = next(r.app for r in app.routes if isinstance(r, Mount) and isinstance(r.app, GradioApp))
    tokens = SessionTokens(settings.auth.session_hours * 3600, clock)
    gradio_app.tokens = tokens
    sessions = Sessions(tokens, gradio_app.cookie_id)
    # The last added runs first: every response, a refusal included, gets the headers.
    app.add_middleware(UploadOwners, sessions=sessions)
    app.add_middleware(SessionCookies, sessions=sessions)
    app.add_middleware(SecurityHeaders, https=settings.ui.https, frame_ancestors=settings.ui.frame_ancestors)
    app.state.blocks = blocks
    app.state.gradio = gradio_app
    return app


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


def serve(engine: Engine) -> None:
    """Serve the app at the configured address until interrupted."""
    ui = engine.settings.ui
    app = build_app(engine)
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
    server: uvicorn.Server
    thread: threading.Thread

    def close(self) -> None:
        # As Blocks.close() does: the queue stops, the pages' event streams end, then the server.
        self.app.state.blocks._queue.close()
        self.app.state.gradio.stop_event.set()
        self.app.state.api_jobs.close()
        self.server.should_exit = True
        self.thread.join(timeout=10)


def start_server(
    engine: Engine,
    host: str = "127.0.0.1",
    port: int = 0,
    blocks: gr.Blocks | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> RunningServer:
    """Serve ``build_app(engine, blocks, clock)`` on ``host:port`` (0: a free port) in a daemon thread."""
    app = build_app(engine, blocks, clock, host)
    server = uvicorn.Server(_config(app, engine, host, port))
    thread = threading.Thread(target=server.run, name=f"serve-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the app did not start on {host}:{port} (is the port taken?)")
        time.sleep(0.01)
    bound = server.servers[0].sockets[0].getsockname()[1]
    return RunningServer(f"http://{host}:{bound}", app, server, thread)
