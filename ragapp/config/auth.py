"""Settings of who signs in and how (local accounts, an OpenID Connect provider, an LDAP directory), and of the
audit log of what they did."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

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
        "sign-in page again.",
    )
    group_roles: dict[str, Role] = Field(
        default_factory=dict,
        description='Roles given by the groups of a company sign-in (OIDC or LDAP), e.g. {"rag-admins": "admin", '
        '"staff": "editor"}: a user gets the highest role any of their groups maps to, else `default_role`.',
    )
    default_role: Role | None = Field(
        "reader",
        description="The role of a company sign-in whose groups map to none; null refuses such sign-ins.",
    )

    def users_path(self, state_dir: Path) -> Path:
        return self.users_file if self.users_file is not None else state_dir / "users.json"


class OidcSettings(BaseModel):
    """Sign-in with an OpenID Connect provider (``ragapp.accounts.oidc``)."""

    enabled: bool = Field(
        False, description="Offer sign-in with the OpenID Connect provider below (needs auth.enabled)."
    )


class LdapSettings(BaseModel):
    """Sign-in against an LDAP directory (``ragapp.accounts.ldap``)."""

    enabled: bool = Field(False, description="Check names and passwords against the LDAP directory below too.")


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
