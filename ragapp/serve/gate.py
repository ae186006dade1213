"""The key before the body: a request to the HTTP API (/v1) or the MCP server (/mcp) is checked from its headers
(its API key, where keys are required) and held to its route's body size before a byte of its body is read.

FastAPI reads and parses a JSON body before it resolves the key dependency, so a keyless 100 MB post used to be
read whole (a gigabyte of memory for four of them) and only then refused. Here it is refused from its headers:
401 without a valid key, 413 for a body declared over the limit, and a body sent without a length is read only
up to the limit. JSON routes take ``ui.max_json_mb``; an upload (POST /v1/documents) is bounded part by part
as it is read (``ragapp.serve.api.multipart``); /mcp keeps the MCP SDK's own limit, and a body it could not
parse (not UTF-8, nested past the parser's depth) gets a JSON-RPC parse error instead of a bare 500. With
accounts on, a write to the page's own routes (/gradio_api) needs a signed-in browser the same way, and any
write there is read only up to ``ui.max_page_json_mb`` (a file goes through Gradio's upload route, bounded by
Gradio's own file size limit).

Written here rather than with a library: the checks are the app's own keys and sign-ins; the body limit
follows the MCP SDK's ``RequestBodyLimitMiddleware`` (read to the limit, then replayed).
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ragapp.serve.api.auth import CALLER, KeyCheck
from ragapp.serve.api.errors import ApiError, error_response
from ragapp.serve.sessions import Sessions

API = "/v1"
UPLOAD = "/v1/documents"  # POST: multipart, bounded per file by the upload's reader
MCP = "/mcp"
PAGE = "/gradio_api/"
PAGE_UPLOAD = "/gradio_api/upload"  # multipart, bounded by Gradio's max_file_size (ragapp.ui.mount)
_READS = frozenset({"GET", "HEAD", "OPTIONS"})
PARSE_ERROR = -32700  # JSON-RPC's codes
INVALID_REQUEST = -32600


class RequestGate:
    """ASGI middleware: refuses a request from its headers (see the module's docstring), else passes it on with
    its body read to the route's limit (``json_limit``, ``mcp_limit``, in bytes)."""

    def __init__(
        self,
        app: ASGIApp,
        check: KeyCheck,
        json_limit: int,
        mcp_limit: int,
        sessions: Sessions | None = None,
        page_limit: int | None = None,
    ) -> None:
        self.app = app
        self.check = check
        self.json_limit = json_limit
        self.mcp_limit = mcp_limit
        self.sessions = sessions  # None: accounts off, the page's routes are everybody's
        self.page_limit = page_limit  # None: the page's writes are read whole, as Gradio does

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        method: str = scope["method"]
        if path == API or path.startswith(API + "/"):
            kind = "upload" if method == "POST" and path.rstrip("/") == UPLOAD else "api"
        elif path.rstrip("/") == MCP:
            kind = "mcp"
        else:
            page_write = path.startswith(PAGE) and method not in _READS
            if page_write and self.sessions is not None and self.sessions.user(scope) is None:
                # Gradio's own answer to a signed-out call, given before Gradio reads the body
                await JSONResponse({"detail": "Not authenticated"}, status_code=401)(scope, receive, send)
                return
            if page_write and self.page_limit is not None and not path.startswith(PAGE_UPLOAD):
                await self._page_write(scope, receive, send, self.page_limit)
                return
            await self.app(scope, receive, send)
            return
        refused = await self._key(scope)
        if refused is not None:
            await _refusal(kind, refused)(scope, receive, send)
            return
        if kind == "upload":
            await self.app(scope, receive, send)
            return
        limit = self.mcp_limit if kind == "mcp" else self.json_limit
        declared = Headers(scope=scope).get("content-length", "")
        setting = "" if kind == "mcp" else " (RAGAPP_UI__MAX_JSON_MB)"
        if declared.isdigit() and int(declared) > limit:
            await _refusal(kind, _too_large(int(declared), limit, setting))(scope, receive, send)
            return
        messages = await _read(receive, limit)
        if messages is None:
            await _refusal(kind, _too_large(None, limit, setting))(scope, receive, send)
            return
        if kind == "mcp" and method == "POST" and (problem := _unparsable(messages[0].get("body", b""))):
            await _rpc_error(400, PARSE_ERROR, f"Parse error: {problem}")(scope, receive, send)
            return
        await _pass_on(self.app, messages, scope, receive, send)

    async def _page_write(self, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        """A write to the page's routes, passed on with its body read to ``limit``; over it, Gradio's kind of
        refusal (a JSON ``detail``), 413."""
        declared = Headers(scope=scope).get("content-length", "")
        over = declared.isdigit() and int(declared) > limit
        messages = None if over else await _read(receive, limit)
        if messages is None:
            refused = _too_large(int(declared) if over else None, limit, " (RAGAPP_UI__MAX_PAGE_JSON_MB)")
            await JSONResponse({"detail": refused.message}, status_code=413)(scope, receive, send)
            return
        await _pass_on(self.app, messages, scope, receive, send)

    async def _key(self, scope: Scope) -> ApiError | None:
        """The refusal of a request without a valid key where keys are required (None: it may call); the caller
        found is kept in the scope for the route's own check (``KeyCheck``), which then reads no key again."""
        if not self.check.required:
            return None
        said = Headers(scope=scope).get("authorization", "")
        key = said[len("bearer ") :] if said.lower().startswith("bearer ") else ""
        client = scope["client"][0] if scope.get("client") else ""
        try:
            scope[CALLER] = await run_in_threadpool(self.check.caller, key, client)
        except ApiError as refused:
            return refused
        return None


async def _pass_on(app: ASGIApp, messages: list[Message], scope: Scope, receive: Receive, send: Send) -> None:
    """``app`` called with the body already read (``messages``) replayed to it, then the rest of ``receive``."""
    queued = deque(messages)

    async def replay() -> Message:
        return queued.popleft() if queued else await receive()

    await app(scope, replay, send)


async def _read(receive: Receive, limit: int) -> list[Message] | None:
    """The request's messages, its body whole in the first; None once the body passes ``limit`` bytes."""
    body = bytearray()
    trailing: list[Message] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client went away
            trailing.append(message)
            break
        body.extend(message.get("body", b""))
        if len(body) > limit:
            return None
        if not message.get("more_body", False):
            break
    return [{"type": "http.request", "body": bytes(body), "more_body": False}, *trailing]


def _unparsable(body: bytes) -> str | None:
    """Why the MCP SDK's parser would fail on ``body`` with a bare 500 (None: it is left to the SDK, which
    answers a plain syntax error itself)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"the body is not UTF-8 (byte {exc.start})"
    try:
        json.loads(text)
    except RecursionError:
        return "the JSON is nested too deeply"
    except ValueError:
        return None
    return None


def _too_large(declared: int | None, limit: int, setting: str) -> ApiError:
    size = f"This request's body ({declared / 1e6:.1f} MB)" if declared is not None else "This request's body"
    said = f"{size} is over the {limit / 1e6:g} MB this route reads{setting}; nothing was done."
    return ApiError(413, said, "request_too_large")


def _refusal(kind: str, refused: ApiError) -> Response:
    if kind == "mcp":
        headers = {"WWW-Authenticate": "Bearer"} if refused.status == 401 else None
        return _rpc_error(refused.status, INVALID_REQUEST, refused.message, headers)
    return error_response(refused)


def _rpc_error(status: int, code: int, message: str, headers: dict[str, str] | None = None) -> Response:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return JSONResponse(body, status_code=status, headers=headers)
