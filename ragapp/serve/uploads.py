"""Uploaded files are readable by URL only by whoever uploaded them.

Gradio keeps an upload at ``<cache>/<sha of its bytes>/<name>`` and serves it at ``/gradio_api/file=<path>`` to
any signed-in user who has the path. ``UploadOwners`` notes who uploaded each path (from the upload route's reply)
and refuses that route to anybody else. Paths it did not see uploaded (Gradio's own outputs: the trace and intent
exports) are left to Gradio's checks. With accounts off everybody is the one local user, so nothing is refused.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ragapp.serve.sessions import Sessions

log = logging.getLogger(__name__)

UPLOAD_ROUTE = "/gradio_api/upload"
FILE_ROUTES = ("/gradio_api/file=", "/gradio_api/file/")
MAX_REPLY_BYTES = 1 << 20  # the upload route answers with a JSON list of paths


class UploadOwners:
    """ASGI middleware: records the uploader of each file Gradio stores, and serves it to nobody else."""

    def __init__(self, app: ASGIApp, sessions: Sessions) -> None:
        self.app = app
        self.sessions = sessions
        self.owners: dict[str, set[str | None]] = {}

    def record(self, paths: Iterable[str], user: str | None) -> None:
        if len(self.owners) > 10_000:  # the handler deletes each upload once ingested; forget the gone ones
            self.owners = {p: users for p, users in self.owners.items() if os.path.exists(p)}
        for path in paths:
            self.owners.setdefault(os.path.realpath(path), set()).add(user)

    def may_read(self, path: str, user: str | None) -> bool:
        owners = self.owners.get(os.path.realpath(path))
        return owners is None or user in owners

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        method = scope["method"]
        route = next((r for r in FILE_ROUTES if path.startswith(r)), None)
        if route is not None and method in ("GET", "HEAD"):
            user = self.sessions.user(scope)
            asked = path[len(route) :]
            if not self.may_read(asked, user):
                log.warning("refused %r's request for a file another user uploaded", user)
                # Gradio's own answer for a file it does not serve (one not there included), word for word:
                # nothing tells the file exists
                refusal = JSONResponse({"detail": f"File not allowed: {asked}."}, status_code=403)
                await refusal(scope, receive, send)
                return
        elif path.rstrip("/") == UPLOAD_ROUTE and method == "POST":
            await self._upload(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _upload(self, scope: Scope, receive: Receive, send: Send) -> None:
        user = self.sessions.user(scope)
        # An uncompressed reply, so the paths can be read from it
        headers = [(name, value) for name, value in scope["headers"] if name != b"accept-encoding"]
        status = 0
        body = bytearray()

        async def send_reading(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body" and status == 200 and len(body) < MAX_REPLY_BYTES:
                body.extend(message.get("body", b""))
                if not message.get("more_body", False):
                    self._record_reply(bytes(body), user)
            await send(message)

        await self.app({**scope, "headers": headers}, receive, send_reading)

    def _record_reply(self, body: bytes, user: str | None) -> None:
        try:
            paths = json.loads(body)
        except ValueError:
            log.warning("could not read the upload route's reply; its files are not restricted to their uploader")
            return
        if isinstance(paths, list):
            self.record([p for p in paths if isinstance(p, str)], user)
