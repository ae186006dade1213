"""One sync of one source: take its lease, plan, apply the plan through the ingestor, record the report.

Each file to ingest is copied, from one descriptor opened without following links (``Tree.copy``), into a
private temporary folder, a batch at a time: the ingest parses that copy, and the row records the hash of those
very bytes, so a file swapped after planning is never read through the swap, nor taken for "unchanged" later.

Nothing stored is lost if the process dies mid-sync: each batch's rows are written as soon as its documents
are committed, so a re-run starts from there (a file committed whose row was not yet written comes back as a
duplicate of its own document, which is recorded as it is)."""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import threading
import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ragapp.config import SyncSettings
from ragapp.core.errors import IngestError, RagAppError
from ragapp.core.types import IngestResult
from ragapp.ingest.pipeline import Ingestor
from ragapp.store.catalog import Catalog, utc_now
from ragapp.sync.git import Git, SyncStopped, check_location, checkout
from ragapp.sync.ingesting import Origin, ingest_synced
from ragapp.sync.planner import Change, Plan, plan
from ragapp.sync.sources import Refusal, Source, State, SyncError, SyncReport, display_name
from ragapp.sync.state import FileRow, SyncStore
from ragapp.sync.tree import FileProblem, Tree

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunOutcome:
    """How a sync request ended: ``state`` "busy elsewhere" (another replica, or another thread here, holds the
    source; nothing was done) or the state the source is left in, with the report."""

    state: State
    report: SyncReport | None


