"""The OpenID Connect side of a company sign-in: the authorization code flow with PKCE against the configured
provider, ending in who the user is and which groups they are in (``ragapp.accounts.external`` then gives the
role). No web server here: ``ragapp.engine.oidc`` keeps a flow between the two requests and ``ragapp.serve.oidc``
answers the browser.

authlib does the OAuth 2 part (the authorization URL with its S256 challenge, the code exchange with the client's
authentication) and joserfc the ID token's signature (the provider's published keys) and its claims (iss, aud,
exp, nonce). The provider's endpoints come from its discovery document, read on first use and kept.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx2
from authlib.common.security import generate_token, is_secure_transport
from authlib.integrations.httpx_client import OAuth2Client, OAuthError
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from ragapp.config.auth import OidcSettings
from ragapp.core.errors import ConfigError, RagAppError

log = logging.getLogger(__name__)

# The signature algorithms an ID token may use; "none" and the HMAC family (keyed with the client secret, which a
# public client has not got) are left out.
ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]
LEEWAY_S = 60  # clocks of the provider and the app may differ a little
ENDPOINTS = ("authorization_endpoint", "token_endpoint", "jwks_uri")  # what a sign-in needs of the discovery


class OidcFailure(RagAppError):
    """A company sign-in that did not happen. ``reason`` says why, for the sign-in page's message:
    "unavailable" (the provider did not answer), "refused" (the provider or the user said no), "expired"
    (the flow took too long, or was used already), "invalid" (a state or token that does not check out),
    "no_name" (no claim names the user); the server adds "failed" for anything unforeseen."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


@dataclass(frozen=True)
class Flow:
    """One sign-in under way: what the callback must see again. Kept by the browser, sealed (``ragapp.engine.oidc``)."""

    state: str
    nonce: str
    verifier: str  # PKCE: the provider gets its S256 hash now, the verifier itself with the code
    redirect_uri: str
    started: float  # wall-clock seconds: replicas share the clock, not the memory


@dataclass(frozen=True)
class Identity:
    """Who the provider says signed in."""

    name: str
    groups: tuple[str, ...]
    subject: str


