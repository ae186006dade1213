"""Routing never hides a knowledge base.

A knowledge base that no intent leaf searches (an upload into "default" while every leaf of the tree searches
"demo") is out of routing's reach: a question about it is sent to the closest leaf, searched there only, and
refused. Two rules bring it back, each one more search and no model call:

- a routed part whose leaf does not fit well (its calibrated score, ``ragapp.router.fit``, below
  ``route_fit_min``) also searches the uncovered bases within the user's scope (``with_uncovered``);
- a routed search that keeps passages but none the reranker scores ``widen_below_score`` or more is searched
  again with the uncovered bases beside the leaves' (``weak``, ``widened_notice``).

A question that fits no leaf at all falls back to everything the user may read, as before; a routed search that
kept nothing widens to the user's whole scope (``widened``).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import replace

from ragapp.config import WorkflowSettings
from ragapp.core.events import EngineEvent, NoticeEvent, RoutingEvent, Widened
from ragapp.core.lang import said_as
from ragapp.core.types import RetrievalResult, Scope
from ragapp.qa.parts import scope_words
from ragapp.router.decide import RoutingDecision


def with_uncovered(
    decision: RoutingDecision, uncovered: Callable[[], frozenset[str]], fit_min: float
) -> RoutingDecision:
    """``decision`` with the ``uncovered`` knowledge bases to search beside its leaves' when it routes to a leaf
    that fits below ``fit_min``. Unchanged for the user's own pick after an ask-back, a decision without a
    calibrated score, or no uncovered base."""
    fit = decision.fit
    if decision.action != "route" or decision.chosen or fit is None or fit.probability >= fit_min:
        return decision
    beside = uncovered()
    return replace(decision, also=tuple(sorted(beside))) if beside else decision


def weak(result: RetrievalResult, below: float) -> bool:
    """The search kept passages, each with a rerank score, and none reaches ``below`` (without a reranker a
    search is never weak: there is no score to judge it by)."""
    scores = [c.rerank_score for c in result.chunks]
    return bool(scores) and all(s is not None and s < below for s in scores)


def best_rerank(result: RetrievalResult) -> float | None:
    return max((c.rerank_score for c in result.chunks if c.rerank_score is not None), default=None)


def widened_notice(question: str, added: frozenset[str], best: float | None, below: float) -> NoticeEvent:
    """What the user is told when a weak routed search was widened (the typed record; the message is the
    engine's words for logs and the API)."""
    names = ", ".join(sorted(added))
    shown = "none" if best is None else f"{best:.2f}"
    english = (
        f"The intent's knowledge bases held nothing strong (best {shown} < {below:.2f}); also searched {names}, "
        "which no intent covers."
    )
    chinese = f"该意图的知识库中没有高度相关的内容（最高 {shown} < {below:.2f}）；已同时检索没有意图覆盖的{names}。"
    return NoticeEvent(said_as(question, english, chinese), widened=Widened(tuple(sorted(added)), best, below))


def routing_event(decision: RoutingDecision, fit_min: float) -> RoutingEvent:
    """The event of one part's routing: the decision with its calibrated scores and the bases it adds."""
    scores = decision.scores or (decision.classification.scores if decision.classification is not None else ())
    fit = decision.fit.probability if decision.fit is not None else None
    also = decision.also
    return RoutingEvent(
        decision.question, decision.action, decision.intents, decision.reason, scores, fit, also,
        fit_min if also else None,
    )  # fmt: skip


def widened(
    question: str,
    scope: Scope,
    kbs: Scope,
    search: Callable[[Scope], RetrievalResult],
    uncovered: Callable[[], frozenset[str]],
    settings: WorkflowSettings,
) -> Generator[EngineEvent, None, RetrievalResult]:
    """A part's search in its ``scope`` (within the user's ``kbs``), widened when it is weak (the uncovered bases
    beside) or kept nothing (the user's whole scope), with a notice each time; returns the search to use."""
    result = search(scope)
    if result.chunks and scope is not None and weak(result, settings.widen_below_score):
        beside = uncovered() - scope
        if beside:
            best = best_rerank(result)
            result = search(scope | beside)
            yield widened_notice(question, beside, best, settings.widen_below_score)
    if not result.chunks and scope != kbs:
        # The intent's knowledge bases hold nothing relevant: the tree may not know a newer upload, or the model
        # routed wrongly. Searching the wider scope costs one retrieval, not an answer.
        result = search(kbs)
        named = ", ".join(sorted(scope or ()))
        where = named or "the intent's knowledge bases"
        english = f"Nothing relevant in {where}; searched {scope_words(kbs)} instead."
        wider = "全部知识库" if kbs is None else f"所选知识库（{', '.join(sorted(kbs))}）"
        chinese = f"{named or '该意图的知识库'}中没有相关内容，已改为检索{wider}。"
        yield NoticeEvent(said_as(question, english, chinese))
    return result