class SyncRunner:
    """Runs syncs for this replica. ``checkouts``: where git sources are cloned."""

    def __init__(
        self,
        store: SyncStore,
        ingestor: Ingestor,
        catalog: Catalog,
        settings: SyncSettings,
        checkouts: Path,
        extensions: Callable[[], Collection[str]],
    ) -> None:
        self._store = store
        self._ingestor = ingestor
        self._catalog = catalog
        self._settings = settings
        self._checkouts = checkouts
        self._extensions = extensions
        self.replica = f"{os.uname().nodename}:{os.getpid()}:{uuid.uuid4().hex[:8]}"

    def run(self, name: str, stop: threading.Event | None = None) -> RunOutcome:
        """Sync source ``name`` now, unless someone holds it (then nothing is done, and says so).

        Raises:
            SyncError: there is no source ``name``.
        """
        source = self._store.source(name)
        if source is None:
            raise SyncError(f"No source named {name!r}; `python -m ragapp.sync` lists them.")
        if source.paused:
            return RunOutcome("paused", None)
        holder = f"{self.replica}:{uuid.uuid4().hex[:8]}"
        if not self._store.take(name, holder, self._settings.lease_s):
            return RunOutcome("busy elsewhere", None)
        report = SyncReport(started_at=utc_now())
        state: State = "idle"
        try:
            self._sync(source, holder, report, stop or threading.Event())
            if report.stopped:
                state = "paused" if self._store.is_paused(name) else "idle"
        except SyncStopped:
            report.stopped = "stopped"
            state = "paused" if self._store.is_paused(name) else "idle"
        except RagAppError as exc:
            report.error, state = str(exc), "failed"
        except Exception as exc:  # a sync must never take the scheduler (or the app) down
            log.exception("sync of %s failed", name)
            report.error, state = f"unexpected error ({exc!r})", "failed"
        report.finished_at = utc_now()
        self._store.release(name, holder, state, report, report.finished_at)
        log.info("sync of %s: %s", name, report.summary())
        return RunOutcome(state, report)

    def _open(self, source: Source, report: SyncReport, stop: threading.Event) -> Tree:
        """The source's tree, opened: a git source's copy brought up to date first."""
        settings = self._settings
        if source.kind == "git":
            check_location(source.location, settings.git_protocols, settings.allowed_roots)  # stored earlier too
            folder = self._checkouts / source.name
            git = Git(settings.git_timeout_s, tuple(settings.git_protocols), stop)
            report.commit = checkout(git, source.location, source.branch, folder)
            return Tree.open(folder)
        return Tree.open(Path(source.location), settings.allowed_roots)

    def _sync(self, source: Source, holder: str, report: SyncReport, stop: threading.Event) -> None:
        with self._open(source, report, stop) as tree:
            seen, ignored, refused = tree.walk(source.wants, self._extensions(), self._settings.max_depth)
            before = self._store.files(source.name)
            todo = plan(tree, seen, before, self._settings.settle_s)
            report.seen, report.hashed, report.ignored = todo.seen, todo.hashed, ignored
            report.retrying = list(todo.retrying)
            report.refused = refused + todo.refused
            report.refused += [Refusal(r.rel_path, r.problem) for r in todo.unchanged + todo.touched if r.problem]
            report.unchanged = len(todo.unchanged) + len(todo.touched)
            self._store.put(source.name, todo.touched)
            self._rename(source, todo, report)
            self._remove(source, todo.removed, report)
            total = len(todo.changes)
            self._store.renew(source.name, holder, self._settings.lease_s, 0, total)
            batch = self._settings.batch_files
            for start in range(0, total, batch):
                if stop.is_set() or self._store.is_paused(source.name):
                    report.stopped = "paused" if not stop.is_set() else "stopped"
                    return
                self._ingest(source, tree, todo.changes[start : start + batch], report, stop)
                done = min(start + batch, total)
                if not self._store.renew(source.name, holder, self._settings.lease_s, done, total):
                    report.stopped = "the lease ran out and another replica took the source over"
                    return

    def _rename(self, source: Source, todo: Plan, report: SyncReport) -> None:
        for move in todo.renames:
            gone, now = move.before, move.row
            assert gone is not None
            doc = self._catalog.document(gone.doc_id) if gone.doc_id else None
            if doc is None or doc.kb != source.kb or doc.name != display_name(gone.rel_path):
                # Not this path's document (refused before, or deleted by hand): index the new path afresh.
                fresh = FileRow(now.rel_path, now.content_hash, now.size, now.mtime_ns)
                todo.changes.append(Change(move.seen, fresh, None))
                self._store.drop(source.name, [gone.rel_path])
                continue
            try:
                where = Origin(source.name, now.rel_path, now.mtime_ns).as_file_origin()
                self._ingestor.rename(doc.doc_id, display_name(now.rel_path), where)
            except IngestError as exc:
                report.refused.append(Refusal(now.rel_path, str(exc)))
                continue
            self._store.move(source.name, gone.rel_path, now)
            report.renamed.append((gone.rel_path, now.rel_path))

    def _remove(self, source: Source, removed: list[FileRow], report: SyncReport) -> None:
        for row in removed:
            if row.doc_id and self._owns(source, row):
                with contextlib.suppress(IngestError):  # gone already (deleted by hand, or a re-run after dying)
                    self._ingestor.delete(row.doc_id)
            elif row.doc_id and self._named_after(source, row):
                self._hand_over(source, row)
            self._store.drop(source.name, [row.rel_path])
            report.removed.append(row.rel_path)

    def _hand_over(self, source: Source, row: FileRow) -> None:
        """``row``'s path is gone but a copy of it (same bytes) elsewhere in the source stays: the document
        takes the copy's name, and the copy's row loses its "already there" note."""
        heirs = sorted(p for s, p in self._store.paths_of(row.doc_id) if s == source.name and p != row.rel_path)
        if not heirs:
            return  # another source's file has the same bytes: the document stays as it is
        with contextlib.suppress(IngestError):
            heir = self._store.files(source.name)[heirs[0]]
            where = Origin(source.name, heir.rel_path, heir.mtime_ns).as_file_origin()
            self._ingestor.rename(row.doc_id, display_name(heirs[0]), where)
            kept = FileRow(heir.rel_path, heir.content_hash, heir.size, heir.mtime_ns, row.doc_id)
            self._store.put(source.name, [kept])

    def _named_after(self, source: Source, row: FileRow) -> bool:
        doc = self._catalog.document(row.doc_id)
        return doc is not None and doc.kb == source.kb and doc.name == display_name(row.rel_path)

    def _owns(self, source: Source, row: FileRow) -> bool:
        """Whether ``row``'s document is this path's own: named after it, in the source's base, and no other
        synced path has it (a copy elsewhere in the tree, or in another source, keeps it)."""
        return self._named_after(source, row) and self._store.paths_of(row.doc_id) == [(source.name, row.rel_path)]

    def _ingest(
        self, source: Source, tree: Tree, changes: list[Change], report: SyncReport, stop: threading.Event
    ) -> None:
        """Copy each file of ``changes`` out of ``tree``, then ingest the copies and record what they were."""
        rows: list[FileRow] = []
        with tempfile.TemporaryDirectory(prefix="ragapp-sync-") as spool:
            ready: list[tuple[Change, Path]] = []
            for index, change in enumerate(changes):
                rel = change.row.rel_path
                target = Path(spool) / f"{index}{PurePosixPath(rel).suffix}"
                copied = self._copy(tree, change, target)
                if isinstance(copied, Change):
                    ready.append((copied, target))
                elif isinstance(copied, FileProblem) and copied.retry:
                    report.retrying.append(rel)
                elif isinstance(copied, FileProblem):
                    report.refused.append(Refusal(rel, copied.reason))
                else:  # over the size limit: refused unread, and not read again until it changes
                    report.refused.append(Refusal(rel, str(copied)))
                    rows.append(FileRow(*_stat_of(change.row), "", str(copied)))
            files = [(path, Origin(source.name, c.row.rel_path, c.row.mtime_ns)) for c, path in ready]
            results = ingest_synced(self._ingestor, source, files, stop) if files else []
            for (change, _path), result in zip(ready, results, strict=True):
                row = self._record(source, change, result, report)
                if row is not None:
                    rows.append(row)
        self._store.put(source.name, rows)

    def _copy(self, tree: Tree, change: Change, target: Path) -> Change | FileProblem | IngestError:
        """``change``'s file copied to ``target``, as the change of what was read (its hash, size and time);
        or why it was not: a ``FileProblem``, or the ingest's refusal of its size (then it is not read)."""
        rel = change.row.rel_path
        name = display_name(rel)
        try:
            read = tree.copy(rel, target, lambda size: self._ingestor.check_size(name, size))
        except (FileProblem, IngestError) as exc:
            return exc
        return Change(change.seen, FileRow(rel, read.content_hash, read.size, read.mtime_ns), change.before)

    def _record(self, source: Source, change: Change, result: IngestResult, report: SyncReport) -> FileRow | None:
        """The row a file's ingest leaves (None: nothing to remember, it is tried again next time)."""
        rel, row = change.row.rel_path, change.row
        name = display_name(rel)
        if result.status == "cancelled":
            report.stopped = report.stopped or "stopped"
            return None
        report.ingested += 1
        listed = report.added if change.before is None else report.updated
        if result.status in ("added", "replaced"):
            listed.append(rel)
            return FileRow(rel, row.content_hash, row.size, row.mtime_ns, result.doc_id or "")
        if result.status == "duplicate" and result.doc_id:
            existing = self._catalog.document(result.doc_id)
            if existing is not None and existing.kb == source.kb and existing.name == name:
                listed.append(rel)  # its own document: committed before the process stopped, or a revert
                return FileRow(rel, row.content_hash, row.size, row.mtime_ns, result.doc_id)
            stale = change.before
            if stale is not None and stale.doc_id and self._owns(source, stale):
                self._ingestor.delete(stale.doc_id)  # its new content is stored elsewhere: the old one goes
            message = result.message
            if existing is not None and existing.kb != source.kb:
                # The source's readers may not read that base: it, and the document, stay unnamed.
                message = f"{rel}: the same file is already stored in another knowledge base; nothing changed."
            report.refused.append(Refusal(rel, message))
            return FileRow(rel, row.content_hash, row.size, row.mtime_ns, result.doc_id, message)
        report.refused.append(Refusal(rel, result.message))
        return FileRow(rel, row.content_hash, row.size, row.mtime_ns, "", result.message)


def _stat_of(row: FileRow) -> tuple[str, str, int, int]:
    return row.rel_path, row.content_hash, row.size, row.mtime_ns
