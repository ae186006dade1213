"""From leaf scores to a routing decision: route, ask back (clarify), answer directly (system), or fall back.

Pure: no model, no store. The rules, in order:
1. scores below ``min_intent_score`` are dropped; nothing left -> fall back to all knowledge bases;
2. the same topic under several parents (two products, two systems) -> ask the user which one. Seen two ways:
   knowledge leaves under different parents score within ``clarify_margin`` of the best one, or the best
   leaf has *twins* (leaves with the same name under other parents) and the question names none of their
   parents. A small model rarely gives equal scores, so the twin rule is what catches "how long does the
   battery last?" in practice; when the question names exactly one twin's parent, that twin is used, and
   when it names several (a comparison), all of those are used;
3. any knowledge leaf left -> route to the best ``max_intents`` of them (system leaves are ignored then);
4. only system leaves -> answer directly with the best one.

The rules read the classifier's own scores (the model's 1.0/0.7/0.4, the embedder's cosines); the leaves a
decision names carry the calibrated score of ``ragapp.router.fit`` instead (the probability that the leaf is
right), and ``fit`` holds that of the leaf it names first, with what it was computed from.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from ragapp.config import WorkflowSettings
from ragapp.router.classifier import Classification, LeafScore
from ragapp.router.fit import LeafFit, LeafFitter
from ragapp.router.tree import IntentNode, IntentTree

Action = Literal["route", "clarify", "system", "fallback"]


@dataclass(frozen=True)
class RoutingDecision:
    question: str
    action: Action
    intents: tuple[LeafScore, ...]  # route/system: the intents kept; clarify: the choices offered
    reason: str
    classification: Classification | None = None  # None when routing was off or the tree empty
    chosen: bool = False  # the user picked this when the app asked back
    # The calibrated score of the leaf named first (the first intent, else the classifier's best leaf); None when
    # none is named or nothing could calibrate it (no embedder).
    fit: LeafFit | None = None
    # Knowledge bases no intent leaf covers, searched beside the leaves' because none fits well (the pipeline
    # sets them: ``route_fit_min``).
    also: tuple[str, ...] = ()
    # Every leaf the classifier scored, in its order, with its calibrated score (empty: not calibrated).
    scores: tuple[LeafScore, ...] = ()

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(i.code for i in self.intents)


def decide(
    classification: Classification, settings: WorkflowSettings, tree: IntentTree, fitter: LeafFitter | None = None
) -> RoutingDecision:
    """The decision for ``classification``; ``fitter`` (None: the classifier's scores are shown as they are) gives
    the named leaves their calibrated scores."""
    decision = _decide(classification, settings, tree, _shown(fitter))
    if fitter is None:
        return decision
    first = decision.intents[0] if decision.intents else next(iter(classification.scores), None)
    fit = fitter.fit(first.code) if first is not None else None
    return replace(decision, fit=fit, scores=tuple(_shown(fitter)(s) for s in classification.scores))


def _shown(fitter: LeafFitter | None) -> Callable[[LeafScore], LeafScore]:
    if fitter is None:
        return lambda leaf: leaf
    return lambda leaf: replace(leaf, score=fitter.score(leaf.code, leaf.score))


def _decide(
    classification: Classification,
    settings: WorkflowSettings,
    tree: IntentTree,
    shown: Callable[[LeafScore], LeafScore],
) -> RoutingDecision:
    question = classification.question
    if classification.error is not None:
        return RoutingDecision(
            question, "fallback", (), f"no intent ({classification.error}): searching everything", classification
        )
    kept = [s for s in classification.scores if s.score >= settings.min_intent_score]
    if not kept:
        best = classification.scores[0] if classification.scores else None
        why = (
            f"the best intent, {best.path}, scored {best.score:.2f} < {settings.min_intent_score:.2f}"
            if best is not None
            else "the model matched no intent"
        )
        return RoutingDecision(question, "fallback", (), f"{why}: searching everything", classification)

    knowledge = [s for s in kept if s.kind == "KB"]
    if knowledge:
        top = knowledge[0]
        close = [s for s in knowledge if top.score - s.score <= settings.clarify_margin + 1e-9]
        if len({s.parent for s in close}) > 1:
            codes = [c.code for c in close]
            named = [c for c in close if c.parent is not None and _names_parent(question, tree, c.code, codes)]
            if named:  # "V1 or V2 Pro, which is stronger?": the question says which ones it means
                chosen = tuple(shown(c) for c in named[: settings.max_intents])
                reason = "the question names " + "; ".join(c.path for c in chosen)
                return RoutingDecision(question, "route", chosen, reason, classification)
            choices = tuple(shown(c) for c in close[: settings.max_clarify_choices])
            paths = "; ".join(f"{c.path} ({c.score:.2f})" for c in choices)
            reason = (
                f"{len(close)} intents under different parents scored within {settings.clarify_margin:.2f}: {paths}"
            )
            return RoutingDecision(question, "clarify", choices, reason, classification)
        twins = _twins(tree, top.code)
        if twins:
            group = [top, *(replace(_leaf_score(tree, t.code), score=top.score) for t in twins)]
            named = [leaf for leaf in group if _names_parent(question, tree, leaf.code, [g.code for g in group])]
            if not named:
                choices = tuple(shown(c) for c in group[: settings.max_clarify_choices])
                reason = (
                    f"'{tree.get(top.code).name}' exists under {len(group)} parents "  # type: ignore[union-attr]
                    f"and the question names none of them: {'; '.join(c.path for c in choices)}"
                )
                return RoutingDecision(question, "clarify", choices, reason, classification)
            if named != [top]:
                chosen = tuple(shown(c) for c in named[: settings.max_intents])
                reason = "the question names " + "; ".join(c.path for c in chosen) + f" (the model chose {top.path})"
                return RoutingDecision(question, "route", chosen, reason, classification)
        chosen = tuple(shown(c) for c in knowledge[: settings.max_intents])
        reason = "routed to " + "; ".join(f"{c.path} ({c.score:.2f})" for c in chosen)
        return RoutingDecision(question, "route", chosen, reason, classification)

    top_system = shown(kept[0])
    return RoutingDecision(
        question,
        "system",
        (top_system,),
        f"a message to the assistant: {top_system.path} ({top_system.score:.2f})",
        classification,
    )


def _leaf_score(tree: IntentTree, code: str) -> LeafScore:
    node = tree.get(code)
    assert node is not None and node.kind is not None
    return LeafScore(code, tree.full_path(code), node.kind, node.parent, 0.0)


def _twins(tree: IntentTree, code: str) -> list[IntentNode]:
    """Knowledge leaves with the same name as ``code`` under other parents, in tree order."""
    node = tree.get(code)
    if node is None or node.parent is None:
        return []
    name = node.name.casefold().strip()
    return [
        leaf
        for leaf in tree.leaves(["KB"])
        if leaf.code != code and leaf.parent != node.parent and leaf.name.casefold().strip() == name
    ]


_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if len(w) > 1 or not w.isascii()}


def _ancestor_words(tree: IntentTree, code: str) -> set[str]:
    return set().union(*(_words(n.name) for n in tree.path(code)[:-1]))


def _names_parent(question: str, tree: IntentTree, code: str, group: list[str]) -> bool:
    """Does ``question`` name a word of ``code``'s ancestors that the other leaves of ``group`` lack
    ("V2", "Pro", "Glide", "擦窗机器人")? ASCII words match whole; Chinese ones as substrings."""
    others = set().union(*(_ancestor_words(tree, c) for c in group if c != code))
    distinctive = _ancestor_words(tree, code) - others
    text = question.casefold()
    asked = _words(question)
    return any((w in asked) if w.isascii() else (w in text) for w in distinctive)


def not_routed(question: str, reason: str) -> RoutingDecision:
    """Routing was off, or the tree has no leaves: search everything."""
    return RoutingDecision(question, "fallback", (), reason)
