"""The intents facet: the intent tree, its edits and how a question would be routed through it.

Every edit validates the whole resulting tree and raises ``IntentTreeError`` (nothing changed) or says what it
did. The rules hold for any caller (the Intents tab, a script, an HTTP API): an added code must be new, a rename
may not take another intent's code, a leaf that receives a child becomes a group, a group keeps at least one
child, and a file must be YAML or JSON. Every edit is audited (``ragapp.audit``), refused and failed ones too,
with the intent's code as its target.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from ragapp.audit import AuditAction, AuditLog
from ragapp.core.access import LOCAL_ACTOR, Action, Actor, require
from ragapp.core.errors import RagAppError
from ragapp.core.types import Scope
from ragapp.engine.intent_edits import (
    DeletedIntent,
    IntentDraft,
    SavedIntent,
    import_format,
    kb_leaf,
    only_child_hint,
)
from ragapp.router.decide import RoutingDecision
from ragapp.router.router import IntentRouter
from ragapp.router.store import IntentStore
from ragapp.router.tree import Format, IntentNode, IntentTree, IntentTreeError, dump_tree, parse_tree

# The names (or titles) of the documents in a knowledge base, for the description of a leaf made for it.
DocumentsIn = Callable[[str], Sequence[str]]


class Intents:
    def __init__(
        self,
        store: IntentStore,
        router: IntentRouter,
        audit: AuditLog | None = None,
        documents_in: DocumentsIn | None = None,
    ) -> None:
        self._store = store
        self._router = router
        self._audit = audit or AuditLog.off()
        self._documents_in = documents_in
        # One edit at a time in this process, so what a deletion reports (its path, the only-child hint) is about
        # the tree it changed; between replicas the store's edit lock keeps the tree itself consistent.
        self._lock = threading.RLock()

    def tree(self) -> IntentTree:
        return self._store.tree()

    def knowledge_bases(self, extra: Iterable[str] = ()) -> list[str]:
        """The knowledge bases a KB leaf may name (those that hold documents, then "default"), then ``extra``."""
        return list(dict.fromkeys([*self._store.known_kbs(), *extra]))

    def save(
        self, edit: IntentNode | IntentDraft, replacing: str | None = None, *, actor: Actor = LOCAL_ACTOR
    ) -> SavedIntent:
        """Add an intent (``replacing`` None: its code must be new) or update the intent ``replacing`` (a new
        code renames it, a new parent moves it). A leaf that receives it as a child becomes a group."""
        code = (edit.code or "").strip()
        with self._audit.attempt(actor, AuditAction.INTENT_SAVE, code, replacing=replacing):
            require(actor, Action.EDIT_INTENTS)
            node = edit.to_node() if isinstance(edit, IntentDraft) else edit
            with self._lock:
                # The store says which leaf became a group: only it sees the tree the edit changed (another
                # replica may have edited since this one last read it).
                tree, host = self._store.saved(node, replacing, new=replacing is None)
        return SavedIntent(
            tree,
            node.code,
            added=replacing is None,
            renamed_from=replacing if replacing is not None and replacing != node.code else None,
            made_group=host.code if host is not None else None,
        )

    def uncovered(self) -> list[str]:
        """The knowledge bases that hold documents and that no knowledge leaf searches: routing reaches them
        only when no leaf fits a question well (docs/workflow.md). None while the tree has no leaves."""
        return sorted(self._router.uncovered())

    def add_leaf_for(self, kb: str, *, actor: Actor = LOCAL_ACTOR) -> SavedIntent:
        """Add a knowledge leaf at the top of the tree that searches ``kb`` (``kb_leaf``: named after it and
        described by its documents), to edit afterwards like any other."""
        documents = list(self._documents_in(kb)) if self._documents_in is not None else []
        with self._lock:
            node = kb_leaf(self._store.tree(), kb, documents)
        return self.save(node, actor=actor)

    def delete(self, code: str, *, actor: Actor = LOCAL_ACTOR) -> DeletedIntent:
        """Delete an intent and everything under it. The only child of a group cannot go (the group would be
        left without a kind): the refusal says what to do instead."""
        with self._audit.attempt(actor, AuditAction.INTENT_DELETE, code) as note:
            require(actor, Action.EDIT_INTENTS)
            with self._lock:
                path = self._store.tree().full_path(code)
                try:
                    note["removed"] = count = self._store.delete(code)
                except IntentTreeError as exc:  # the hint from the tree as stored now, which refused the edit
                    raise IntentTreeError([*exc.problems, *only_child_hint(self._store.tree(), code)]) from None
        return DeletedIntent(code, path, count)

    def move(self, code: str, parent: str | None, *, actor: Actor = LOCAL_ACTOR) -> IntentTree:
        with self._audit.attempt(actor, AuditAction.INTENT_MOVE, code, parent=parent or "(top)"):
            require(actor, Action.EDIT_INTENTS)
            with self._lock:
                return self._store.move(code, parent)

    def import_tree(self, text: str, fmt: Format | None = None, *, actor: Actor = LOCAL_ACTOR) -> IntentTree:
        """Replace the whole tree with one read from YAML or JSON; a bad file changes nothing."""
        with self._audit.attempt(actor, AuditAction.INTENT_IMPORT, "(whole tree)", format=fmt) as note:
            require(actor, Action.EDIT_INTENTS)
            with self._lock:
                tree = self._store.replace(parse_tree(text, fmt))
            note["intents"] = len(tree)
        return tree

    def import_file(self, path: Path, name: str | None = None, *, actor: Actor = LOCAL_ACTOR) -> IntentTree:
        """``import_tree`` from a .yaml, .yml or .json file (``name``: the name it was uploaded under)."""
        # Refused before the file is read; ``import_tree`` audits the rest.
        self._audit.require(actor, Action.EDIT_INTENTS, AuditAction.INTENT_IMPORT, "(whole tree)", file=name)
        name = name or path.name
        fmt = import_format(name)
        try:
            text = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise IntentTreeError([f"the file could not be read as UTF-8 text ({exc})"]) from None
        return self.import_tree(text, fmt, actor=actor)

    def export(self, fmt: Format = "yaml") -> str:
        return dump_tree(self._store.tree(), fmt)

    def warm_up(self) -> None:
        self._router.warm_up()

    def test(self, question: str, kbs: Scope = None) -> RoutingDecision:
        """How ``question`` would be routed: every leaf's score and the decision, with the reason. A blank
        question raises ``RagAppError`` (there is nothing to route, and no model call is made)."""
        question = question.strip()
        if not question:
            raise RagAppError("The question is empty: type the question whose routing you want to see.")
        return self._router.test(question, kbs)
