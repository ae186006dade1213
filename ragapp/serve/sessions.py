"""Sign-ins that survive. Gradio keeps each signed-in browser as a random token (its ``access-token`` cookies) in
``App.tokens``, token -> user name, a dict of its own that a restart empties and another replica never sees;
``SessionTokens`` takes that dict's place and keeps the sign-ins in the database through the engine's
``sign_ins`` facet (``ragapp.accounts.sessions``: the token's hash, never the token), forgotten
``auth.session_hours`` after the sign-in or when an admin ends them. A browser whose sign-in is gone is signed
out on its next request: every route Gradio guards (the page, the API, the queue, files) treats it as signed out,
``SessionCookies`` clears its cookies and the page shows the sign-in form again."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, MutableMapping
from contextvars import ContextVar

from starlette.concurrency import run_in_threadpool
from starlette.requests import cookie_parser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ragapp.engine.sign_ins import SignIns

log = logging.getLogger(__name__)

# The address of the client whose sign-in is being checked: Gradio calls the auth function with the name and
# password only, and the throttle counts failures per address too.
login_client: ContextVar[str] = ContextVar("login_client", default="")
# The request's address and user agent, kept with a sign-in it starts (set for every request: a company
# sign-in's callback starts one too).
request_from: ContextVar[tuple[str, str]] = ContextVar("request_from", default=("", ""))
# How the sign-in being kept was made: Gradio's /login takes a password; a company sign-in sets its own name
# ("oidc") before it stores its token, or calls ``SessionTokens.begin``.
sign_in_method: ContextVar[str] = ContextVar("sign_in_method", default="password")


class SessionTokens(MutableMapping[str, str]):
    """Gradio's token -> user map, kept in the database. Only the tokens' hashes are kept, so the map cannot be
    listed (it iterates as empty): Gradio's /logout, which looks for the user's tokens that way, finds none, and
    ``SessionCookies`` ends that user's sign-ins instead. ``clock``: seconds since the epoch (tests move it)."""

    def __init__(self, sign_ins: SignIns, clock: Callable[[], float] = time.time) -> None:
        self.sign_ins = sign_ins
        self._clock = clock

    def begin(self, token: str, user: str, method: str | None = None) -> None:
        """Keep ``user`` signed in with ``token``, from the current request's address and browser."""
        client, agent = request_from.get()
        self.sign_ins.begin(token, user, method or sign_in_method.get(), client, agent, self._clock())

    def __setitem__(self, token: str, user: str) -> None:
        self.begin(token, user)

    def __getitem__(self, token: str) -> str:
        user = self.sign_ins.user(token, self._clock()) if isinstance(token, str) else None
        if user is None:
            raise KeyError(token)
        return user

    def __delitem__(self, token: str) -> None:
        if not self.sign_ins.end(token):
            raise KeyError(token)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0

    def end_all(self, user: str) -> int:
        """Sign ``user`` out of every browser."""
        return self.sign_ins.end_all(user)


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
    """ASGI middleware: a browser whose sign-in expired or was ended gets its cookies cleared; a sign-out ends
    the user's sign-ins (every one, as Gradio's /logout means to, or this browser's with ``all_session=false``)
    and is logged; a sign-in sees the client's address (``login_client``) and user agent (``request_from``)."""

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
        client = scope.get("client")
        address = client[0] if client else ""
        request_from.set((address, _header(scope, b"user-agent")))
        if path == "/logout" and user is not None and token is not None:
            if b"all_session=false" in scope.get("query_string", b""):
                self.sessions.tokens.sign_ins.end(token)
            else:
                self.sessions.tokens.end_all(user)
            log.info("%s signed out", user)
            if self.signed_out is not None:
                await run_in_threadpool(self.signed_out, user, address)  # a database write
        if path == "/login":
            login_client.set(address)
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


def _header(scope: Scope, wanted: bytes) -> str:
    for name, value in scope.get("headers", []):
        if name == wanted:
            return bytes(value).decode("latin-1")
    return ""


def _cookies(scope: Scope) -> dict[str, str]:
    for name, value in scope.get("headers", []):
        if name == b"cookie":
            return cookie_parser(value.decode("latin-1"))
    return {}
