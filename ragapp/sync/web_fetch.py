"""One page of a website, fetched: a conditional GET (``If-None-Match`` / ``If-Modified-Since`` from what the last
sync saw), redirects followed by hand (only within the site, loops caught), the body streamed to a private file
and hashed, read no further than the page limit, the whole request bounded by its deadline (``GuardedBackend``).

Every way a request can go wrong ends in a ``FetchProblem`` carrying the reason as a code and values
(``site_words``), and whether the page keeps what it had (a server error, a timeout) or is gone (404, 410).
httpx2 (the HTTP client the app pins) does the HTTP; proxies from the environment are not used, so the address
rule holds for every connection.
"""

from __future__ import annotations

import hashlib
import os
import ssl
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from email.message import Message
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

import httpcore2
import httpx2

from ragapp.core.types import Said
from ragapp.sync.site_words import site_said
from ragapp.sync.web_address import AddressKind, AddressRefused, GuardedBackend, Scope, normalise

MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_GONE = frozenset({404, 410})
_BLOCK = 64 * 1024
# What a Content-Type says a body is, as the extension the parsers know it by.
CONTENT_TYPES = {
    "text/html": "html", "application/xhtml+xml": "html", "application/pdf": "pdf", "text/plain": "txt",
    "text/markdown": "md", "text/x-markdown": "md", "text/csv": "csv", "application/epub+zip": "epub",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "image/png": "png", "image/jpeg": "jpg", "image/tiff": "tiff", "image/bmp": "bmp", "image/webp": "webp",
}  # fmt: skip
_UNTYPED = frozenset({"", "application/octet-stream", "binary/octet-stream"})
_TEXT = frozenset({"html", "txt", "md", "markdown", "csv"})


@dataclass(frozen=True)
class Validators:
    """What the last sync kept of a page to ask whether it changed since."""

    etag: str = ""
    last_modified: str = ""


@dataclass(frozen=True)
class Fetched:
    """A page as the server gave it: 304 (unchanged since ``Validators``; no body) or 200 with its body in
    ``body``. ``chain``: the URLs that redirected to ``url``, in order."""

    url: str
    status: int
    chain: tuple[str, ...] = ()
    validators: Validators = field(default_factory=Validators)
    file_type: str = ""  # the body's type as an extension ("html", "pdf")
    body: Path | None = None
    size: int = 0
    content_hash: str = ""
    fetched_ns: int = 0


class FetchProblem(Exception):
    """A page not fetched. ``kept``: the page keeps what it had and is tried again at the next sync (a server
    error, a timeout, the network); ``gone``: the server says it is no more (404, 410); ``status``: the HTTP
    status when there was one; ``url``: the page it is about (a redirect's target may differ from the asked)."""

    def __init__(
        self, code: str, url: str, *, kept: bool = False, gone: bool = False, status: int = 0, **values: Any
    ) -> None:
        if status:
            values["status"] = status
        reason, said = site_said(code, url=url, **values)
        super().__init__(reason)
        self.reason: str = reason
        self.said: Said = said
        self.url = url
        self.kept = kept
        self.gone = gone
        self.status = status


def body_type(content_type: str, url: str, readable: Collection[str]) -> str | None:
    """The type (an extension, no dot) a body of ``content_type`` at ``url`` is read as, if the app reads it:
    by its Content-Type, else (none, or a generic binary one) by the URL's extension; plain text named ``.md``
    or ``.csv`` is that."""
    mime = content_type.split(";", 1)[0].strip().lower()
    suffix = PurePosixPath(urlsplit(url).path).suffix.lower()
    if (mime in _UNTYPED or mime == "text/plain") and suffix in readable:
        return suffix.lstrip(".")
    kind = CONTENT_TYPES.get(mime)
    return kind if kind is not None and f".{kind}" in readable else None


def _charset(content_type: str) -> str:
    message = Message()
    message["content-type"] = content_type
    return str(message.get_param("charset") or "").strip().lower()