class OidcClient:
    """The configured provider, for the two ends of the flow and for signing out."""

    def __init__(self, settings: OidcSettings, accounts: bool = True) -> None:
        problems = settings.problems_said(accounts)
        if problems:  # the app stops with this at start-up: said in both languages, as its other start-up errors
            raise ConfigError(
                "; ".join(en for en, _zh in problems)
                + " (docs/accounts.md, 'OpenID Connect').\n"
                + "；".join(zh for _en, zh in problems)
                + "（见 docs/accounts.md 的“OpenID Connect”一节）。"
            )
        assert settings.issuer is not None and settings.client_id is not None  # problems() says so
        if not is_secure_transport(settings.issuer):  # authlib would refuse every sign-in over it
            raise ConfigError(
                f"RAGAPP_OIDC__ISSUER must be an https address (or http on loopback), not {settings.issuer!r}; "
                "AUTHLIB_INSECURE_TRANSPORT=1 in the environment allows plain http, for trials only.\n"
                f"RAGAPP_OIDC__ISSUER 必须是 https 地址（本机回环地址可用 http），而不是 {settings.issuer!r}；"
                "在环境中设置 AUTHLIB_INSECURE_TRANSPORT=1 可允许普通 http，仅供试用。"
            )
        self.settings = settings
        self.issuer = settings.issuer.rstrip("/")
        self.client_id = settings.client_id
        self._metadata: dict[str, Any] | None = None
        self._keys: KeySet | None = None
        self._lock = threading.Lock()

    # -- the provider -----------------------------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        """The discovery document, read once (again after a failure)."""
        with self._lock:
            if self._metadata is None:
                url = f"{self.issuer}/.well-known/openid-configuration"
                found = self._get_json(url)
                if str(found.get("issuer", "")).rstrip("/") != self.issuer:
                    raise OidcFailure("unavailable", f"{url} names another issuer: {found.get('issuer')!r}")
                missing = [k for k in ENDPOINTS if not isinstance(found.get(k), str)]
                if missing:
                    raise OidcFailure("unavailable", f"{url} gives no {', '.join(missing)}")
                self._metadata = found
            return self._metadata

    def _key_set(self, refresh: bool = False) -> KeySet:
        with self._lock:
            keys = self._keys
        if keys is None or refresh:
            try:
                keys = KeySet.import_key_set(self._get_json(self.metadata()["jwks_uri"]))  # type: ignore[arg-type]
            except (JoseError, ValueError, TypeError, KeyError) as exc:
                raise OidcFailure("unavailable", f"the provider's keys cannot be read: {exc}") from None
            with self._lock:
                self._keys = keys
        return keys

    def _get_json(self, url: str, token: str | None = None) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        try:
            reply = httpx2.get(url, headers=headers, timeout=self.settings.timeout_s)
            reply.raise_for_status()
            found = reply.json()
        except (httpx2.HTTPError, ValueError) as exc:
            raise OidcFailure("unavailable", f"the OpenID provider did not answer {url}: {exc}") from None
        if not isinstance(found, dict):
            raise OidcFailure("unavailable", f"{url} did not answer with a JSON object")
        return found

    def _oauth(self, redirect_uri: str) -> OAuth2Client:
        secret = self.settings.client_secret
        return OAuth2Client(
            client_id=self.client_id,
            client_secret=secret.get_secret_value() if secret else None,
            token_endpoint_auth_method="client_secret_basic" if secret else "none",
            scope=self.settings.scopes,
            redirect_uri=redirect_uri,
            code_challenge_method="S256",
            timeout=self.settings.timeout_s,
        )

    # -- the flow ---------------------------------------------------------------------------------

    def start(self, redirect_uri: str, now: float) -> tuple[str, Flow]:
        """Where to send the browser, and the flow to keep until it comes back to ``redirect_uri``."""
        endpoint = self.metadata()["authorization_endpoint"]
        flow = Flow(generate_token(32), generate_token(32), generate_token(48), redirect_uri, now)
        with self._oauth(redirect_uri) as oauth:
            url, _ = oauth.create_authorization_url(
                endpoint, state=flow.state, code_verifier=flow.verifier, nonce=flow.nonce
            )
        return str(url), flow

    def code(self, flow: Flow, answer: Mapping[str, str]) -> str:
        """The code in the provider's answer (the callback's query) to ``flow``, once the answer is the one
        ``flow`` waits for; ``OidcFailure`` when it is not, or is a refusal."""
        if not secrets.compare_digest(answer.get("state", ""), flow.state):
            raise OidcFailure("invalid", "the sign-in came back with another state than it left with")
        if "iss" in answer and answer["iss"] != self.metadata()["issuer"]:  # RFC 9207: another provider's answer
            raise OidcFailure("invalid", f"the answer came from another issuer: {answer['iss']!r}")
        if "error" in answer:
            detail = answer.get("error_description") or answer["error"]
            raise OidcFailure("refused", f"the OpenID provider refused the sign-in: {detail}")
        code = answer.get("code")
        if not code:
            raise OidcFailure("invalid", "the OpenID provider sent the browser back without a code")
        return code

    def finish(self, flow: Flow, code: str) -> Identity:
        """Who signed in: ``code`` (``code()``) exchanged, the ID token checked, the claims read."""
        token = self._exchange(flow, code)
        claims = self._id_claims(str(token.get("id_token", "")), flow)
        name_claim, groups_claim = self.settings.username_claim, self.settings.groups_claim
        if claim(claims, name_claim) is None or claim(claims, groups_claim) is None:
            claims = {**self._userinfo(str(token.get("access_token", "")), claims["sub"]), **claims}
        name = next((v for c in (name_claim, "email", "sub") if isinstance(v := claim(claims, c), str) and v), None)
        if name is None:
            raise OidcFailure("no_name", f"no {name_claim}, email or sub claim names the user")
        return Identity(name.strip(), group_names(claim(claims, groups_claim)), str(claims["sub"]))

    def _exchange(self, flow: Flow, code: str) -> dict[str, Any]:
        with self._oauth(flow.redirect_uri) as oauth:
            try:
                token = oauth.fetch_token(
                    self.metadata()["token_endpoint"], code=code, code_verifier=flow.verifier, state=flow.state
                )
            except OAuthError as exc:  # invalid_grant: a code used twice, or a verifier that does not match
                raise OidcFailure("invalid", f"the OpenID provider would not exchange the code: {exc}") from None
            except httpx2.HTTPError as exc:
                raise OidcFailure("unavailable", f"the provider's token endpoint did not answer: {exc}") from None
        if not token.get("id_token"):
            raise OidcFailure("invalid", "the OpenID provider's answer has no ID token (is `openid` a scope?)")
        return dict(token)

    def _id_claims(self, id_token: str, flow: Flow) -> dict[str, Any]:
        """The ID token's claims, once its signature, issuer, audience, expiry and nonce check out."""
        try:
            try:
                decoded = jwt.decode(id_token, self._key_set(), algorithms=ALGORITHMS)
            except JoseError:  # perhaps a key the provider started to use since we read them
                decoded = jwt.decode(id_token, self._key_set(refresh=True), algorithms=ALGORITHMS)
            jwt.JWTClaimsRegistry(
                leeway=LEEWAY_S,
                iss={"essential": True, "value": self.metadata()["issuer"]},
                aud={"essential": True, "value": self.client_id},
                exp={"essential": True},
                sub={"essential": True},
                nonce={"essential": True, "value": flow.nonce},
            ).validate(decoded.claims)
        except (JoseError, ValueError) as exc:
            raise OidcFailure("invalid", f"the ID token does not check out: {exc}") from None
        claims = dict(decoded.claims)
        audience = claims["aud"]
        if isinstance(audience, list) and len(audience) > 1 and claims.get("azp") != self.client_id:
            raise OidcFailure("invalid", "the ID token was issued to another party (azp)")
        return claims

    def _userinfo(self, access_token: str, subject: str) -> dict[str, Any]:
        endpoint = self.metadata().get("userinfo_endpoint")
        if not endpoint or not access_token:
            return {}
        info = self._get_json(endpoint, access_token)
        if info.get("sub") != subject:  # OpenID Connect Core 5.3.2: else it is somebody else's
            raise OidcFailure("invalid", "the userinfo endpoint answered about another user")
        return info

    def end_session_url(self, post_logout_redirect: str) -> str | None:
        """Where to send a browser that signs out here to sign out at the provider too (None: the provider has
        no ``end_session_endpoint``, or did not answer)."""
        try:
            endpoint = self.metadata().get("end_session_endpoint")
        except OidcFailure:
            return None
        if not endpoint:
            return None
        query = httpx2.QueryParams(client_id=self.client_id, post_logout_redirect_uri=post_logout_redirect)
        return f"{endpoint}{'&' if '?' in endpoint else '?'}{query}"


def claim(claims: Mapping[str, Any], path: str) -> Any:
    """The claim at ``path``, dots reaching into nested objects ("realm_access.roles"); a claim whose own name
    has dots (some providers use URLs) is taken whole first. None when absent."""
    if path in claims:
        return claims[path]
    value: Any = claims
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def group_names(value: Any) -> tuple[str, ...]:
    """The groups in a claim: a list of names, or one name (some providers send a lone group as a string)."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return ()
    return tuple(dict.fromkeys(v.strip() for v in value if isinstance(v, str) and v.strip()))
