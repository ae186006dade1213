"""Where a website source may go: the site's scope (one host, one path prefix, http or https) and the addresses
its host may be reached at.

Scope: a URL is the site's when it has the start's host and port (``http`` upgraded to ``https`` on the default
ports counts as the same) and its path starts with the start's folder (``https://host/docs/intro.html`` follows
``https://host/docs/``). Nothing else is ever requested: not another host, not a redirect leaving the prefix.

Addresses (SSRF): every connection resolves the host itself and connects to the very address it checked (so a
name that answers a public address at first and 127.0.0.1 later, DNS rebinding, is caught at connect time). Link-
local addresses (169.254.0.0/16: the clouds' metadata service; fe80::/10), multicast, unspecified and reserved
ones are never reached. Loopback and private addresses are reached only by a site whose start host is of that
same kind (an intranet wiki, a test server on 127.0.0.1): a public site's host that comes to resolve to one is
refused. docs/security.md states the rule.
"""

from __future__ import annotations

import concurrent.futures
import ipaddress
import math
import socket
import ssl
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpcore2

from ragapp.sync.sources import SyncError

AddressKind = Literal["loopback", "private", "global", "never"]
_DEFAULT_PORTS = {"http": 80, "https": 443}
MAX_URL_CHARS = 2000  # a longer address is a generated one (or an attack), not a page
RESOLVE_S = 10.0  # the longest a name lookup may take before the request fails


