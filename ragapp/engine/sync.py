"""The sync facet: the folders and git repositories knowledge bases follow. Editors of a base may see, sync,
pause and resume its source; only an admin adds or removes one (a source makes a server folder readable).
Each of those is audited (``ragapp.audit``) with the source's name as its target, refusals too."""

from __future__ import annotations

from collections.abc import Sequence

from ragapp.accounts.kb_access import KbAccess
from ragapp.audit import AuditAction, AuditLog
from ragapp.core.access import LOCAL_ACTOR, Action, Actor, require
from ragapp.core.errors import AccessDenied, LooksUnknown
from ragapp.core.said import Said
from ragapp.sync.runner import RunOutcome
from ragapp.sync.service import SyncService
from ragapp.sync.sources import Source, SourceStatus, SyncError, SyncReport

__all__ = ["RunOutcome", "Source", "SourceStatus", "Sync", "SyncError", "SyncReport"]


class Sync:
    def __init__(self, service: SyncService, access: KbAccess | None = None, audit: AuditLog | None = None) -> None:
        self._service = service
        self._access = access  # None: accounts off
        self._audit = audit or AuditLog.off()

    def _may_edit(self, actor: Actor, kb: str) -> None:
        if self._access is not None and not self._access.may_edit(actor, kb):
            raise AccessDenied(said=Said("access.kb_edit", {"kb": kb}))

    def _editable(self, name: str, actor: Actor) -> SourceStatus:
        """The source, if ``actor`` may edit its base; else the same error an unknown name gets (the list of
        sources shows them only the sources of bases they may edit, so another base's is unknown to them)."""
        require(actor, Action.UPLOAD)
        unknown = f"No source named {name!r}; the list of sources shows the names."
        try:
            status = self._service.status(name)
        except SyncError:
            raise SyncError(unknown) from None
        if self._access is not None and not self._access.may_edit(actor, status.source.kb):
            raise LooksUnknown(unknown)
        return status

    def sources(self, *, actor: Actor = LOCAL_ACTOR) -> list[SourceStatus]:
        """The sources of the bases ``actor`` may edit, with their state and last report."""
        require(actor, Action.UPLOAD)
        found = self._service.sources()
        if self._access is None:
            return found
        return [s for s in found if self._access.may_edit(actor, s.source.kb)]

    def source(self, name: str, *, actor: Actor = LOCAL_ACTOR) -> SourceStatus:
        return self._editable(name, actor)

    def add(
        self,
        name: str,
        kind: str,
        location: str,
        kb: str,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        interval_s: float | None = None,
        branch: str = "",
        *,
        actor: Actor = LOCAL_ACTOR,
        start: bool = True,
    ) -> Source:
        """Follow a folder or git repository into ``kb``; with ``start`` its first sync begins in the background
        (else at its first interval, or when asked)."""
        with self._audit.attempt(actor, AuditAction.SOURCE_ADD, name, kind=kind, location=location, kb=kb):
            require(actor, Action.MANAGE_SOURCES)
            self._may_edit(actor, kb)
            return self._service.add(name, kind, location, kb, include, exclude, interval_s, branch, background=start)

    def sync_now(self, name: str, *, actor: Actor = LOCAL_ACTOR) -> None:
        """Start a sync of ``name`` in the background (it waits for one under way)."""
        with self._audit.attempt(actor, AuditAction.SOURCE_SYNC, name, background=True):
            self._editable(name, actor)
            self._service.request(name)

    def run(self, name: str, *, actor: Actor = LOCAL_ACTOR) -> RunOutcome:
        """Sync ``name`` in this thread and return how it went."""
        with self._audit.attempt(actor, AuditAction.SOURCE_SYNC, name) as note:
            self._editable(name, actor)
            outcome = self._service.run(name)
            note["state"] = outcome.state
        return outcome

    def pause(self, name: str, *, actor: Actor = LOCAL_ACTOR) -> None:
        with self._audit.attempt(actor, AuditAction.SOURCE_PAUSE, name):
            self._editable(name, actor)
            self._service.pause(name)

    def resume(self, name: str, *, actor: Actor = LOCAL_ACTOR) -> None:
        with self._audit.attempt(actor, AuditAction.SOURCE_RESUME, name):
            self._editable(name, actor)
            self._service.resume(name)

    def remove(self, name: str, delete_documents: bool = False, *, actor: Actor = LOCAL_ACTOR) -> int:
        """Stop following ``name`` (its documents stay unless ``delete_documents``)."""
        with self._audit.attempt(actor, AuditAction.SOURCE_REMOVE, name, delete_documents=delete_documents) as note:
            require(actor, Action.MANAGE_SOURCES)
            self._editable(name, actor)
            note["documents_deleted"] = removed = self._service.remove(name, delete_documents)
        return removed
