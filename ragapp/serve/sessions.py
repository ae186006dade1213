"""Sign-ins that expire. Gradio keeps each signed-in browser as a random token (its ``access-token`` cookies) in
``App.tokens``, token -> user name, for as long as the app runs; ``SessionTokens`` takes that dict's place and
forgets a token ``lifetime_s`` after the sign-in, so every route Gradio guards (the page, the API, the queue,
files) treats that browser as signed out and the page shows the sign-in form again."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import cookie_parser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger(__name__)

# The address of the client whose sign-in is being checked: Gradio calls the auth function with the name and
# password only, and the throttle counts failures per address too.
login_client: ContextVar[str] = ContextVar("login_client", default="")


class SessionTokens(dict[str, str]):
    """Gradio's token -> user map, each entry dropped ``lifetime_s`` after it was added (``clock`` seconds)."""

    def __init__(self, lifetime_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.lifetime_s = lifetime_s
        self._clock = clock
        self._since: dict[str, float] = {}

    def __setitem__(self, token: str, user: str) -> None:
        for old in [t for t in self._since if self._expired(t)]:
            self._expire(old)  # a sign-in nobody comes back with is not kept for ever
        self._since[token] = self._clock()
        super().__setitem__(token, user)

    def __delitem__(self, token: str) -> None:
        self._since.pop(token, None)
        super().__delitem__(token)

    def get(self, token: Any, default: Any = None) -> Any:
        if isinstance(token, str) and self._expired(token):
            self._expire(token)
        return super().get(token, default)

    def __contains__(self, token: object) -> bool:
        return self.get(token) is not None

    def _expired(self, token: str) -> bool:
        since = self._since.get(token)
        return since is not None and self._clock() - since >= self.lifetime_s

    def _expire(self, token: str) -> None:
        user = super().get(token)
        del self[token]
        log.info("sign-in of %r expired after %.4g h", user, self.lifetime_s / 3600)


class Sessions:
    """Who a request comes from, read the way Gradio reads it (its cookies, its tokens)."""

    def __init__(self, tokens: SessionTokens, cookie_id: str) -> None:
        self.tokens = tokens
        self.cookie_names = (f"access-token-{cookie_id}", f"access-token-unsecure-{cookie_id}")

    def token(self, scope: Scope) -> str | None:
        cookies = _cookies(scope)
        return next((cookies[name] for name in self.cookie_names if cookies.get(name)), None)

    def user(self, scope: Scope) -> str | None:
        token = self.token(scope)
        return self.tokens.get(token) if token is not None else None


class SessionCookies:
    """ASGI middleware: a browser whose sign-in expired (or was from before a restart) gets its cookies cleared;
    sign-outs are logged; a sign-in sees the client's address (``login_client``)."""

    def __init__(self, app: ASGIApp, sessions: Sessions, signed_out: Callable[[str, str], None] | None = None) -> None:
        self.app = app
        self.sessions = sessions
        self.signed_out = signed_out  # (user, client address): the engine's audit log hears of each sign-out

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"].rstrip("/")
        token = self.sessions.token(scope)
        user = self.sessions.tokens.get(token) if token is not None else None
        if path == "/logout" and user is not None:
            log.info("%s signed out", user)
            if self.signed_out is not None:
                client = scope.get("client")
                await run_in_threadpool(self.signed_out, user, client[0] if client else "")  # a database write
        if path == "/login":
            client = scope.get("client")
            login_client.set(client[0] if client else "")
        stale = token is not None and user is None

        async def send_clearing(message: Message) -> None:
            if stale and message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                sets_token = any(
                    name == b"set-cookie" and value.startswith(tuple(n.encode() for n in self.sessions.cookie_names))
                    for name, value in headers
                )
                if not sets_token:  # a new sign-in's cookies are not to be cleared again
                    headers += [
                        (b"set-cookie", f'{name}=""; Max-Age=0; Path=/; HttpOnly; SameSite=lax'.encode())
                        for name in self.sessions.cookie_names
                    ]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_clearing)


def _cookies(scope: Scope) -> dict[str, str]:
    for name, value in scope.get("headers", []):
        if name == b"cookie":
            return cookie_parser(value.decode("latin-1"))
    return {}
