"""Sign-in against an LDAP directory (OpenLDAP, Active Directory, ...), with ldap3.

The directory checks the password: the user's own bind with it succeeds or not, so no password is read or kept
here. Their entry is found from the name typed, by ``user_dn_template`` or by a search as a service account
(``bind_dn``); their groups by a search under ``group_search_base``; ``Accounts`` maps those to a role like any
company sign-in's (``ragapp.accounts.external``).

Every value put into a DN or a filter is escaped (``escape_rdn``, ``escape_filter_chars``): a name like
``*)(uid=*`` is looked for as it is, never read as part of the query. An empty password is refused before any
bind, as LDAP takes a simple bind with a name and no password as an anonymous one, which "succeeds". Each sign-in
opens its own connection with connect and receive timeouts, so a directory that is down or stalls gives
``DirectoryUnavailable`` in seconds, logged, never a hang; a constructor only checks the settings.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

from ldap3 import BASE, NONE, SUBTREE, Connection, Server, Tls
from ldap3.core.exceptions import LDAPCommunicationError, LDAPException, LDAPStartTLSError
from ldap3.utils.conv import escape_filter_chars
from ldap3.utils.dn import escape_rdn

from ragapp.config.auth import LdapSettings
from ragapp.core.errors import ConfigError, DirectoryUnavailable

log = logging.getLogger(__name__)

NO_ANSWER = "The directory did not answer: try again in a moment, or tell an administrator."
NOT_ASKED = "The directory could not be asked: tell an administrator (the server log says why)."
INVALID_CREDENTIALS = 49  # the LDAP result code of a wrong name or password


@dataclass(frozen=True)
class DirectoryUser:
    """Who the directory vouched for: ``name`` as the directory spells it (``name_attribute``), and the names
    of their groups."""

    name: str
    groups: tuple[str, ...]


class LdapDirectory:
    """Checks names and passwords against the directory of ``settings``; ``ConfigError`` when they cannot work."""

    def __init__(self, settings: LdapSettings) -> None:
        _check(settings)
        self.settings = settings
        # ldap3's Tls checks nothing unless told to (CERT_NONE by default): the certificate and its host name
        tls = Tls(validate=ssl.CERT_REQUIRED, ca_certs_file=str(settings.ca_file) if settings.ca_file else None)
        # ldap3 takes ldap[s]://host[:port] itself; get_info=NONE: no schema read on each connection.
        self._server = Server(settings.url, tls=tls, connect_timeout=settings.connect_timeout_s, get_info=NONE)
        if not (settings.url.startswith("ldaps://") or settings.start_tls) and not _loopback(self._server.host):
            log.warning("LDAP: %s is plain ldap:// without StartTLS; passwords cross the network readable",
                        settings.url)  # fmt: skip

    def authenticate(self, name: str, password: str) -> DirectoryUser | None:
        """The user when the directory takes ``password`` as theirs; None for a wrong name or password alike.
        ``DirectoryUnavailable`` when the directory did not answer."""
        if not name or not password:
            return None  # an unauthenticated bind would "succeed": never send one
        try:
            return self._authenticate(name, password)
        except (LDAPCommunicationError, LDAPStartTLSError, OSError) as exc:
            log.error("LDAP: %s did not answer for %r: %s", self.settings.url, name, exc)
            raise DirectoryUnavailable(NO_ANSWER) from None
        except LDAPException as exc:
            log.error("LDAP: asking %s for %r failed: %r", self.settings.url, name, exc)
            raise DirectoryUnavailable(NOT_ASKED) from None

    def _authenticate(self, name: str, password: str) -> DirectoryUser | None:
        s = self.settings
        if s.user_dn_template:
            dn = s.user_dn_template.format(name=escape_rdn(name))
            with self._bound(dn, password) as user:
                if user is None:
                    return None
                entry = _one(self._search(user, dn, "(objectClass=*)", s.name_attribute, scope=BASE))
                found = _first(entry, s.name_attribute) if entry else ""
                return DirectoryUser(found or name, self._groups(user, dn, found or name))
        with self._bound(s.bind_dn, s.bind_password.get_secret_value(), service=True) as service:
            assert service is not None  # a refused service bind raised
            filter_ = s.user_filter.format(name=escape_filter_chars(name))
            entries = self._search(service, s.user_search_base, filter_, s.name_attribute)
            if len(entries) != 1:
                if entries:
                    log.warning("LDAP: %d entries match %s; the name must find one", len(entries), filter_)
                return None
            dn, found = entries[0]["dn"], _first(entries[0], s.name_attribute) or name
            with self._bound(dn, password) as user:
                if user is None:
                    return None
            return DirectoryUser(found, self._groups(service, dn, found))  # as the service: users may not read

    @contextmanager
    def _bound(self, dn: str, password: str, service: bool = False) -> Iterator[Connection | None]:
        """A connection bound as ``dn``, or None when the directory refuses that name and password (a refused
        service account raises: it is the app's setting that is wrong, not the user's password)."""
        conn = Connection(
            self._server,
            user=dn or None,  # a service search with no bind_dn: anonymous
            password=password or None,
            receive_timeout=self.settings.timeout_s,
            auto_referrals=False,  # a referral would call another server, with no timeouts of ours
            read_only=True,
        )
        try:
            conn.open()
            if self.settings.start_tls and not conn.start_tls():
                raise LDAPStartTLSError(f"StartTLS refused: {conn.result}")
            if not conn.bind():
                code = conn.result.get("result")
                if service:
                    log.error("LDAP: the service account %r was refused: %s", dn, conn.result.get("description"))
                    raise DirectoryUnavailable(NOT_ASKED)
                if code != INVALID_CREDENTIALS:
                    log.warning("LDAP: bind as %r refused: %s", dn, conn.result.get("description"))
                yield None
                return
            yield conn
        finally:
            with suppress(LDAPException, OSError):  # a socket already broken must not hide why it broke
                conn.unbind()

    def _search(self, conn: Connection, base: str, filter_: str, attribute: str, scope: str = SUBTREE) -> list[Any]:
        """The entries (ldap3's dicts with "dn" and "attributes") ``filter_`` finds under ``base``."""
        s = self.settings
        conn.search(base, filter_, scope, attributes=[attribute], size_limit=50, time_limit=s.timeout_s + 1)
        code = conn.result.get("result")
        if code not in (0, 4, 32):  # success, size limit exceeded, no such object
            log.warning("LDAP: search %s under %r failed: %s", filter_, base, conn.result.get("description"))
        return [r for r in conn.response or [] if r.get("type") == "searchResEntry"]

    def _groups(self, conn: Connection, dn: str, name: str) -> tuple[str, ...]:
        s = self.settings
        if not s.group_search_base:
            return ()
        filter_ = s.group_filter.format(dn=escape_filter_chars(dn), name=escape_filter_chars(name))
        entries = self._search(conn, s.group_search_base, filter_, s.group_name_attribute)
        return tuple(sorted({g for e in entries if (g := _first(e, s.group_name_attribute))}))


def _first(entry: dict[str, Any] | None, attribute: str) -> str:
    """The first value of ``attribute`` in ``entry`` ("" when it has none), found whatever its case."""
    attributes = (entry or {}).get("attributes", {})
    value = next((v for k, v in attributes.items() if k.lower() == attribute.lower()), "")
    if isinstance(value, list):
        value = value[0] if value else ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _one(entries: list[Any]) -> dict[str, Any] | None:
    return entries[0] if len(entries) == 1 else None


def _loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def _check(s: LdapSettings) -> None:
    """``ConfigError`` naming the setting when ``s`` cannot work."""
    if not s.url.strip():
        raise ConfigError("RAGAPP_LDAP__ENABLED is on but RAGAPP_LDAP__URL is empty: set ldaps://your-directory.")
    if not s.url.startswith(("ldap://", "ldaps://")):
        raise ConfigError(f"RAGAPP_LDAP__URL {s.url!r} is not an LDAP address: ldaps://host or ldap://host[:port].")
    if s.start_tls and s.url.startswith("ldaps://"):
        raise ConfigError("RAGAPP_LDAP__START_TLS is for ldap:// URLs; ldaps:// is TLS already: turn one off.")
    if s.ca_file is not None and not s.ca_file.is_file():
        raise ConfigError(f"RAGAPP_LDAP__CA_FILE {s.ca_file} is not a file.")
    if s.user_dn_template:
        _placeholders("RAGAPP_LDAP__USER_DN_TEMPLATE", s.user_dn_template, "name", needed=("name",))
    elif not s.user_search_base:
        raise ConfigError(
            "LDAP needs a way to find the user's entry: set RAGAPP_LDAP__USER_DN_TEMPLATE "
            '(e.g. "uid={name},ou=people,dc=example,dc=org") or RAGAPP_LDAP__USER_SEARCH_BASE.'
        )
    else:
        _placeholders("RAGAPP_LDAP__USER_FILTER", s.user_filter, "name", needed=("name",))
    if s.group_search_base:
        _placeholders("RAGAPP_LDAP__GROUP_FILTER", s.group_filter, "dn", "name")


def _placeholders(setting: str, text: str, *known: str, needed: tuple[str, ...] = ()) -> None:
    try:
        text.format(**{k: "x" for k in known})
    except (KeyError, IndexError, ValueError) as exc:
        raise ConfigError(
            f"{setting} {text!r} may only hold {', '.join('{' + k + '}' for k in known)}: {exc}"
        ) from None
    missing = [k for k in needed if "{" + k + "}" not in text]
    if missing:
        raise ConfigError(f"{setting} {text!r} must hold {{{missing[0]}}}.")
