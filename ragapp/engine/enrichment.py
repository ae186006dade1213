"""The enrichment facet: how far each knowledge base's background indexing has got, and pausing or resuming
it. Anyone who may read a base sees its progress; its editors pause and resume it (audited, refusals too)."""

from __future__ import annotations

from ragapp.accounts.kb_access import KbAccess
from ragapp.audit import AuditAction, AuditLog
from ragapp.core.access import LOCAL_ACTOR, Action, Actor, require
from ragapp.core.errors import AccessDenied
from ragapp.core.said import Said
from ragapp.core.types import Scope
from ragapp.enrich.progress import KbProgress, StepProgress
from ragapp.enrich.runner import EnrichRunner
from ragapp.ingest.names import kb_name

__all__ = ["Enrichment", "KbProgress", "StepProgress"]


class Enrichment:
    def __init__(self, runner: EnrichRunner, access: KbAccess | None = None, audit: AuditLog | None = None) -> None:
        self._runner = runner
        self._access = access  # None: accounts off
        self._audit = audit or AuditLog.off()

    def _may_read(self, kb: str, actor: Actor) -> bool:
        return self._access is None or self._access.may_read(actor, kb)

    def progress(self, kb: str, *, actor: Actor = LOCAL_ACTOR) -> KbProgress:
        """``kb``'s progress, step by step. A base with no documents has every step done, and so has one
        ``actor`` may not read: the answer tells nothing of what it holds."""
        kb = kb_name(kb)
        if not self._may_read(kb, actor):
            return KbProgress(kb, False, tuple(StepProgress(s.name, 0, 0) for s in self._runner.steps))
        return self._runner.progress(kb)

    def indexing(self, kbs: Scope = None) -> list[str]:
        """The bases among ``kbs`` (None: all) still being indexed, as the worker last saw them."""
        return self._runner.indexing(kbs)

    def pause(self, kb: str, *, actor: Actor = LOCAL_ACTOR) -> KbProgress:
        """Stop enriching ``kb`` after the batch under way, until resumed (a restart keeps it paused)."""
        with self._audit.attempt(actor, AuditAction.ENRICH_PAUSE, kb):
            kb = self._editable(kb, actor)
            self._runner.pause(kb)
        return self._runner.progress(kb)

    def resume(self, kb: str, *, actor: Actor = LOCAL_ACTOR) -> KbProgress:
        with self._audit.attempt(actor, AuditAction.ENRICH_RESUME, kb):
            kb = self._editable(kb, actor)
            self._runner.resume(kb)
        return self._runner.progress(kb)

    def _editable(self, kb: str, actor: Actor) -> str:
        kb = kb_name(kb)
        require(actor, Action.UPLOAD)
        if self._access is not None and not self._access.may_edit(actor, kb):
            raise AccessDenied(said=Said("access.kb_edit", {"kb": kb}))
        return kb
