"""Our sign-in page (``ragapp.ui.signin``) in place of Gradio's stock form, with accounts on.

Gradio keeps the sign-in itself: its POST /login checks the name and password with the engine and sets the
access-token cookies, /logout ends it, ``SessionTokens`` expires it. What changes is the page: /signin serves
ours, and ``SignInFirst`` sends a signed-out browser that opens the app's page there (and a signed-in one that
opens /signin to the app). Gradio answers every refused sign-in alike (400, "Incorrect credentials."), so the
login check notes why (``note_refusal``) and ``SignInFirst`` says it in a header the page reads: a wrong name or
password, too many failed sign-ins lately, an LDAP directory that did not answer, or a directory user none of
whose groups gives a role.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass

from fastapi import FastAPI, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ragapp.core.errors import DirectoryUnavailable, LoginRefused, LoginThrottled, NoRoleRefused
from ragapp.serve.sessions import Sessions
from ragapp.ui.signin import REFUSED_HEADER, SCRIPT, SCRIPT_PATH, SignInLink, page_language, sign_in_page

PAGE = "/signin"


@dataclass
class _Refusal:
    reason: str | None = None  # "wrong", "throttled", "unavailable" or "no_role"; None: not refused (yet)


# The refusal of the sign-in being answered. A box the middleware puts in, which the login check fills in: a
# value the check set itself would not be seen by the middleware around it.
_refusal: ContextVar[_Refusal | None] = ContextVar("sign_in_refusal", default=None)


def note_refusal(refused: LoginRefused) -> None:
    """For the login check: why the sign-in being answered was refused, for the page to say."""
    box = _refusal.get()
    if box is not None:
        box.reason = (
            "throttled" if isinstance(refused, LoginThrottled)
            else "unavailable" if isinstance(refused, DirectoryUnavailable)
            else "no_role" if isinstance(refused, NoRoleRefused)
            else "wrong"
        )  # fmt: skip


def add_sign_in_page(
    app: FastAPI,
    root_path: str,
    accounts: bool,
    links: Sequence[SignInLink] = (),
    notices: Mapping[str, tuple[str, str]] | None = None,
    directory: bool = False,
) -> None:
    """GET /signin (the page; with accounts off, a redirect to the app) and its script, on ``app``.

    Args:
        root_path: the public sub-path of the app (settings.ui.root_path), before every address on the page.
        accounts: whether accounts are on.
        links: other ways to sign in, listed under the form.
        notices: what the page says when opened with ``?notice=KEY`` (English, Chinese): why a sign-in
            elsewhere (``links``) did not happen. An unknown key says nothing.
        directory: whether the form takes LDAP directory accounts too (the page's hint says so).
    """
    root = root_path.rstrip("/")
    notices = notices or {}

    @app.get(PAGE, include_in_schema=False)
    def sign_in(request: Request) -> Response:
        if not accounts:
            return RedirectResponse(_address(root, "/", request.url.query), status_code=302)
        lang = page_language(request.query_params.get("lang"), request.headers.get("accept-language", ""))
        notice = notices.get(request.query_params.get("notice", ""))
        return HTMLResponse(sign_in_page(root, lang, links, notice, directory), headers={"Cache-Control": "no-store"})

    @app.get(SCRIPT_PATH, include_in_schema=False)
    def script() -> Response:
        return Response(SCRIPT, media_type="text/javascript", headers={"Cache-Control": "no-cache"})


class SignInFirst:
    """ASGI middleware, with accounts on: a signed-out GET of the page (``page_paths``) goes to /signin, a
    signed-in GET of /signin to the app, both keeping the query (?lang=); a refused POST /login says why in
    ``REFUSED_HEADER``. Everything else (the API, Gradio's own routes, files) passes untouched."""

    def __init__(self, app: ASGIApp, sessions: Sessions, page_paths: Collection[str], root_path: str = "") -> None:
        self.app = app
        self.sessions = sessions
        self.page_paths = page_paths
        self.root = root_path.rstrip("/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"].rstrip("/") or "/"
        method = scope["method"]
        elsewhere = self._elsewhere(path, scope) if method in ("GET", "HEAD") else None
        if elsewhere is not None:
            query = scope.get("query_string", b"").decode("latin-1")
            await RedirectResponse(_address(self.root, elsewhere, query), status_code=302)(scope, receive, send)
            return
        if path != "/login" or method != "POST":
            await self.app(scope, receive, send)
            return
        box = _Refusal()
        reset = _refusal.set(box)

        async def send_reason(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 400 and box.reason:
                headers = [*message.get("headers", []), (REFUSED_HEADER.lower().encode(), box.reason.encode())]
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_reason)
        finally:
            _refusal.reset(reset)

    def _elsewhere(self, path: str, scope: Scope) -> str | None:
        """Where a GET of ``path`` goes instead (None: where it asked)."""
        if path in self.page_paths and self.sessions.user(scope) is None:
            return PAGE
        if path == PAGE and self.sessions.user(scope) is not None:
            return "/"
        return None


def _address(root: str, path: str, query: str) -> str:
    return f"{root}{path}?{query}" if query else f"{root}{path}"
