"""The intent router: the tree from the store, a classification (by the embedder when it is clear, else one
LLM call), the decision rules, and how well the question fits the leaves (``ragapp.router.fit``)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import replace

from ragapp.config import WorkflowSettings
from ragapp.core.types import Scope
from ragapp.models.llm import LLM
from ragapp.router.classifier import Classification, IntentClassifier, LeafScore
from ragapp.router.decide import RoutingDecision, decide, not_routed
from ragapp.router.fast import EmbeddingClassifier
from ragapp.router.fit import LeafFitter
from ragapp.router.store import IntentStore
from ragapp.router.tree import IntentNode, IntentTree

# The knowledge base holding the best relevant passage for a question within a scope (None: all), or None
# when nothing there is relevant. The engine answers it with one retrieval.
BestSource = Callable[[str, Scope], str | None]
# The knowledge bases that hold documents, by name.
HoldingKbs = Callable[[], Collection[str]]


class IntentRouter:
    def __init__(
        self,
        store: IntentStore,
        llm: LLM,
        settings: WorkflowSettings,
        timeout_s: float,
        best_source: BestSource | None = None,
        fast: EmbeddingClassifier | None = None,
        holding: HoldingKbs | None = None,
    ) -> None:
        """``fast``: the embedder's leaf similarities, which calibrate every decision's scores and, with
        ``fast_route`` on, route clear questions without the model (None: neither). ``holding``: the knowledge
        bases that hold documents (None: the ones the store knows)."""
        self.store = store
        self._settings = settings
        self._classifier = IntentClassifier(llm, timeout_s)
        self._best_source = best_source
        self._fast = fast
        self._holding = holding

    def tree(self) -> IntentTree:
        return self.store.tree()

    def route(self, question: str, kbs: Scope = None) -> RoutingDecision:
        """The decision for one (sub-)question asked within ``kbs`` (None: all knowledge bases); routing off
        or an empty tree means "search everything"."""
        return self.route_without_model(question, kbs) or self.route_by_model(question, kbs)

    def route_without_model(self, question: str, kbs: Scope = None) -> RoutingDecision | None:
        """The decision when it needs no model call (routing off, an empty tree, the embedder's clear pick, or
        leaves that all search the same within the margin), else None: ``route_by_model`` then decides. The
        pipeline searches meanwhile only in that case."""
        if not self._settings.route:
            return not_routed(question, "intent routing is off (RAGAPP_WORKFLOW__ROUTE=false): searching everything")
        tree = self.store.tree()
        if not tree.leaves():
            return not_routed(question, "the intent tree has no leaves: searching everything")
        return self._by_embedder(question, kbs, tree)

    def route_by_model(self, question: str, kbs: Scope = None) -> RoutingDecision:
        """The decision from the LLM classifier, without trying the embedder first."""
        tree = self.store.tree()
        if not tree.leaves():
            return not_routed(question, "the intent tree has no leaves: searching everything")
        return self._decided(
            question, kbs, tree, self._classifier.classify(question, tree), self._ranked(question, tree)
        )

    def test(self, question: str, kbs: Scope = None) -> RoutingDecision:
        """Classify and decide even when routing is off: what the Intents tab's test box shows."""
        tree = self.store.tree()
        if not tree.leaves():
            return not_routed(question, "the intent tree has no leaves: searching everything")
        return self._by_embedder(question, kbs, tree) or self._decided(
            question, kbs, tree, self._classifier.classify(question, tree), self._ranked(question, tree)
        )

    def uncovered(self, kbs: Scope = None) -> frozenset[str]:
        """The knowledge bases within ``kbs`` (None: all) that hold documents and that no knowledge leaf of the
        tree searches: routing would never reach them. Empty when the tree has no leaves (everything is searched
        then)."""
        tree = self.store.tree()
        if not tree.leaves():
            return frozenset()
        holding = self._holding() if self._holding is not None else self.store.known_kbs()
        covered = {kb for leaf in tree.leaves(["KB"]) for kb in leaf.kbs}
        return frozenset(kb for kb in holding if kb not in covered and (kbs is None or kb in kbs))

    def _ranked(self, question: str, tree: IntentTree) -> Sequence[tuple[IntentNode, float]] | None:
        return self._fast.similarities(question, tree) if self._fast is not None else None

    def _by_embedder(self, question: str, kbs: Scope, tree: IntentTree) -> RoutingDecision | None:
        """The decision from the embedder's scores when they decide (``fast_route``), else None."""
        if self._fast is None or not self._settings.fast_route:
            return None
        ranked = self._fast.similarities(question, tree)
        fast = self._fast.clear_pick(question, ranked, tree)
        if fast is None and self._settings.route_same_search:
            # The model would choose among leaves that all search the same passages: its pick changes nothing
            # that is searched (docs/workflow.md, "Model calls that are skipped").
            margin = self._settings.route_same_search_margin
            fast = self._fast.pick_among_equals(question, ranked, tree, margin, lambda leaf: search_of(leaf, kbs, tree))
        if fast is None:
            return None
        decision = self._decided(question, kbs, tree, fast, ranked)
        return replace(decision, reason=f"{decision.reason} (no model call: {fast.reply})")

    def _decided(
        self,
        question: str,
        kbs: Scope,
        tree: IntentTree,
        classification: Classification,
        ranked: Sequence[tuple[IntentNode, float]] | None,
    ) -> RoutingDecision:
        fitter = LeafFitter(classification, ranked, self._settings.route_calibration) if ranked is not None else None
        decision = decide(classification, self._settings, tree, fitter)
        if decision.action == "clarify" and self._best_source is not None:
            # A small model sends off-topic questions ("capital of France?", a kettle in a newer upload) to some
            # leaf with a middling score; when that leaf has twins, the rules would ask "which product?". Ask
            # back only when the best passage for the question is in the choices' knowledge bases (one
            # retrieval, ~20 ms, reused by the answer when it searches the same scope).
            choices_kbs = {kb for c in decision.intents for kb in getattr(tree.get(c.code), "kbs", ())}
            best = self._best_source(question, kbs)
            if best is None or best not in choices_kbs:
                where = (
                    "nothing in the knowledge bases is relevant" if best is None else f"the best passage is in {best}"
                )
                reason = f"{decision.reason}; but {where}: not asking back, searching everything"
                return replace(decision, action="fallback", intents=(), reason=reason)
        return decision

    def warm_up(self) -> None:
        """Embed the leaves for the fast path and read the classifier's candidate list into the model's cached
        prefix (~15 s on 2 cores for the demo tree), so the first question pays for neither. The classifier is
        called directly: a greeting would be routed by the fast path and warm nothing."""
        tree = self.store.tree()
        if not tree.leaves():
            return
        if self._fast is not None:
            self._fast.similarities("hello", tree)
        self._classifier.classify("hello", tree)

    def leaf(self, code: str) -> LeafScore | None:
        """A leaf as a forced choice (the user clicked it when asked back); None if it no longer exists."""
        tree = self.store.tree()
        node = tree.get(code)
        if node is None or node.kind is None or not tree.is_leaf(code):
            return None
        return LeafScore(code, tree.full_path(code), node.kind, node.parent, 1.0)


def search_of(leaf: IntentNode, kbs: Scope, tree: IntentTree) -> Hashable | None:
    """What routing a question to ``leaf`` within ``kbs`` searches and how it answers (as the pipeline's
    ``_part`` does: its knowledge bases within the user's, its top-k, its extra instructions), and the name it
    shares with twins under other parents (a pick among twins may make the app ask back which is meant); None
    for a leaf that is not searched (a message to the assistant)."""
    if leaf.kind != "KB":
        return None
    own = frozenset(leaf.kbs)
    scope = own if kbs is None else (own & kbs or kbs)
    name = leaf.name.strip().casefold()
    twinned = any(o.code != leaf.code and o.parent != leaf.parent and o.name.strip().casefold() == name
                  for o in tree.leaves(["KB"]))  # fmt: skip
    return (scope or None, leaf.top_k, leaf.prompt, name if twinned else None)
