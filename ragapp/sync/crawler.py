"""One crawl of a website source: breadth first from the start page (or the pages of a sitemap), within the site's
scope, obeying robots.txt and its crawl delay, and held to the limits a site cannot push past: pages, bytes, link
depth, time spent on the site, failed requests in a row, and pages of one generated shape (an endless calendar).

A page the last sync saw costs one conditional request: unchanged (304, or the same bytes again), its stored links
carry the crawl on and nothing is parsed. The crawl yields what it found, page by page (``Visit``), to the
website sync that applies it; ``outcome`` then says whether it went through the whole site (only then are the
pages it did not reach taken to be gone) or why it stopped.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Generator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import parse_qsl, urlsplit, urlunsplit
from urllib.robotparser import RobotFileParser

from ragapp.config import SyncSettings
from ragapp.core.errors import IngestError
from ragapp.core.types import Said
from ragapp.ingest.parsers.base import decode_text
from ragapp.sync.site_words import caused_said, site_said
from ragapp.sync.sources import Refusal, SyncError
from ragapp.sync.state import FileRow, PageRow
from ragapp.sync.web_fetch import Fetched, Fetcher, FetchProblem, body_type
from ragapp.sync.web_links import page_links, read_sitemap

ROBOTS_MAX_BYTES = 500 * 1024  # RFC 9309: a crawler reads at least the first 500 KiB
_SITEMAP_TYPES = (
    "application/xml",
    "text/xml",
    "application/gzip",
    "application/x-gzip",
    "",
    "application/octet-stream",
)
# Links to these are not pages or documents the app reads: not even requested.
_NOT_DOCUMENTS = frozenset(
    ".7z .apk .avi .bin .bz2 .css .deb .dmg .exe .flac .gif .gz .ico .iso .jar .js .json .m4a .mov .mp3 .mp4 .mpg "
    ".msi .ogg .rar .rpm .svg .tar .tgz .wasm .wav .webm .woff .woff2 .xz .zip .zst".split()
)
_DIGITS = re.compile(r"\d+")
_NOT_FOUND = frozenset({"web.off_site", "web.redirect_loop", "web.redirects", "web.type"})  # of robots.txt
SHOWN_SHAPES = 5  # generated-link shapes reported by name; more are counted in the last one's note


@dataclass(frozen=True)
class Known:
    """What the last sync kept of a page: its row (hash, document) and its page row (validators, links)."""

    row: FileRow | None
    page: PageRow


@dataclass(frozen=True)
class Visit:
    """One page's news. ``kind``: "unchanged" (``page`` holds its validators now), "changed" (``fetched`` holds
    the body; a page never seen has ``known`` None), "gone" (404/410, or it now redirects elsewhere), "kept" (not
    fetched this time and why, ``refusal``; it keeps what it had), "refused" (not a document to add: ``refusal``
    says why; ``page``, when there is one, keeps its links and validators so it costs one request next time) or
    "sitemap" (a sitemap read: ``page`` holds its URLs as links)."""

    kind: str
    url: str
    known: Known | None = None
    page: PageRow | None = None
    fetched: Fetched | None = None
    refusal: Refusal | None = None


@dataclass
class Outcome:
    """How the crawl ended: ``complete`` (every reachable page was asked) or stopped early, and why."""

    complete: bool = False
    stopped: str = ""
    stopped_said: Said | None = None
    reached: set[str] = field(default_factory=set)  # pages asked this crawl (a gone one included)
    notes: list[Refusal] = field(default_factory=list)  # links not followed, summed up
    ignored: int = 0  # links leaving the site, or to files that are not documents


def _said_refusal(path: str, code: str, **values: str | int | float) -> Refusal:
    reason, said = site_said(code, **values)
    return Refusal(path, reason, said)


def _problem_refusal(problem: FetchProblem) -> Refusal:
    return Refusal(problem.url, problem.reason, problem.said)


def shape(url: str) -> str:
    """``url`` with its numbers made ``#`` and its query's values dropped: the pages of a calendar or of a
    search's results share one shape (``/events/#-#/``, ``/calendar?month&year``)."""
    parts = urlsplit(url)
    keys = "&".join(sorted({k for k, _v in parse_qsl(parts.query, keep_blank_values=True)}))
    return urlunsplit(("", "", _DIGITS.sub("#", parts.path), keys, ""))


