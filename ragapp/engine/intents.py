"""The intents facet: the intent tree, its edits and how a question would be routed through it.

Every edit validates the whole resulting tree and raises ``IntentTreeError`` (nothing changed) or returns the new
tree.
"""

from __future__ import annotations

from ragapp.core.types import Scope
from ragapp.router.decide import RoutingDecision
from ragapp.router.router import IntentRouter
from ragapp.router.store import IntentStore
from ragapp.router.tree import Format, IntentNode, IntentTree, dump_tree, parse_tree


class Intents:
    def __init__(self, store: IntentStore, router: IntentRouter) -> None:
        self._store = store
        self._router = router

    def tree(self) -> IntentTree:
        return self._store.tree()

    def save(self, node: IntentNode, replacing: str | None = None) -> IntentTree:
        """Add ``node`` or update the node ``replacing`` (a new code renames it, a new parent moves it)."""
        return self._store.save(node, replacing)

    def delete(self, code: str) -> int:
        """Delete an intent and everything under it; returns how many nodes went."""
        return self._store.delete(code)

    def move(self, code: str, parent: str | None) -> IntentTree:
        return self._store.move(code, parent)

    def import_tree(self, text: str, fmt: Format | None = None) -> IntentTree:
        """Replace the whole tree with one read from YAML or JSON; a bad file changes nothing."""
        return self._store.replace(parse_tree(text, fmt))

    def export(self, fmt: Format = "yaml") -> str:
        return dump_tree(self._store.tree(), fmt)

    def test(self, question: str, kbs: Scope = None) -> RoutingDecision:
        """How ``question`` would be routed: every leaf's score and the decision, with the reason."""
        return self._router.test(question.strip(), kbs)