def _tls_failure(exc: BaseException) -> str | None:
    """The TLS error under ``exc``, said short ("certificate verify failed"), if the failure was TLS."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError | ssl.CertificateError):
            return str(getattr(seen, "reason", None) or seen.__class__.__name__).replace("_", " ").lower()
        seen = seen.__cause__ or seen.__context__
    text = str(exc)
    return "certificate verify failed" if "CERTIFICATE_VERIFY_FAILED" in text else None


class _Transport(httpx2.HTTPTransport):
    """httpx2's transport over httpcore's pool with the guarded backend (the address rule, the deadline)."""

    def __init__(self, backend: GuardedBackend) -> None:
        super().__init__(trust_env=False)
        ssl_context = httpx2.create_ssl_context(trust_env=False)
        # The pool httpx2 builds has the plain backend; this one is the same with the guarded one.
        self._pool = httpcore2.ConnectionPool(ssl_context=ssl_context, network_backend=backend, max_connections=4)


class Fetcher:
    """Fetches pages of ``scope`` for one crawl: ``validators(url)`` says what the last sync kept of a page; each
    request is bounded by ``request_s`` and by the crawl's ``deadline`` (``time.monotonic``), each body by
    ``max_bytes``. ``requests``, ``downloaded`` and ``spent_s`` count the crawl's work. Close it after."""

    def __init__(
        self,
        scope: Scope,
        allowed: Collection[AddressKind],
        user_agent: str,
        request_s: float,
        max_bytes: int,
        validators: Callable[[str], Validators] = lambda url: Validators(),
    ) -> None:
        self.scope = scope
        self._validators = validators
        self._request_s = request_s
        self.max_bytes = max_bytes
        self.deadline = float("inf")
        self.backend = GuardedBackend(allowed)
        self._client = httpx2.Client(
            transport=_Transport(self.backend), headers={"User-Agent": user_agent}, timeout=request_s,
            follow_redirects=False, trust_env=False,
        )  # fmt: skip
        self.requests = 0
        self.downloaded = 0
        self.spent_s = 0.0
        self.pace: Callable[[], None] = lambda: None  # called before every request (the crawl delay)

    def close(self) -> None:
        self._client.close()

    def get(self, url: str, spool: Path, readable: Callable[[str, str], str | None]) -> Fetched:
        """Fetch ``url``, following redirects within the site; a 200's body goes to ``spool`` when
        ``readable(content type, url)`` names a type the caller reads (else it is not read at all).

        Raises:
            FetchProblem: not fetched, and why.
        """
        chain: list[str] = []
        current = url
        for _hop in range(MAX_REDIRECTS + 1):
            outcome = self._one(current, spool, readable)
            if isinstance(outcome, Fetched):
                return Fetched(outcome.url, outcome.status, tuple(chain), outcome.validators, outcome.file_type,
                               outcome.body, outcome.size, outcome.content_hash, outcome.fetched_ns)  # fmt: skip
            target = normalise(outcome, current)
            if target is None or not self.scope.contains(target):
                raise FetchProblem("web.off_site", current, target=outcome[:300])
            chain.append(current)
            if target in chain:
                raise FetchProblem("web.redirect_loop", url)
            current = target
        raise FetchProblem("web.redirects", url, limit=MAX_REDIRECTS)

    def _one(self, url: str, spool: Path, readable: Callable[[str, str], str | None]) -> Fetched | str:
        """One request: the page, or the Location it redirects to."""
        known = self._validators(url)
        headers = {"If-None-Match": known.etag} if known.etag else {}
        if known.last_modified:
            headers["If-Modified-Since"] = known.last_modified
        self.pace()
        started = time.monotonic()
        self.backend.deadline = min(started + self._request_s, self.deadline)
        self.requests += 1  # every attempt counts, answered or not
        try:
            with self._client.stream("GET", url, headers=headers) as response:
                return self._answer(url, response, spool, readable, known)
        except httpx2.TimeoutException:
            raise FetchProblem("web.timeout", url, kept=True, seconds=f"{self._request_s:g}") from None
        except AddressRefused as refused:
            self.requests -= 1  # refused before any connection
            raise FetchProblem("web.address", url, host=refused.host, address=refused.address) from None
        except httpx2.TransportError as exc:
            tls = _tls_failure(exc)
            if tls is not None:
                raise FetchProblem("web.tls", url, detail=tls) from None
            raise FetchProblem("web.network", url, kept=True, detail=str(exc)[:200] or type(exc).__name__) from None
        finally:
            self.spent_s += time.monotonic() - started
            self.backend.deadline = float("inf")

    def _answer(
        self,
        url: str,
        response: httpx2.Response,
        spool: Path,
        readable: Callable[[str, str], str | None],
        known: Validators,
    ) -> Fetched | str:
        status = response.status_code
        if status in _REDIRECTS and response.headers.get("location"):
            return str(response.headers["location"])
        got = Validators(response.headers.get("etag", "")[:500], response.headers.get("last-modified", "")[:100])
        if status == 304:
            return Fetched(
                url, 304, validators=Validators(got.etag or known.etag, got.last_modified or known.last_modified)
            )
        if status in _GONE:
            raise FetchProblem("web.status", url, gone=True, status=status)
        if status >= 500 or status == 429:
            raise FetchProblem("web.server_error", url, kept=True, status=status)
        if status != 200:
            raise FetchProblem("web.status", url, kept=True, status=status)
        content_type = response.headers.get("content-type", "")
        kind = readable(content_type, url)
        if kind is None:
            raise FetchProblem("web.type", url, type=content_type.split(";", 1)[0].strip()[:100] or "(none)")
        limit_mb = f"{self.max_bytes / 1e6:g}"
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            raise FetchProblem("web.too_big", url, limit=limit_mb)
        digest, size = hashlib.sha256(), 0
        with open(os.open(spool, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as out:
            for block in response.iter_bytes(_BLOCK):
                size += len(block)
                self.downloaded += len(block)
                if size > self.max_bytes:
                    raise FetchProblem("web.too_big", url, limit=limit_mb)
                digest.update(block)
                out.write(block)
        if kind in _TEXT:
            _to_utf8(spool, _charset(content_type))
        return Fetched(url, 200, (), got, kind, spool, size, digest.hexdigest(), time.time_ns())


def _to_utf8(path: Path, charset: str) -> None:
    """A text body in a declared charset other than UTF-8, rewritten as UTF-8 with its mark (the parsers guess an
    unmarked file's encoding among UTF-8, GB18030 and Latin-1 only). An unknown or wrong charset: left as is."""
    if not charset or charset.replace("-", "").replace("_", "") == "utf8":
        return
    data = path.read_bytes()
    if data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        return
    try:
        text = data.decode(charset)
    except (LookupError, UnicodeDecodeError):
        return
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