def address_kind(address: str) -> AddressKind:
    """What kind of address ``address`` (an IPv4 or IPv6 literal) is, for the rule in the module's docstring."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local or ip.is_multicast or ip.is_unspecified or ip.is_reserved:
        return "never"
    return "global" if ip.is_global else "private"


def resolve_host(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to (the system's resolver), each once, in its order. A seam the tests
    replace to play a name that changes its answer."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class AddressRefused(Exception):
    """A connection the address rule forbids: ``host`` resolved only to addresses of kinds not allowed."""

    def __init__(self, host: str, address: str) -> None:
        super().__init__(f"{host} resolves to {address}, an address a website source may not reach")
        self.host = host
        self.address = address


def normalise(url: str, base: str = "") -> str | None:
    """``url`` (relative to ``base``) as one spelling: absolute, fragment dropped, scheme and host in lower case,
    the default port left out, an empty path made "/"; None for anything but an http(s) URL of sane length."""
    try:
        parts = urlsplit(urljoin(base, url.strip()) if base else url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname or parts.username or parts.password:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    out = urlunsplit((scheme, netloc, _without_dots(parts.path) or "/", parts.query, ""))
    return out if len(out) <= MAX_URL_CHARS else None


def _without_dots(path: str) -> str:
    """``path`` with its "." and ".." segments resolved (RFC 3986, 5.2.4): ``/a/b/../c`` is ``/a/c``."""
    if "/." not in path:
        return path
    out: list[str] = []
    segments = path.split("/")
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "..":
            if len(out) > 1:
                out.pop()
            if last:
                out.append("")
        elif segment == ".":
            if last:
                out.append("")
        else:
            out.append(segment)
    return "/".join(out)


@dataclass(frozen=True)
class Scope:
    """The site a source follows: ``start`` and every URL on its host under ``prefix`` (the start's folder)."""

    start: str
    scheme: str
    host: str
    port: int
    prefix: str  # the path every page's starts with, ending in "/"

    @classmethod
    def of(cls, location: str) -> Scope:
        """The scope of a source whose start (a page or a sitemap) is ``location``.

        Raises:
            SyncError: not an http(s) URL with a host.
        """
        start = normalise(location)
        if start is None:
            raise SyncError(
                f"{location!r} is not a website address: give an http:// or https:// URL, e.g. "
                "https://docs.example.com/manual/ (without a user name or password in it)."
            )
        parts = urlsplit(start)
        prefix = parts.path[: parts.path.rfind("/") + 1]
        return cls(start, parts.scheme, parts.hostname or "", _port(parts.scheme, parts.port), prefix)

    def contains(self, url: str) -> bool:
        """Whether ``url`` (normalised) is a page of the site."""
        parts = urlsplit(url)
        if parts.hostname != self.host or not parts.path.startswith(self.prefix):
            return False
        port = _port(parts.scheme, parts.port)
        upgraded = (self.scheme, self.port, parts.scheme, port) == ("http", 80, "https", 443)
        return (parts.scheme, port) == (self.scheme, self.port) or upgraded

    def relative(self, url: str) -> str:
        """``url``'s place in the site: its path below the prefix, with its query (what the patterns match)."""
        parts = urlsplit(url)
        rel = parts.path[len(self.prefix) :] if parts.path.startswith(self.prefix) else parts.path.lstrip("/")
        return rel + (f"?{parts.query}" if parts.query else "")


def _port(scheme: str, port: int | None) -> int:
    return port if port is not None else _DEFAULT_PORTS.get(scheme, 0)


def start_kinds(host: str, port: int, timeout_s: float = RESOLVE_S) -> frozenset[AddressKind]:
    """The kinds of address the site's start host has now: those its connections may reach for this crawl.

    Raises:
        SyncError: the name does not resolve, or only to addresses never reached.
    """
    try:
        addresses = _resolve(host, port, timeout_s)
    except OSError as exc:
        raise SyncError(f"{host} could not be resolved ({exc}); check the site's address.") from None
    kinds = frozenset(address_kind(a) for a in addresses) - {"never"}
    if not kinds:
        raise AddressRefused(host, addresses[0] if addresses else "no address")
    return kinds


def _resolve(host: str, port: int, timeout_s: float) -> list[str]:
    """``resolve_host`` bounded in time: the system's resolver has no timeout of its own that we set."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragapp-resolve")
    try:
        return pool.submit(resolve_host, host, port).result(timeout=timeout_s)
    except concurrent.futures.TimeoutError:
        raise OSError(f"no answer from the name server within {timeout_s:g} s") from None
    finally:
        pool.shutdown(wait=False)  # a lookup still hanging ends on its own; nobody waits for it


class _DeadlineStream(httpcore2.NetworkStream):
    """A connection whose every read and write is bounded by the request's deadline, not only by the time
    between two packets: a server dripping a byte every few seconds is cut off at the deadline."""

    def __init__(self, inner: httpcore2.NetworkStream, backend: GuardedBackend) -> None:
        self._inner = inner
        self._backend = backend

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._backend.bounded(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._backend.bounded(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.NetworkStream:
        bounded = self._backend.bounded(timeout, httpcore2.ConnectTimeout)
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, bounded), self._backend)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class GuardedBackend(httpcore2.SyncBackend):
    """httpcore's network backend with the address rule and the request's deadline: ``allowed`` are the kinds
    of address connections may reach, ``deadline`` (``time.monotonic``) ends the request under way."""

    def __init__(self, allowed: Iterable[AddressKind] = ("global",)) -> None:
        self.allowed = frozenset(allowed)
        self.deadline = math.inf

    def bounded(self, timeout: float | None, late: type[Exception]) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise late("the request's time budget is spent")
        return left if timeout is None else min(timeout, left)

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        limit = self.bounded(timeout, httpcore2.ConnectTimeout)
        try:
            addresses = _resolve(host, port, min(limit, RESOLVE_S))
        except OSError as exc:
            raise httpcore2.ConnectError(f"{host} could not be resolved ({exc})") from None
        usable = [a for a in addresses if address_kind(a) in self.allowed]
        if not usable:
            raise AddressRefused(host, addresses[0] if addresses else "no address")
        return _DeadlineStream(self._connect(usable, port, local_address, socket_options), self)

    def _connect(
        self, addresses: Sequence[str], port: int, local_address: str | None, options: Iterable[Any] | None
    ) -> httpcore2.NetworkStream:
        """The first of ``addresses`` that answers: connected by address, so the one checked is the one reached."""
        failure: Exception | None = None
        for address in addresses:
            try:
                return super().connect_tcp(
                    address, port, self.bounded(None, httpcore2.ConnectTimeout), local_address, options
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None
        raise failure
