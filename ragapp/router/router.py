"""The intent router: the tree from the store, one classification call, and the decision rules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ragapp.config import WorkflowSettings
from ragapp.models.llm import LLM
from ragapp.router.classifier import IntentClassifier, LeafScore
from ragapp.router.decide import RoutingDecision, decide, not_routed
from ragapp.router.store import IntentStore
from ragapp.router.tree import IntentTree
from ragapp.types import Scope

# Does anything in these knowledge bases (None: all) answer this question? The engine passes its retrieval.
RelevanceProbe = Callable[[str, Scope], bool]


class IntentRouter:
    def __init__(
        self,
        store: IntentStore,
        llm: LLM,
        settings: WorkflowSettings,
        timeout_s: float,
        relevant: RelevanceProbe | None = None,
    ) -> None:
        self.store = store
        self._settings = settings
        self._classifier = IntentClassifier(llm, timeout_s)
        self._relevant = relevant

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
        decision = decide(self._classifier.classify(question, tree), self._settings, tree)
        if decision.action == "clarify" and self._relevant is not None:
            # A small model sends off-topic questions ("capital of France?") to some leaf with a middling score;
            # when that leaf has twins, the rules would ask "which product?". Ask back only about something
            # the knowledge bases can answer (one retrieval, ~20 ms).
            scope = frozenset(kb for c in decision.intents for kb in getattr(tree.get(c.code), "kbs", ()))
            if not self._relevant(question, scope or None):
                why = f"{decision.reason}; but nothing in {', '.join(sorted(scope)) or 'the knowledge bases'} "
                return replace(decision, action="fallback", intents=(), reason=why + "is relevant: not asking back")
        return decision

    def leaf(self, code: str) -> LeafScore | None:
        """A leaf as a forced choice (the user clicked it when asked back); None if it no longer exists."""
        tree = self.store.tree()
        node = tree.get(code)
        if node is None or node.kind is None or not tree.is_leaf(code):
            return None
        return LeafScore(code, tree.full_path(code), node.kind, node.parent, 1.0)
