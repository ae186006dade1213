"""Procedural memory's rules: from what was kept per kind of question, the mode Auto takes and the order the agent's
tools are listed in. Pure functions over tallies; the tallies are kept by ``ragapp.store.procedural`` and learned
by ``ragapp.engine.procedural``.

A share kept is smoothed as (kept + 1) / (answers + 2) (Laplace's rule of succession), so that 2 of 2 does not
outweigh 30 of 40, and a mode with no answers counts as a coin toss rather than as never kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ragapp.core.events import ExperienceEvent, Tally
from ragapp.core.lang import said_as

MODE_NAMES = {"workflow": ("the workflow", "工作流"), "agent": ("the agent", "智能体")}


def kept_share(tally: Tally | None) -> float:
    """The smoothed share of answers kept: 0.5 with no evidence."""
    if tally is None:
        return 0.5
    return (tally.kept + 1) / (tally.answers + 2)


@dataclass(frozen=True)
class Experience:
    """Everything learned about one kind of question: per mode, and per agent tool (of the agent's answers)."""

    kind: str
    modes: tuple[Tally, ...] = ()
    tools: tuple[Tally, ...] = ()

    def mode(self, name: str) -> Tally | None:
        return next((t for t in self.modes if t.name == name), None)

    def tool(self, name: str) -> Tally | None:
        return next((t for t in self.tools if t.name == name), None)


def learned_mode(
    question: str,
    rule: Literal["workflow", "agent"],
    experience: Experience,
    min_answers: int,
    margin: float,
) -> tuple[Literal["workflow", "agent"], str] | None:
    """(the other mode, why) when questions of this kind were kept clearly more often with the mode the rule did
    not pick: at least ``min_answers`` answers with it, and a smoothed share kept at least ``margin`` above the
    rule's mode. None: the rule stands. ``why`` is in the question's language."""
    other: Literal["workflow", "agent"] = "agent" if rule == "workflow" else "workflow"
    theirs, ours = experience.mode(other), experience.mode(rule)
    if theirs is None or theirs.answers < min_answers:
        return None
    better = kept_share(theirs) - kept_share(ours)
    if better <= 0 or better < margin:  # never for a tie, even with no margin asked
        return None
    english, chinese = MODE_NAMES[other]
    mine_en, mine_zh = MODE_NAMES[rule]
    base_en = f"{ours.kept} of {ours.answers} kept" if ours is not None else "no answers yet"
    base_zh = f"{ours.answers} 个回答中保留 {ours.kept} 个" if ours is not None else "尚无回答"
    return other, said_as(
        question,
        f"questions like this were answered better by {english}: {theirs.kept} of {theirs.answers} kept "
        f"({mine_en}: {base_en})",
        f"这类问题用{chinese}回答得更好：{theirs.answers} 个回答中保留 {theirs.kept} 个（{mine_zh}：{base_zh}）",
    )


def tool_order(names: Sequence[str], experience: Experience, min_answers: int) -> list[str]:
    """``names`` with the tools that worked for this kind of question first: those used in at least
    ``min_answers`` agent answers and kept more often than not (smoothed), best first; the rest keep their order."""
    worked = [
        n for n in names if (t := experience.tool(n)) is not None and t.answers >= min_answers and kept_share(t) > 0.5
    ]
    worked.sort(key=lambda n: -kept_share(experience.tool(n)))  # stable: ties keep the configured order
    return worked + [n for n in names if n not in worked]


def experience_event(
    experience: Experience, mode: str = "", reason: str = "", order: Sequence[str] = ()
) -> ExperienceEvent:
    """The event that puts the evidence used (and what it changed) in the trace."""
    return ExperienceEvent(experience.kind, experience.modes, experience.tools, mode, reason, tuple(order))
