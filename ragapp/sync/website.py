"""One sync of a website source: crawl it (``Crawl``) and apply what the crawl finds as it goes, through the same
ingest, rows and removals a folder's sync uses.

Each page is a document named by its URL, its metadata's ``source`` the source's name, ``path`` the URL and
``changed`` the time it was fetched. A changed or new page's body waits in a private spool until a batch of them
is ingested; its rows (the hash, the document; the validators and links) are written once its document is
committed, so a crawl that dies half-way starts the next from there. A page the server says is gone (404, 410)
or that now redirects elsewhere leaves at once; a page the crawl did not reach leaves only when the crawl went
through the whole site (a crawl stopped at a limit leaves the pages it did not reach as they were).
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
import time
from collections.abc import Callable, Collection
from pathlib import Path

from ragapp.config import SyncSettings
from ragapp.core.types import IngestResult
from ragapp.ingest.pipeline import Ingestor
from ragapp.sync.crawler import Crawl, Known, Visit
from ragapp.sync.ingesting import Origin, ingest_synced
from ragapp.sync.planner import Change
from ragapp.sync.site_words import site_said
from ragapp.sync.sources import Refusal, Source, SyncError, SyncReport
from ragapp.sync.state import FileRow, PageRow, SyncStore
from ragapp.sync.tree import Seen
from ragapp.sync.web_address import AddressRefused, Scope, start_kinds
from ragapp.sync.web_fetch import Fetcher, Validators

RENEW_S = 5.0  # how often a crawl renews its lease and looks whether it was paused

# The runner's bookkeeping a website sync shares: a file's ingest result made its row, and removals.
Record = Callable[[Source, Change, IngestResult, SyncReport], "FileRow | None"]
Remove = Callable[[Source, list[FileRow], SyncReport], None]


class WebsiteSync:
    """Crawls website sources for a ``SyncRunner``, with its ``record`` and ``remove``."""

    def __init__(
        self,
        store: SyncStore,
        ingestor: Ingestor,
        settings: SyncSettings,
        extensions: Callable[[], Collection[str]],
        record: Record,
        remove: Remove,
    ) -> None:
        self._store = store
        self._ingestor = ingestor
        self._settings = settings
        self._extensions = extensions
        self._record = record
        self._remove = remove

    def run(self, source: Source, holder: str, report: SyncReport, stop: threading.Event) -> None:
        """Crawl ``source`` and bring its documents in line with the site.

        Raises:
            SyncError: the site cannot be crawled (a bad address, robots.txt unreachable, the start page
                unreadable on a first crawl): ``said`` says why.
        """
        settings = self._settings
        scope = Scope.of(source.location)
        try:
            allowed = start_kinds(scope.host, scope.port)
        except AddressRefused as refused:
            reason, said = site_said("web.address", url=scope.start, host=refused.host, address=refused.address)
            raise SyncError(reason, said) from None
        files = self._store.files(source.name)
        pages = self._store.pages(source.name)
        known = {url: Known(files.get(url), pages.get(url, PageRow(url))) for url in {*files, *pages}}

        def validators(url: str) -> Validators:
            page = pages.get(url)
            if page is None or (url not in files and not page.file_type.startswith("sitemap")):
                return Validators()  # nothing kept to compare with: the whole page is wanted
            return Validators(page.etag, page.last_modified)

        page_bytes = int(min(settings.web_max_page_mb * 1e6, self._ingestor.max_file_bytes))
        fetcher = Fetcher(scope, allowed, settings.web_user_agent, settings.web_request_timeout_s, page_bytes,
                          validators)  # fmt: skip
        try:
            with tempfile.TemporaryDirectory(prefix="ragapp-crawl-") as spool:
                crawl = Crawl(fetcher, known, settings, settings.web_user_agent, source.wants, self._extensions(),
                              Path(spool), stop)  # fmt: skip
                self._apply(source, holder, crawl, (files, set(pages)), report, stop)
        finally:
            report.requests, report.downloaded = fetcher.requests, fetcher.downloaded
            fetcher.close()

    def _apply(
        self,
        source: Source,
        holder: str,
        crawl: Crawl,
        before: tuple[dict[str, FileRow], set[str]],
        report: SyncReport,
        stop: threading.Event,
    ) -> None:
        """Apply the crawl's visits as they come; then, a crawl through the whole site removes what it did not
        reach (``before``: the file rows and the page rows' URLs the last sync left)."""
        files, page_urls = before
        batch: list[Visit] = []
        renewed = time.monotonic()
        visits = crawl.visits()
        try:
            for visit in visits:
                self._take(source, visit, batch, report)
                if len(batch) >= self._settings.batch_files:
                    self._ingest(source, batch, report, stop)
                if time.monotonic() - renewed >= RENEW_S:
                    renewed = time.monotonic()
                    if not self._store.renew(source.name, holder, self._settings.lease_s, len(crawl.outcome.reached),
                                             len(crawl.outcome.reached) + crawl.pending):  # fmt: skip
                        report.stopped = "the lease ran out and another replica took the source over"
                        return
                    if self._store.is_paused(source.name):
                        report.stopped = "paused"
                        return
        finally:
            visits.close()
            if batch and not stop.is_set():
                self._ingest(source, batch, report, stop)
        outcome = crawl.outcome
        report.refused += outcome.notes
        report.ignored = outcome.ignored
        if outcome.stopped:
            report.stopped, report.stopped_said = outcome.stopped, outcome.stopped_said
        if outcome.complete and not report.stopped:
            unreached = [row for url, row in files.items() if url not in outcome.reached]
            self._remove(source, unreached, report)
            self._store.drop_pages(source.name, [r.rel_path for r in unreached])
            self._store.drop_pages(source.name, [u for u in page_urls if u not in outcome.reached])

    def _take(self, source: Source, visit: Visit, batch: list[Visit], report: SyncReport) -> None:
        """One page's news applied (a changed page waits in ``batch`` for its ingest)."""
        kind, url, known = visit.kind, visit.url, visit.known
        row = known.row if known is not None else None
        if kind == "sitemap":
            assert visit.page is not None
            self._store.put_pages(source.name, [visit.page])
            return
        if kind == "gone":
            if row is not None:
                self._remove(source, [row], report)
            self._store.drop_pages(source.name, [url])
            return
        report.seen += 1
        if kind == "changed":
            report.hashed += 1
            batch.append(visit)
            return
        _discard(visit)
        if kind == "unchanged":
            report.unchanged += 1
            if visit.page is not None and known is not None and visit.page != known.page:
                self._store.put_pages(source.name, [visit.page])
            if row is not None and row.problem:
                report.refused.append(Refusal(url, row.problem))
            return
        assert visit.refusal is not None
        report.refused.append(visit.refusal)
        if kind == "refused" and visit.page is not None and visit.fetched is not None:
            if row is not None and row.doc_id:
                self._remove(source, [row], report)  # it was a document, and now asks not to be one
            got = visit.fetched
            problem = FileRow(url, got.content_hash, got.size, got.fetched_ns, "", visit.refusal.reason)
            self._store.put(source.name, [problem])
            self._store.put_pages(source.name, [visit.page])

    def _ingest(self, source: Source, batch: list[Visit], report: SyncReport, stop: threading.Event) -> None:
        """The changed pages of ``batch`` ingested, then their rows written; ``batch`` is emptied."""
        todo, batch[:] = list(batch), []
        files: list[tuple[Path, Origin]] = []
        for visit in todo:
            got = visit.fetched
            assert got is not None and got.body is not None
            files.append((got.body, Origin(source.name, visit.url, got.fetched_ns, got.file_type)))
        results = ingest_synced(self._ingestor, source, files, stop)
        rows: list[FileRow] = []
        pages: list[PageRow] = []
        for visit, result in zip(todo, results, strict=True):
            got = visit.fetched
            assert got is not None and visit.page is not None
            before = visit.known.row if visit.known is not None else None
            now = FileRow(visit.url, got.content_hash, got.size, got.fetched_ns)
            row = self._record(source, Change(Seen(visit.url, got.size, got.fetched_ns), now, before), result, report)
            if row is not None:
                rows.append(row)
                pages.append(visit.page)
            _discard(visit)
        self._store.put(source.name, rows)
        self._store.put_pages(source.name, pages)


def _discard(visit: Visit) -> None:
    """The page's body, once nothing more reads it (the spool holds only the batch waiting for its ingest)."""
    if visit.fetched is not None and visit.fetched.body is not None:
        with contextlib.suppress(OSError):
            visit.fetched.body.unlink()
