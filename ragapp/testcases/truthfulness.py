"""Truthfulness, scored the way the CRAG benchmark scores assistants (Yang et al., 2024, "CRAG - Comprehensive
RAG Benchmark"): every question gets one verdict,

- accurate (+1): a right answer, or an honest refusal of a question the documents cannot answer;
- missing (0): a refusal, a "not sure", a question back or no answer at all to an answerable question;
- hallucinated (-1): a wrong answer, or any answer to an unanswerable question;

and truthfulness is their mean, the accurate share minus the hallucinated share (from -1 to +1). The answer sets
(``ragbench.answers``) and the saved test cases (the Traces tab) score alike, and two runs compared name the
questions whose verdict went up (better) or down (worse). Pure functions on plain values.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

Verdict = Literal["accurate", "missing", "hallucinated"]
VERDICTS: tuple[Verdict, ...] = ("accurate", "missing", "hallucinated")
POINTS: dict[Verdict, int] = {"accurate": 1, "missing": 0, "hallucinated": -1}


def verdict(answerable: bool, stated: bool, right: bool) -> Verdict:
    """The verdict on one question. ``stated``: the app stated an answer (not a refusal, a "not sure", a question
    back or an error); ``right``: that answer holds the expected one (read only when an answerable question got
    one)."""
    if not stated:
        return "missing" if answerable else "accurate"
    return "accurate" if answerable and right else "hallucinated"


@dataclass(frozen=True)
class Tally:
    """How many questions got each verdict."""

    accurate: int = 0
    missing: int = 0
    hallucinated: int = 0

    @classmethod
    def of(cls, verdicts: Iterable[Verdict]) -> Tally:
        counts = Counter(verdicts)
        return cls(counts["accurate"], counts["missing"], counts["hallucinated"])

    @property
    def questions(self) -> int:
        return self.accurate + self.missing + self.hallucinated

    def share(self, which: Verdict) -> float | None:
        """The share of the questions with verdict ``which`` (None: no question)."""
        return getattr(self, which) / self.questions if self.questions else None

    @property
    def score(self) -> float | None:
        """Truthfulness: the mean points, accurate share minus hallucinated share (None: no question)."""
        return (self.accurate - self.hallucinated) / self.questions if self.questions else None

    def as_json(self) -> dict[str, Any]:
        """Counts, shares (``accurate_share``...) and ``truthfulness``, as a result file's summary holds them."""
        shares = {f"{v}_share": self.share(v) for v in VERDICTS}
        return {v: getattr(self, v) for v in VERDICTS} | shares | {"truthfulness": self.score}


@dataclass(frozen=True)
class Change:
    """A question whose verdict differs between two runs; ``key`` names it (an answer set's question id, a test
    case's question)."""

    key: str
    before: Verdict
    after: Verdict

    @property
    def better(self) -> bool:
        return POINTS[self.after] > POINTS[self.before]


@dataclass(frozen=True)
class Comparison:
    """Two runs side by side: each run's tally over its own questions, and the questions both asked whose verdict
    went up or down; ``dropped`` / ``added``: questions only the earlier / only the later run asked."""

    before: Tally
    after: Tally
    better: tuple[Change, ...]
    worse: tuple[Change, ...]
    dropped: tuple[str, ...] = ()
    added: tuple[str, ...] = ()

    @property
    def delta(self) -> float | None:
        """The change in truthfulness (None when either run has no question)."""
        if self.before.score is None or self.after.score is None:
            return None
        return self.after.score - self.before.score


def compare(before: Mapping[str, Verdict], after: Mapping[str, Verdict]) -> Comparison:
    """Compare two runs given as question key -> verdict; changes come in the later run's order."""
    changed = [Change(k, before[k], v) for k, v in after.items() if k in before and before[k] != v]
    return Comparison(
        Tally.of(before.values()),
        Tally.of(after.values()),
        better=tuple(c for c in changed if c.better),
        worse=tuple(c for c in changed if not c.better),
        dropped=tuple(k for k in before if k not in after),
        added=tuple(k for k in after if k not in before),
    )
