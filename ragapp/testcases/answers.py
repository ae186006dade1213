"""Saved test cases answered as a user would be answered, each judged accurate, missing or hallucinated as CRAG
judges (``truthfulness``), and a run compared with the one before it: the regression check of the Traces tab.

A case's answer is stated unless the app refused (``AnswerEvent.abstained``, or not grounded: nothing relevant
was found), said "not sure" (``AnswerEvent.not_sure``), asked a question back, or gave no answer. A stated answer
is right when it holds the case's ``must_contain`` text (case and spacing aside, citation markers removed), or,
for a case saved without one, when it cites one of the case's expected documents. A case saved as
``unanswerable`` (the documents do not hold the answer) is accurate when refused and hallucinated when answered.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragapp.core.events import AnswerEvent, EngineEvent
from ragapp.core.serial import Stored
from ragapp.core.turn import Turn
from ragapp.core.types import Scope
from ragapp.testcases.truthfulness import Comparison, Tally, Verdict, compare, verdict

if TYPE_CHECKING:
    from ragapp.testcases.case import TestCase

ANSWER_CHARS = 600  # of the app's answer kept with a run: enough to see what it said
_MARKER = re.compile(r"\s*\[\d+\]")

Ask = Callable[[str, Scope], Iterable[EngineEvent]]


@dataclass(frozen=True)
class CaseAnswer(Stored):
    """One case's outcome in a run: ``stated`` an answer or not, ``in_prompt`` an expected document reached the
    prompt, ``cited`` the documents the stated answer cites."""

    question: str
    verdict: Verdict
    answer: str = ""
    stated: bool = False
    unanswerable: bool = False
    in_prompt: bool = False
    cited: tuple[str, ...] = ()


@dataclass(frozen=True)
class AnswerRun(Stored):
    """A kept run over an owner's cases; ``settings``: what it ran with (mode, retrieval knobs)."""

    id: int
    created_at: str
    results: tuple[CaseAnswer, ...] = ()
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def tally(self) -> Tally:
        return Tally.of(r.verdict for r in self.results)

    def verdicts(self) -> dict[str, Verdict]:
        """Question -> verdict (a case is one per owner and question, so the question names it across runs)."""
        return {r.question: r.verdict for r in self.results}


@dataclass(frozen=True)
class AnswerCheck:
    """A run and the run before it (None: the first one kept)."""

    run: AnswerRun
    previous: AnswerRun | None = None

    @property
    def comparison(self) -> Comparison | None:
        return compare(self.previous.verdicts(), self.run.verdicts()) if self.previous is not None else None


def stated(answer: AnswerEvent | None) -> bool:
    """The app stated an answer: not a refusal, a "not sure", a question back (no answer) or an empty reply."""
    if answer is None or answer.not_sure:
        return False
    return answer.grounded and not answer.abstained and bool(answer.text.strip())


def holds(text: str, expected: str) -> bool:
    """``text`` holds ``expected``, case and spacing aside, its citation markers removed."""
    plain = " ".join(_MARKER.sub("", text).casefold().split())
    return " ".join(expected.casefold().split()) in plain


def judge(case: TestCase, turn: Turn) -> CaseAnswer:
    """The verdict on the answer ``turn`` gave to ``case``."""
    said = stated(turn.answer)
    cited = tuple(dict.fromkeys(c.chunk.source for c in turn.citations)) if said else ()  # a refusal's are no citing
    right = holds(turn.text, case.must_contain) if case.must_contain else bool(set(cited) & set(case.expected))
    return CaseAnswer(
        question=case.question,
        verdict=verdict(not case.unanswerable, said, right),
        answer=turn.text[:ANSWER_CHARS],
        stated=said,
        unanswerable=case.unanswerable,
        in_prompt=bool({c.source for c in turn.context} & set(case.expected)),
        cited=cited,
    )


def answer_cases(
    cases: Sequence[TestCase], ask: Ask, progress: Callable[[int, int], None] | None = None
) -> list[CaseAnswer]:
    """Ask each case's question (in its knowledge bases) and judge the answer; ``progress(done, total)`` after
    each."""
    results = []
    for number, case in enumerate(cases, start=1):
        kbs = frozenset(case.kbs) if case.kbs is not None else None
        results.append(judge(case, Turn.of(ask(case.question, kbs))))
        if progress is not None:
            progress(number, len(cases))
    return results
