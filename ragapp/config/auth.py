"""Settings of who signs in and how (local accounts, an OpenID Connect provider, an LDAP directory), and of the
audit log of what they did."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field, SecretStr

from ragapp.core.access import Role


class AuthSettings(BaseModel):
    enabled: bool = Field(
        False,
        description="Ask people to sign in (users from `users_file`, managed with `python -m ragapp.users`). Off: "
        "one local user who may do everything.",
    )
    users_file: Path | None = Field(
        None,
        description="The accounts file (bcrypt hashes, never passwords); default: users.json in the state dir. With "
        "store.database_url the accounts are in the database instead (this file, if there, is taken over once).",
    )
    max_failed_logins: int = Field(
        5, ge=1, description="Failed sign-ins, per name and per address, before further tries wait."
    )
    lockout_s: float = Field(300.0, gt=0, description="The window those failures are counted in, and the wait.")
    bcrypt_rounds: int = Field(12, ge=4, le=16, description="bcrypt cost of new password hashes (2^N rounds).")
    session_hours: float = Field(
        12.0,
        gt=0,
        description="A sign-in lasts this long (hours, fractions allowed); the next request after it shows the "
        "sign-in page again. Sign-ins are kept in the database: they survive restarts and hold on every replica.",
    )
    session_recheck_s: float = Field(
        5.0,
        ge=0,
        le=60,
        description="Seconds an app process trusts what it last read of a sign-in, so a page's many requests do "
        "not each ask the database: a sign-in ended elsewhere (another replica, the users command) is refused "
        "within this time; one ended by the same process at once.",
    )
    group_roles: dict[str, Role] = Field(
        default_factory=dict,
        description='Roles given by the groups of a company sign-in (OIDC or LDAP), e.g. {"rag-admins": "admin", '
        '"staff": "editor"}: a user gets the highest role any of their groups maps to, else `default_role`.',
    )
    default_role: Role | None = Field(
        "reader",
        description="The role of a company sign-in whose groups map to none; `null` refuses such sign-ins.",
    )

    def users_path(self, state_dir: Path) -> Path:
        return self.users_file if self.users_file is not None else state_dir / "users.json"


class OidcSettings(BaseModel):
    """Sign-in with an OpenID Connect provider (``ragapp.accounts.oidc``)."""

    enabled: bool = Field(
        False, description="Offer sign-in with the OpenID Connect provider below (needs auth.enabled)."
    )
    issuer: str | None = Field(
        None,
        description="The provider's issuer URL, e.g. https://sso.example.com/realms/staff: its endpoints and keys "
        "are read from ISSUER/.well-known/openid-configuration.",
    )
    client_id: str | None = Field(None, description="This app's client id at the provider.")
    client_secret: SecretStr | None = Field(
        None,
        description="This app's client secret at the provider; none: a public client (PKCE alone proves the "
        "sign-in came from here).",
    )
    scopes: str = Field(
        "openid profile email groups",
        description="The scopes asked for, space-separated; `openid` is needed, `groups` is what many providers "
        "(Authentik, oidc-provider) ask for to put the groups in.",
    )
    username_claim: str = Field(
        "preferred_username",
        description="The claim that names the user here; without it, `email`, then `sub`.",
    )
    groups_claim: str = Field(
        "groups",
        description="The claim with the user's groups; dots reach into nested claims, e.g. `realm_access.roles` "
        "(Keycloak's realm roles). Read from the ID token, else from the userinfo endpoint.",
    )
    public_url: str | None = Field(
        None,
        description="The app's address as browsers see it, e.g. https://rag.example.com (root path included if "
        "any): the provider sends the browser back to PUBLIC_URL/oidc/callback. Default: from the request, "
        "which behind a proxy needs ui.trust_proxy.",
    )
    label: str = Field("your company account", description='The button on the sign-in page says "Sign in with LABEL".')
    flow_minutes: float = Field(
        10.0, gt=0, description="How long a sign-in at the provider may take before it has to start again."
    )
    timeout_s: float = Field(10.0, gt=0, description="How long to wait for the provider's answers (seconds).")

    def problems(self, accounts: bool) -> list[str]:
        """What keeps this configuration from working ([]: nothing); ``accounts``: whether auth.enabled."""
        return [english for english, _chinese in self.problems_said(accounts)]

    def problems_said(self, accounts: bool) -> list[tuple[str, str]]:
        """``problems`` in English and Chinese, for the start-up error (the app stops with both)."""
        if not self.enabled:
            return []
        missing = [f"RAGAPP_OIDC__{name.upper()}" for name in ("issuer", "client_id") if not getattr(self, name)]
        found = []
        if missing:
            names = " and ".join(missing)
            found.append((f"OIDC sign-in is on but {names} {'is' if len(missing) == 1 else 'are'} not set",
                          f"已启用 OIDC 登录，但未设置 {'、'.join(missing)}"))  # fmt: skip
        if not accounts:
            found.append(("OIDC sign-in needs accounts: set RAGAPP_AUTH__ENABLED=true",
                          "OIDC 登录需要启用账户：请设置 RAGAPP_AUTH__ENABLED=true"))  # fmt: skip
        if "openid" not in self.scopes.split():
            found.append((f"RAGAPP_OIDC__SCOPES must include openid (it is {self.scopes!r})",
                          f"RAGAPP_OIDC__SCOPES 必须包含 openid（当前为 {self.scopes!r}）"))  # fmt: skip
        return found


class LdapSettings(BaseModel):
    """Sign-in against an LDAP directory (``ragapp.accounts.ldap``): the user's own bind checks the password,
    their groups give the role (``auth.group_roles``). The user's entry is found by ``user_dn_template``, or
    else by a search under ``user_search_base``; checked when the app starts (``LdapDirectory``)."""

    enabled: bool = Field(
        False,
        description="Check a name no local account has against the LDAP directory below (needs auth.enabled).",
    )
    url: str = Field(
        "", description="The directory server: ldaps://host (TLS from the start, port 636) or ldap://host[:port]."
    )
    start_tls: bool = Field(False, description="With an ldap:// URL: switch to TLS (StartTLS) before any password.")
    ca_file: Path | None = Field(
        None, description="CA certificates (PEM) the server's certificate is checked with; default: the system's."
    )
    connect_timeout_s: float = Field(5.0, gt=0, description="Seconds to wait for the directory to take the call.")
    timeout_s: int = Field(
        10, ge=1, description="Seconds (whole: ldap3 sets the socket's receive timeout so) to wait for each answer."
    )
    user_dn_template: str = Field(
        "",
        description='The user\'s entry made from the name typed, e.g. "uid={name},ou=people,dc=example,dc=org" '
        "(the name escaped); empty: search for it under user_search_base instead.",
    )
    bind_dn: str = Field(
        "", description="Who searches for the user's entry (a service account); empty: an anonymous search."
    )
    bind_password: SecretStr = Field(SecretStr(""), description="The password of bind_dn.")
    user_search_base: str = Field("", description='Where users are searched for, e.g. "ou=people,dc=example,dc=org".')
    user_filter: str = Field(
        "(uid={name})",
        description="Which entry under user_search_base is the user ({name}: the name typed, escaped); for Active "
        'Directory "(sAMAccountName={name})".',
    )
    name_attribute: str = Field(
        "uid",
        description="The attribute of the user's entry that is their name here (as the directory spells it); "
        'Active Directory: "sAMAccountName".',
    )
    group_search_base: str = Field(
        "", description='Where the user\'s groups are searched for, e.g. "ou=groups,dc=example,dc=org"; empty: none.'
    )
    group_filter: str = Field(
        "(member={dn})",
        description="Which groups the user is in ({dn}: their entry, {name}: their name, both escaped): "
        '"(member={dn})" for groupOfNames and Active Directory, "(memberUid={name})" for posixGroup.',
    )
    group_name_attribute: str = Field("cn", description="The attribute of a group entry that is its name here.")


class AuditSettings(BaseModel):
    """The append-only audit log (``ragapp.audit``)."""

    enabled: bool = Field(True, description="Record sign-ins, every change and every question's scope.")
    retention_days: int = Field(
        365,
        ge=0,
        description="Keep audit records this many days; older ones are swept away (at start and once a day). "
        "0 keeps them forever.",
    )
    log_questions: bool = Field(
        False,
        description="Keep each question's text in its audit record too. Off: only who searched which knowledge "
        "bases, when and from where.",
    )
    file: Path | None = Field(
        None,
        description="The audit log's SQLite file; default: audit.sqlite3 in the state dir. With "
        "store.database_url the log is a table of that database instead.",
    )

    def path(self, state_dir: Path) -> Path:
        return self.file if self.file is not None else state_dir / "audit.sqlite3"
