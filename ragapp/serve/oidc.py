"""Sign-in with an OpenID Connect provider, beside the name-and-password form (docs/accounts.md).

GET /oidc/login starts a flow (``ragapp.engine.oidc``) and sends the browser to the provider, keeping the sealed
flow in a short-lived cookie of its own (one per flow, so two tabs signing in at once do not trip each other).
The provider sends the browser back to GET /oidc/callback, which finishes the flow and signs the browser in the
way Gradio's own POST /login does: a random token in Gradio's token map (``SessionTokens``: it expires after
auth.session_hours like any sign-in) and the same two access-token cookies. Every failure lands on the sign-in
page with a message saying why (``ragapp.ui.oidc_texts``), never an error page.

Signing out: Gradio's GET /logout ends the session here; ``OidcLogout`` then sends a browser that signed in
through the provider on to the provider's end-session endpoint, which comes back to the sign-in page.
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Callable, MutableMapping

from fastapi import FastAPI, Request, Response
from fastapi.responses import RedirectResponse
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ragapp.engine.engine import Engine
from ragapp.engine.oidc import OidcFailure, OidcSignIn
from ragapp.serve.sessions import sign_in_method
from ragapp.serve.signin_page import PAGE
from ragapp.ui.oidc_texts import REFUSALS, sign_in_label
from ragapp.ui.signin import SignInLink

log = logging.getLogger(__name__)

LOGIN = "/oidc/login"
CALLBACK = "/oidc/callback"
FLOW_COOKIE = "ragapp-oidc-flow-"  # + the flow's state
SIGNED_IN_COOKIE = "ragapp-oidc"  # says this browser's sign-in came through the provider, for signing out
_STATE = re.compile(r"^[A-Za-z0-9]{16,64}$")  # what authlib's generate_token makes; anything else is not ours
NOTICES = {f"oidc-{reason}": texts for reason, texts in REFUSALS.items()}


def oidc_link(label: str) -> SignInLink:
    """The sign-in page's "Sign in with LABEL"."""
    return SignInLink(LOGIN, sign_in_label(label))


def public_base(request: Request | Scope, public_url: str | None, root_path: str) -> str:
    """The app's address as browsers see it: ``public_url`` when set, else the request's own (scheme and host as
    uvicorn reads them: behind a proxy, from its forwarded headers when ui.trust_proxy), then the root path."""
    if public_url:
        return public_url.rstrip("/")
    url = (request if isinstance(request, Request) else Request(request)).url
    return f"{url.scheme}://{url.netloc}{root_path.rstrip('/')}"


def add_oidc(
    app: FastAPI, engine: Engine, tokens: MutableMapping[str, str], cookie_id: Callable[[], str]
) -> OidcSignIn:
    """GET /oidc/login and /oidc/callback on ``app`` (before the page is mounted), signing browsers into
    ``tokens`` (Gradio's token map) under Gradio's cookies for ``cookie_id()``.

    Raises:
        ConfigError: OIDC is on, but its settings are incomplete.
    """
    settings = engine.settings
    oidc = OidcSignIn.of(engine)
    root = settings.ui.root_path.rstrip("/")
    # kept a while past the flow's time, so that a late return is told it took too long rather than refused
    flow_age = int(oidc.flow_s) + 300
    session_s = int(settings.auth.session_hours * 3600)  # the marker goes when the sign-in does

    def refused(failure: OidcFailure, state: str | None) -> Response:
        log.warning("OIDC sign-in refused (%s): %s", failure.reason, failure)
        response = RedirectResponse(f"{root}{PAGE}?notice=oidc-{failure.reason}", status_code=302)
        if state is not None:
            response.delete_cookie(FLOW_COOKIE + state, path=f"{root}{CALLBACK}")
        return response

    @app.get(LOGIN, include_in_schema=False)
    def login(request: Request) -> Response:
        redirect_uri = public_base(request, settings.oidc.public_url, root) + CALLBACK
        try:
            url, state, sealed = oidc.start(redirect_uri)
        except OidcFailure as failure:
            return refused(failure, None)
        except Exception:  # anything else too lands on the sign-in page, not an error page
            log.exception("OIDC sign-in failed to start")
            return refused(OidcFailure("failed", "see the error logged above"), None)
        response = RedirectResponse(url, status_code=302, headers={"Cache-Control": "no-store"})
        # Lax: the provider's redirect back is a top-level GET from another site, which Lax cookies go along with
        response.set_cookie(
            FLOW_COOKIE + state,
            sealed,
            max_age=flow_age,
            path=f"{root}{CALLBACK}",
            httponly=True,
            samesite="lax",
            secure=redirect_uri.startswith("https://"),
        )
        return response

    @app.get(CALLBACK, include_in_schema=False)
    def callback(request: Request) -> Response:
        answer = dict(request.query_params)
        state = answer.get("state") if _STATE.match(answer.get("state", "")) else None
        sealed = request.cookies.get(FLOW_COOKIE + state) if state else None
        client = request.client.host if request.client else ""
        try:
            signed_in = oidc.finish(sealed, answer, client)
        except OidcFailure as failure:
            return refused(failure, state)
        except Exception:  # a database or a provider failing in an unforeseen way: still the sign-in page
            log.exception("OIDC sign-in failed")
            return refused(OidcFailure("failed", "see the error logged above"), state)
        # As Gradio's POST /login signs a browser in (gradio/routes.py), so that every route it guards sees it
        token = secrets.token_urlsafe(16)
        sign_in_method.set("oidc")  # the kept sign-in says how it was made
        tokens[token] = signed_in.actor.name
        response = RedirectResponse(f"{root}/", status_code=302)
        response.set_cookie(f"access-token-{cookie_id()}", token, httponly=True, samesite="none", secure=True)
        response.set_cookie(f"access-token-unsecure-{cookie_id()}", token, httponly=True)
        response.set_cookie(SIGNED_IN_COOKIE, "1", max_age=session_s, httponly=True, samesite="lax")
        response.delete_cookie(FLOW_COOKIE + str(state), path=f"{root}{CALLBACK}")
        return response

    return oidc


class OidcLogout:
    """ASGI middleware: Gradio's GET /logout signs the browser out here and redirects to the app; for a browser
    that signed in through the provider (``SIGNED_IN_COOKIE``) that redirect goes to the provider's end-session
    endpoint instead, which comes back to our sign-in page. Local sign-outs pass untouched."""

    def __init__(self, app: ASGIApp, oidc: OidcSignIn, public_url: str | None, root_path: str) -> None:
        self.app = app
        self.oidc = oidc
        self.public_url = public_url
        self.root = root_path.rstrip("/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") != "/logout":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        if SIGNED_IN_COOKIE not in request.cookies:
            await self.app(scope, receive, send)
            return
        back = public_base(scope, self.public_url, self.root) + PAGE
        # the provider's metadata is read once and kept: after the first sign-in this asks the provider nothing
        elsewhere = await run_in_threadpool(self.oidc.end_session_url, back)
        forget = f"{SIGNED_IN_COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=lax".encode()

        async def send_elsewhere(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if elsewhere is not None and message["status"] == 302:
                    headers = [(k, v) for k, v in headers if k.lower() != b"location"]
                    headers.append((b"location", elsewhere.encode("latin-1")))
                message = {**message, "headers": [*headers, (b"set-cookie", forget)]}
            await send(message)

        await self.app(scope, receive, send_elsewhere)