class Crawl:
    """A crawl of ``fetcher.scope``. ``known``: what the last sync kept, by URL; ``wants(rel)``: the source's
    patterns; ``readable``: the extensions the app reads; ``spool``: a private folder for the bodies."""

    def __init__(
        self,
        fetcher: Fetcher,
        known: dict[str, Known],
        settings: SyncSettings,
        user_agent: str,
        wants: Callable[[str], bool],
        readable: Collection[str],
        spool: Path,
        stop: threading.Event,
    ) -> None:
        self._fetcher = fetcher
        self._scope = fetcher.scope
        self._known = known
        self._settings = settings
        self._agent = user_agent
        self._wants = wants
        self._readable = frozenset(readable)
        self._spool = spool
        self._stop = stop
        self._bodies = 0
        self._robots = RobotFileParser()
        self._delay = settings.web_delay_s
        self._last_request = 0.0
        self._queue: deque[tuple[str, int]] = deque()  # (url, clicks from the start) still to ask
        self.outcome = Outcome()
        fetcher.pace = self._pace

    @property
    def pending(self) -> int:
        """Pages queued, not asked yet."""
        return len(self._queue)

    # -- the walk ------------------------------------------------------------------------------

    def visits(self) -> Generator[Visit, None, None]:
        """The crawl, page by page; ``outcome`` is final once it is exhausted.

        Raises:
            SyncError: the site cannot be crawled at all (robots.txt unreachable, the start page unreadable
                on a first crawl, a sitemap that is none); ``said`` holds the reason.
        """
        started = time.monotonic()
        self._fetcher.deadline = started + self._settings.web_crawl_timeout_s
        self._read_robots()
        seeds = yield from self._seeds()
        queue = self._queue
        queue.extend((url, 0) for url in seeds)
        queued = set(seeds)
        deep: list[str] = []
        disallowed: list[str] = []
        shapes: dict[str, int] = {}
        over: dict[str, int] = {}
        failures = 0
        while queue:
            if self._stopping(started):
                break
            url, depth = queue.popleft()
            if not self._robots.can_fetch(self._agent, url):
                disallowed.append(url)
                continue
            try:
                fetched = self._get(url, self._pages_body(), lambda ctype, u: body_type(ctype, u, self._readable))
            except FetchProblem as problem:
                failures = failures + 1 if problem.kept else 0
                visit = self._failed(url, problem)
                self.outcome.reached.add(url)
                if visit is not None:
                    yield visit
                links = self._known[url].page.links if url in self._known and problem.kept else ()
                self._follow(links, depth, queue, queued, deep, shapes, over)
                if failures >= self._settings.web_max_errors:
                    self._stop_with("web.error_storm", problem.said, count=failures, reason=problem.reason[:300])
                    break
                continue
            failures = 0
            for moved in fetched.chain:  # a page that now redirects is gone under its old address
                self.outcome.reached.add(moved)
                if moved in self._known:
                    yield Visit("gone", moved, self._known[moved])
            if fetched.url in self.outcome.reached:
                continue  # a redirect to a page this crawl has already had
            self.outcome.reached.add(fetched.url)
            queued.add(fetched.url)
            visit, links = self._read(fetched)
            yield visit
            self._follow(links, depth, queue, queued, deep, shapes, over)
        else:
            self.outcome.complete = not self._stop.is_set()
        self._sum_up(deep, disallowed, over)

    def _stopping(self, started: float) -> bool:
        """Whether a limit ends the crawl before its next page (and say which)."""
        settings, fetcher = self._settings, self._fetcher
        if self._stop.is_set():
            self.outcome.stopped = "stopped"
            return True
        if len(self.outcome.reached) >= settings.web_max_pages:
            self._stop_with("web.page_limit", limit=settings.web_max_pages)
        elif fetcher.downloaded >= settings.web_max_crawl_mb * 1e6:
            self._stop_with("web.byte_limit", limit=f"{settings.web_max_crawl_mb:g}")
        elif time.monotonic() - started >= settings.web_crawl_timeout_s:
            self._stop_with("web.time_budget", seconds=f"{settings.web_crawl_timeout_s:g}")
        return bool(self.outcome.stopped)

    def _stop_with(self, code: str, cause: Said | None = None, **values: str | int | float) -> None:
        made = caused_said(code, cause, **values) if cause is not None else site_said(code, **values)
        self.outcome.stopped, self.outcome.stopped_said = made

    def _pace(self) -> None:
        """Before every request (a redirect's too): wait out the crawl delay since the last one, unless the sync
        is stopped meanwhile."""
        wait = self._last_request + self._delay - time.monotonic()
        if wait > 0:
            self._stop.wait(wait)
        self._last_request = time.monotonic()

    def _get(self, url: str, body: Path, readable: Callable[[str, str], str | None]) -> Fetched:
        return self._fetcher.get(url, body, readable)

    def _pages_body(self) -> Path:
        self._bodies += 1
        return self._spool / f"page-{self._bodies}"

    def _failed(self, url: str, problem: FetchProblem) -> Visit | None:
        """What a page not fetched means: gone, kept as it was, or refused (a first crawl's start page that
        cannot be read fails the whole sync: there is no site to follow)."""
        known = self._known.get(url)
        if url == self._scope.start and known is None and not problem.gone:
            reason, said = caused_said("web.start", problem.said, reason=problem.reason)
            raise SyncError(reason, said)
        if problem.gone:
            return Visit("gone", url, known) if known is not None else None
        return Visit("kept" if known is not None else "refused", url, known, refusal=_problem_refusal(problem))

    def _read(self, fetched: Fetched) -> tuple[Visit, tuple[str, ...]]:
        """A page fetched: unchanged (its stored links), or read for its links; noindex pages are refused."""
        url, known = fetched.url, self._known.get(fetched.url)
        stored = known.page if known is not None else None
        if fetched.status == 304 or (known is not None and known.row is not None
                                     and known.row.content_hash == fetched.content_hash):  # fmt: skip
            kept = stored.links if stored is not None else ()
            page = PageRow(url, fetched.validators.etag, fetched.validators.last_modified, kept)
            return Visit("unchanged", url, known, page, fetched), kept
        links: tuple[str, ...] = ()
        noindex = False
        if fetched.file_type == "html" and fetched.body is not None:
            with contextlib.suppress(IngestError):  # not text after all: the ingest says so, with no links to take
                found = page_links(decode_text(fetched.body.read_bytes()), url)
                links, noindex = found.links, found.noindex
        page = PageRow(url, fetched.validators.etag, fetched.validators.last_modified, links)
        if noindex:
            return Visit("refused", url, known, page, fetched, _said_refusal(url, "web.noindex", url=url)), links
        return Visit("changed", url, known, page, fetched), links

    def _follow(
        self,
        links: tuple[str, ...],
        depth: int,
        queue: deque[tuple[str, int]],
        queued: set[str],
        deep: list[str],
        shapes: dict[str, int],
        over: dict[str, int],
    ) -> None:
        """Queue the links of a page ``depth`` clicks from the start that the crawl takes."""
        for link in links:
            if link in queued:
                continue
            rel = self._scope.relative(link)
            suffix = PurePosixPath(urlsplit(link).path).suffix.lower()
            if not self._scope.contains(link) or suffix in _NOT_DOCUMENTS or not self._wants(rel):
                self.outcome.ignored += 1
                queued.add(link)
                continue
            if depth + 1 > self._settings.web_max_depth:
                deep.append(link)
                queued.add(link)
                continue
            form = shape(link)
            shapes[form] = shapes.get(form, 0) + 1
            if shapes[form] > self._settings.web_max_similar:
                over[form] = over.get(form, 0) + 1
                queued.add(link)
                continue
            queued.add(link)
            queue.append((link, depth + 1))

    def _sum_up(self, deep: list[str], disallowed: list[str], over: dict[str, int]) -> None:
        """The links not followed, a note per kind (one per generated shape) rather than a line per link."""
        notes = self.outcome.notes
        if disallowed:
            notes.append(_said_refusal(disallowed[0], "web.robots", count=len(disallowed), url=disallowed[0]))
        if deep:
            limit = self._settings.web_max_depth
            notes.append(_said_refusal(deep[0], "web.too_deep", count=len(deep), limit=limit, url=deep[0]))
        for form, count in list(over.items())[:SHOWN_SHAPES]:
            notes.append(_said_refusal(form, "web.similar", shape=form, limit=self._settings.web_max_similar,
                                       count=count))  # fmt: skip

    # -- robots.txt and the seeds --------------------------------------------------------------

    def _read_robots(self) -> None:
        """robots.txt of the site's host: rules and crawl delay. None there (4xx): no rules (RFC 9309); unreachable
        (5xx, the network): the site is not crawled now.

        Raises:
            SyncError: robots.txt could not be read.
        """
        scope = self._scope
        port = "" if (scope.scheme, scope.port) in (("http", 80), ("https", 443)) else f":{scope.port}"
        where = f"{scope.scheme}://{scope.host}{port}/robots.txt"
        fetcher, limit = self._fetcher, self._fetcher.max_bytes
        fetcher.max_bytes = ROBOTS_MAX_BYTES
        try:
            got = self._get(where, self._spool / "robots.txt", lambda ctype, url: "txt")
            lines = decode_text(got.body.read_bytes()).splitlines() if got.body is not None else []
        except FetchProblem as problem:
            if 400 <= problem.status < 500 or problem.said.code in _NOT_FOUND:  # RFC 9309: no rules then
                lines = []
            else:
                reason, said = caused_said("web.robots_unreachable", problem.said, reason=problem.reason)
                raise SyncError(reason, said) from None
        finally:
            fetcher.max_bytes = limit
        self._robots.parse(lines)
        rate = self._robots.request_rate(self._agent)
        delays = [self._settings.web_delay_s, float(self._robots.crawl_delay(self._agent) or 0)]
        if rate is not None and rate.requests:
            delays.append(rate.seconds / rate.requests)
        self._delay = max(delays)

    def _seeds(self) -> Generator[Visit, None, list[str]]:
        """The first pages: the start page, or every page of the sitemap the source starts from (and of the
        sitemaps an index lists, one level down). A generator for the ``Visit`` a sitemap's row makes."""
        start = self._scope.start
        if not urlsplit(start).path.lower().endswith((".xml", ".xml.gz")):
            if not self._robots.can_fetch(self._agent, start):
                reason, said = site_said("web.robots_start", url=start)
                raise SyncError(reason, said)
            return [start]
        pages: list[str] = []
        todo, seen = [start], {start}
        while todo:
            where = todo.pop(0)
            urls, index = yield from self._sitemap(where, first=where == start)
            fresh = [u for u in urls if self._scope.contains(u) and u not in seen]
            seen.update(fresh)
            if index and where == start:
                todo += fresh[: self._settings.web_max_pages]
            else:
                pages += fresh
        return pages[: self._settings.web_max_pages]

    def _sitemap(self, url: str, first: bool) -> Generator[Visit, None, tuple[tuple[str, ...], bool]]:
        """One sitemap's URLs (stored ones when it did not change) and whether it is an index."""
        known = self._known.get(url)
        readable = lambda ctype, u: "xml" if ctype.split(";")[0].strip().lower() in _SITEMAP_TYPES else None  # noqa: E731
        self.outcome.reached.add(url)
        try:
            fetched = self._get(url, self._spool / f"sitemap-{len(self.outcome.reached)}", readable)
        except FetchProblem as problem:
            if first and known is None:
                reason, said = caused_said("web.sitemap", problem.said, url=url, reason=problem.reason)
                raise SyncError(reason, said) from None
            return (known.page.links if known is not None else ()), False
        if fetched.status == 304 and known is not None:
            page = PageRow(url, fetched.validators.etag, fetched.validators.last_modified, known.page.links,
                           known.page.file_type)  # fmt: skip
            yield Visit("sitemap", url, known, page, fetched)
            return known.page.links, known.page.file_type == "sitemap-index"
        try:
            assert fetched.body is not None
            found = read_sitemap(fetched.body.read_bytes(), url)
        except (ValueError, AssertionError) as exc:
            reason, said = site_said("web.sitemap", url=url, reason=str(exc))
            if first:
                raise SyncError(reason, said) from None
            yield Visit("refused", url, known, refusal=Refusal(url, reason, said))
            return (), False
        kind = "sitemap-index" if found.index else "sitemap"
        page = PageRow(url, fetched.validators.etag, fetched.validators.last_modified, found.urls, kind)
        yield Visit("sitemap", url, known, page, fetched)
        return found.urls, found.index
