"""Who an API request acts for: the user of its API key (``Authorization: Bearer <key>``), with that user's role
and knowledge-base access, as the UI gives them on sign-in.

Keys are required with accounts on, and on any address but loopback (the port is reachable by others, and
nobody signed in); a proxy in front (``ui.trust_proxy``) counts as reachable. Without accounts the key's user
only names whose traces and test cases these are; everybody is the one local user. Where keys are not required
a request without one (or with one nobody made: OpenAI clients insist on sending something) acts as the local
user.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from ragapp.core.access import Actor
from ragapp.core.errors import AccessDenied
from ragapp.core.types import LOCAL_OWNER
from ragapp.engine.engine import Engine
from ragapp.serve.api.errors import ApiError

bearer = HTTPBearer(auto_error=False, description="An API key from `python -m ragapp.users key NAME`.")
CALLER = "ragapp.caller"  # the scope's key for the caller the request gate found (``ragapp.serve.gate``)
HOW_TO_GET_A_KEY = (
    "Create a key with `python -m ragapp.users key NAME` on the server and send it as 'Authorization: Bearer <key>'."
)


@dataclass(frozen=True)
class Caller:
    """An authenticated request: the actor engine calls act for, and the owner of its traces and test cases."""

    actor: Actor
    owner: str
    user: str | None  # the key's user; None: no key (loopback, accounts off)


def is_loopback(host: str) -> bool:
    if host.strip().lower() in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


class KeyCheck:
    """The dependency that resolves a request's key (``Depends(check)`` gives a ``Caller``)."""

    def __init__(self, engine: Engine, host: str) -> None:
        settings = engine.settings
        self._engine = engine
        self.accounts = engine.accounts is not None
        self.required = self.accounts or not is_loopback(host) or settings.ui.trust_proxy
        self._why = (
            "Accounts are on, so the API needs a key."
            if self.accounts
            else f"This server listens on {host} (or behind a proxy), so the API needs a key."
        )

    def __call__(self, request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> Caller:
        found = request.scope.get(CALLER)
        if isinstance(found, Caller):  # checked from the headers already, before the body was read
            return found
        # request.client: the peer, or the address a trusted proxy forwarded (uvicorn's forwarded_allow_ips)
        client = request.client.host if request.client is not None else ""
        return self.caller(credentials.credentials if credentials is not None else "", client)

    def caller(self, key: str, client: str = "") -> Caller:
        """Who a request with API key ``key`` ("" for none) from the address ``client`` acts for; ``ApiError``
        (401) when it may not call."""
        key = key.strip()
        user = self._engine.key_user(key) if key else None
        if user is None:
            if self.required:
                said = "That API key is not valid (revoked, or mistyped)." if key else self._why
                raise ApiError(401, f"{said} {HOW_TO_GET_A_KEY}", "invalid_api_key")
            return Caller(self._engine.actor(None, client), LOCAL_OWNER, None)
        try:
            actor = self._engine.actor(user, client)
        except AccessDenied:
            raise ApiError(401, f"The user of that API key ({user}) no longer exists.", "invalid_api_key") from None
        return Caller(actor, f"user:{user}", user)
