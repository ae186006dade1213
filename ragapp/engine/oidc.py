"""Signing in with an OpenID Connect provider, for the server (``ragapp.serve.oidc``): start a flow, sealed for the
browser to keep, and finish it into a signed-in user with the role their groups give.

The flow (state, nonce, PKCE verifier) travels in the browser, sealed with the engine's signer, rather than in this
process: any replica behind a balancer without stickiness can finish a flow another one started. A flow is used
once: the states finished are recorded where every replica sees them (``ragapp.accounts.oidc_flows``) until
they would have expired, and the provider itself takes each code once (a second exchange of it is refused).
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from ragapp.accounts.oidc import Flow, OidcClient, OidcFailure
from ragapp.accounts.oidc_flows import FILE, FinishedFlows
from ragapp.config import Settings
from ragapp.core.access import Actor
from ragapp.core.errors import LoginRefused, NoRoleRefused
from ragapp.store.owner_signature import Signer

if TYPE_CHECKING:
    from ragapp.engine.engine import Engine

__all__ = ["OidcFailure", "OidcSignIn", "SignedIn"]

SignInExternal = Callable[[str, Sequence[str], str, str], Actor]


@dataclass(frozen=True)
class SignedIn:
    actor: Actor
    subject: str  # the provider's id of the user


class OidcSignIn:
    """The two ends of an OIDC sign-in.

    Args:
        settings: the app's settings (``oidc``, ``auth``).
        signer: seals the flow the browser keeps (a key of its own is derived from it).
        sign_in_external: ``Engine.sign_in_external``.
        finished: where finished flows are recorded; default: in this process alone.
        clock: wall-clock seconds, for tests.
    """

    def __init__(
        self,
        settings: Settings,
        signer: Signer,
        sign_in_external: SignInExternal,
        finished: FinishedFlows | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client = OidcClient(settings.oidc, settings.auth.enabled)
        self.flow_s = settings.oidc.flow_minutes * 60
        self._seal = Signer(signer.derive("oidc-flow").encode())
        self._sign_in = sign_in_external
        self._clock = clock
        self._finished = finished
        self._here: dict[str, float] = {}  # without ``finished``: state -> when it may be forgotten
        self._lock = threading.Lock()

    @classmethod
    def of(cls, engine: Engine) -> OidcSignIn:
        """For ``engine``: its settings and signer, finished flows in its shared database (or the state dir)."""
        settings = engine.settings
        target = engine.database if engine.database is not None else settings.paths.state_dir / FILE
        return cls(settings, engine.signer, engine.sign_in_external, FinishedFlows(target))

    @property
    def label(self) -> str:
        return self.client.settings.label

    def start(self, redirect_uri: str) -> tuple[str, str, str]:
        """(the provider's address to send the browser to, the flow's state, the sealed flow to keep)."""
        url, flow = self.client.start(redirect_uri, self._clock())
        packed = base64.urlsafe_b64encode(json.dumps(asdict(flow)).encode()).decode().rstrip("=")
        return url, flow.state, self._seal.sign(packed)

    def finish(self, sealed: str | None, answer: Mapping[str, str], client: str = "") -> SignedIn:
        """The user the provider's ``answer`` (the callback's query) signs in, for the flow the browser kept
        (``sealed``); ``OidcFailure`` when it does not check out, ``reason`` "no_role" or "name" when the
        accounts refuse the user."""
        flow = self._unseal(sealed)
        if self._clock() - flow.started > self.flow_s:
            raise OidcFailure("expired", f"the sign-in took over {self.flow_s / 60:.4g} minutes")
        code = self.client.code(flow, answer)  # an answer for another flow, or forged, leaves this one usable
        self._use_once(flow)
        identity = self.client.finish(flow, code)
        try:
            actor = self._sign_in(identity.name, identity.groups, "oidc", client)
        except LoginRefused as refused:
            # groups that give no role, or a name this app cannot give them (a local account's, or malformed)
            reason = "no_role" if isinstance(refused, NoRoleRefused) else "name"
            raise OidcFailure(reason, str(refused)) from None
        return SignedIn(actor, identity.subject)

    def end_session_url(self, post_logout_redirect: str) -> str | None:
        return self.client.end_session_url(post_logout_redirect)

    def _unseal(self, sealed: str | None) -> Flow:
        packed = self._seal.unsign(sealed)
        if packed is None:  # no flow kept, or one this app did not make
            raise OidcFailure("invalid", "no sign-in was started from this browser, or its record was altered")
        try:
            fields = json.loads(base64.urlsafe_b64decode(packed + "=" * (-len(packed) % 4)))
            return Flow(**fields)
        except (ValueError, TypeError) as exc:  # signed here, yet unreadable: made by another version
            raise OidcFailure("invalid", f"the sign-in's record cannot be read: {exc}") from None

    def _use_once(self, flow: Flow) -> None:
        now, until = self._clock(), flow.started + self.flow_s
        if self._finished is not None:
            first = self._finished.first_use(flow.state, until, now)
        else:
            with self._lock:
                for state in [s for s, forget in self._here.items() if forget < now]:
                    del self._here[state]
                first = flow.state not in self._here
                self._here[flow.state] = until
        if not first:
            raise OidcFailure("expired", "this sign-in was finished already")
