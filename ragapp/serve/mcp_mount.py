"""The MCP server (``ragapp.mcp``) on the app's own port, at /mcp, over streamable HTTP: every call carries an
API key as the HTTP API's do (``Authorization: Bearer <key>``, required where the API requires one) and acts
for its user, with that user's role and knowledge bases."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from mcp.server.streamable_http_manager import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.server.transport_security import TransportSecuritySettings

from ragapp.engine.engine import Engine
from ragapp.mcp.server import Caller, CallRefused, build_mcp
from ragapp.serve.api.auth import KeyCheck
from ragapp.serve.api.errors import ApiError

BODY_LIMIT = DEFAULT_MAX_REQUEST_BODY_SIZE  # what the SDK's app reads of a request (4 MiB); more: 413


def mount_mcp(app: FastAPI, engine: Engine, check: KeyCheck, host: str) -> Any:
    """Mount the MCP server at /mcp of ``app`` (routes added before it stay theirs); returns the server, whose
    sessions ``lifespan`` runs."""

    def who(headers: Mapping[str, str] | None) -> Caller:
        said = (headers or {}).get("authorization", "")
        key = said[len("bearer ") :] if said.lower().startswith("bearer ") else ""
        try:
            caller = check.caller(key)
        except ApiError as refused:
            raise CallRefused(refused.message) from None
        return Caller(caller.actor, caller.owner)

    # On loopback the SDK refuses a Host or Origin header other than loopback's (DNS rebinding); behind a trusted
    # proxy the Host is the public name, so the proxy is left to check it.
    behind_proxy = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    server = build_mcp(engine, who, host, behind_proxy if engine.settings.ui.trust_proxy else None)
    # The SDK's app is one route at /mcp (no auth of its own): it joins the app's routes, as /mcp exactly, not a
    # mount (which would answer /mcp/ only, and leave /mcp to the page's mount at /).
    app.router.routes.extend(server.streamable_http_app().routes)
    return server


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """The app's lifespan: its event loop noted (``app.state.loop``, for a close from another thread), and the
    MCP server's session manager running while the app does."""
    app.state.loop = asyncio.get_running_loop()
    server = getattr(app.state, "mcp", None)
    if server is None:
        yield
        return
    async with server.session_manager.run():
        yield
