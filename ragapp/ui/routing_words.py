"""What the page says, in both languages, when routing reached past the intent tree: the knowledge bases no
intent leaf covers, searched because no leaf fits the question well or because the leaf's search was weak
(``ragapp.qa.widen``), and the notice that an upload went into such a base. Said from the engine's typed
records (``RoutingEvent.also``, ``Widened``), never parsed back from its sentences."""

from __future__ import annotations

from collections.abc import Sequence

from ragapp.core.events import RoutingEvent, Widened
from ragapp.engine import RetrievalRecord, RoutingRecord
from ragapp.ui.i18n import both
from ragapp.ui.markup import escape_text


def _names(kbs: Sequence[str]) -> str:
    return ", ".join(f"**{escape_text(kb)}**" for kb in kbs)


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def not_fitting(also: Sequence[str], fit: float | None, fit_min: float | None) -> str:
    """'Also searched default, which no intent covers: no intent fits this question well (0.16 < 0.70)'."""
    names, score, least = _names(also), _score(fit), _score(fit_min)
    return both(
        f"Also searched {names}, which no intent covers: no intent fits this question well ({score} < {least}).",
        f"同时检索了没有意图覆盖的 {names}：没有哪个意图与这个问题足够匹配（{score} < {least}）。",
    )


def routing_line(event: RoutingEvent) -> str | None:
    """The routing bubble's line about the uncovered bases searched beside the leaves (None: none were)."""
    return not_fitting(event.also, event.fit, event.fit_min) if event.also else None


def weak_search(widened: Widened) -> str:
    """A notice: the leaf's search was weak, so the uncovered bases were searched too."""
    names, best, below = _names(widened.added), _score(widened.best), _score(widened.below)
    return both(
        f"The intent's knowledge bases held nothing strong (best {best} < {below}): also searched {names}, "
        "which no intent covers.",
        f"该意图的知识库中没有高度相关的内容（最高 {best} < {below}）：已同时检索没有意图覆盖的 {names}。",
    )


def why_widened(search: RetrievalRecord, routing: Sequence[RoutingRecord], notices: Sequence[Widened]) -> list[str]:
    """For "why not this document?": why ``search`` read knowledge bases outside its intent's, one line each."""
    searched = set(search.kbs or ())
    lines = [not_fitting(r.also, r.fit, r.fit_min) for r in routing if r.also and set(r.also) <= searched]
    lines += [weak_search(w) for w in notices if set(w.added) <= searched]
    return list(dict.fromkeys(lines))


def uncovered_upload(kb: str) -> str:
    """Under an upload into a knowledge base no intent leaf searches."""
    name = f"**{escape_text(kb)}**"
    return "ℹ️ " + both(
        f"No intent searches {name}: a question is searched there when no intent fits it well, or when its "
        f"intent's search is weak. Add an intent for {name} to route its questions there directly.",
        f"没有意图检索 {name}：只有当问题与各意图都不够匹配、或所选意图的检索结果很弱时，才会检索它。"
        f"为 {name} 添加一个意图，相关问题就会直接路由到这里。",
    )
