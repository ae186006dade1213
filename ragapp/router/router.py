"""The intent router: the tree from the store, one classification call, and the decision rules."""

from __future__ import annotations

from ragapp.config import WorkflowSettings
from ragapp.models.llm import LLM
from ragapp.router.classifier import IntentClassifier, LeafScore
from ragapp.router.decide import RoutingDecision, decide, not_routed
from ragapp.router.store import IntentStore
from ragapp.router.tree import IntentTree


class IntentRouter:
    def __init__(self, store: IntentStore, llm: LLM, settings: WorkflowSettings, timeout_s: float) -> None:
        self.store = store
        self._settings = settings
        self._classifier = IntentClassifier(llm, timeout_s)

    def tree(self) -> IntentTree:
        return self.store.tree()

    def route(self, question: str) -> RoutingDecision:
        """The decision for one (sub-)question; routing off or an empty tree means "search everything"."""
        if not self._settings.route:
            return not_routed(question, "intent routing is off (RAGAPP_WORKFLOW__ROUTE=false): searching everything")
        return self.test(question)

    def test(self, question: str) -> RoutingDecision:
        """Classify and decide even when routing is off: what the Intents tab's test box shows."""
        tree = self.store.tree()
        if not tree.leaves():
            return not_routed(question, "the intent tree has no leaves: searching everything")
        return decide(self._classifier.classify(question, tree), self._settings, tree)

    def leaf(self, code: str) -> LeafScore | None:
        """A leaf as a forced choice (the user clicked it when asked back); None if it no longer exists."""
        tree = self.store.tree()
        node = tree.get(code)
        if node is None or node.kind is None or not tree.is_leaf(code):
            return None
        return LeafScore(code, tree.full_path(code), node.kind, node.parent, 1.0)
