"""How an answer's confidence is said to a person, in English and Chinese: each level's icon, name and meaning,
and the checks behind it (``ragapp.qa.confidence``) as words. The one place that maps a level to what is shown:
the chat's badge (``ragapp.ui.confidence_badge``), its low-confidence note, the exported chat and the Traces tab
all read it, so a level worded anew ("low" shown as "not sure") changes here once.

Kept in the core, below both the engine (the exported chat is made there) and the UI. Pure data and functions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from ragapp.core.events import AnswerEvent
from ragapp.core.types import Confidence, ConfidenceCheck


@dataclass(frozen=True)
class Said:
    """The same words in English and in Chinese."""

    english: str
    chinese: str

    def pick(self, chinese: bool) -> str:
        return self.chinese if chinese else self.english


@dataclass(frozen=True)
class LevelLook:
    """How a level is shown: ``tone`` (the badge's style: colour and border), an ``icon`` whose shape differs
    from level to level (colour is never the only sign), its ``name`` ("medium": the export's and the trace's
    "Confidence: medium"), the badge's ``label`` and what the level means for the reader."""

    tone: str
    icon: str
    name: Said
    label: Said
    meaning: Said


LEVELS: dict[str, LevelLook] = {
    "high": LevelLook(
        "high", "✔", Said("high", "高"), Said("High confidence", "高置信度"),
        Said("Every check passed.", "各项核对均已通过。"),
    ),
    "medium": LevelLook(
        "medium", "◐", Said("medium", "中"), Said("Medium confidence", "中等置信度"),
        Said("Probably right; check the passage if it matters.", "大概率正确；如果重要，请核对原文。"),
    ),
    "low": LevelLook(
        "low", "⚠", Said("not sure", "不确定"), Said("Not sure", "不确定"),
        Said("Likely wrong; check the passage.", "很可能有误，请核对原文。"),
    ),
}  # fmt: skip
# A grounded answer whose confidence was not assessed (the support check turned off, the model failed and the
# passages are shown instead): it states what the documents say, so it is marked, never left to look checked.
UNCHECKED = LevelLook(
    "unchecked", "○", Said("not checked", "未核对"), Said("Not checked", "未核对"),
    Said("This answer was not checked against the passages.", "这个回答没有与原文核对。"),
)  # fmt: skip

# Each check (ragapp.qa.confidence, ragapp.qa.answer_check): its words when passed, and when failed. Fragments in
# lower case: the low-confidence note puts the failed ones in brackets, the badge starts each with a capital.
CHECKS: dict[str, tuple[Said, Said]] = {
    "supported": (
        Said("every sentence is in the passages", "每句话都能在原文中找到"),
        Said("not every sentence is in the passages", "有的句子在原文中找不到"),
    ),
    "fits": (
        Said("it gives what was asked for", "给出了所问的内容"),
        Said("it may not answer what was asked", "可能没有回答所问的问题"),
    ),
    "agrees": (
        Said("it says what the quoted sentence says", "与引用的原文句子一致"),
        Said("it differs from the quoted sentence", "与引用的原文句子不一致"),
    ),
    "on_topic": (
        Said("the passage it rests on is about the question", "所依据的原文与问题相关"),
        Said("the passage it rests on may be about something else", "所依据的原文可能说的是别的事"),
    ),
    "selected": (
        Said("a sentence of the passages answers it", "资料中有句子回答了这个问题"),
        Said("no sentence of the passages answers it", "资料中没有句子回答这个问题"),
    ),
    "parts": (
        Said("every part of the question is answered", "问题的每个部分都有回答"),
        Said("some parts of the question are not in the documents", "问题的某些部分在文档中找不到"),
    ),
}
# Why an answer that failed no check is not "high" (see ``confidence._level``): no quote confirmed it, the passage
# was not scored against the question (reranking off), or it matches the question under the "high" bar.
NOT_COMPARED = Said("it was not compared with a quoted sentence", "没有与引用的原文句子对照")
NOT_SCORED = Said("how closely the passage matches the question was not measured", "没有衡量原文与问题的贴合程度")
PARTLY_ON_TOPIC = Said("the passage it rests on matches the question only in part", "所依据的原文与问题只部分贴合")

ReasonState = Literal["failed", "short", "passed"]  # short: passed, yet short of what "high" needs
REASON_ICONS: dict[ReasonState, str] = {"failed": "✗", "short": "–", "passed": "✓"}


@dataclass(frozen=True)
class Reason:
    """One reason behind a level, in words: a check failed, short of "high", or passed."""

    state: ReasonState
    said: Said

    @property
    def icon(self) -> str:
        return REASON_ICONS[self.state]

    @property
    def sentence(self) -> Said:
        """The words as a line of their own: the English begun with a capital."""
        english = self.said.english
        return Said(english[:1].upper() + english[1:], self.said.chinese)


def level_look(confidence: Confidence | None) -> LevelLook:
    """How ``confidence`` is shown; None (not assessed) and a level this catalogue lacks: ``UNCHECKED``."""
    return LEVELS.get(confidence.level, UNCHECKED) if confidence is not None else UNCHECKED


def answer_look(answer: AnswerEvent) -> LevelLook | None:
    """How ``answer``'s confidence is shown, or None for an answer that states nothing from the documents (a
    greeting, an ask-back, a refusal, "not found"): no level is shown for those, as nothing there could be wrong
    about the documents. A grounded answer whose confidence was not assessed is ``UNCHECKED``."""
    if answer.confidence is None and (not answer.grounded or answer.abstained):
        return None
    return level_look(answer.confidence)


def reasons(confidence: Confidence | None) -> tuple[Reason, ...]:
    """The checks behind ``confidence`` in words, failed first, then what kept it from "high", then the passed
    ones. A check of several parts (a question answered part by part) is said once: failed if any part failed."""
    if confidence is None:
        return ()
    merged = _merged(confidence.checks)
    said: list[Reason] = []
    for check, passed in merged.items():
        if check in CHECKS:
            said.append(Reason("passed" if passed else "failed", CHECKS[check][not passed]))
    if confidence.level == "medium" and all(merged.values()):
        if "agrees" not in merged:
            said.append(Reason("short", NOT_COMPARED))
        if "on_topic" not in merged:
            said.append(Reason("short", NOT_SCORED))
        elif "agrees" in merged:  # every check passed and the quote agreed: the passage's score was under the bar
            on_topic = CHECKS["on_topic"][0]
            said = [Reason("short", PARTLY_ON_TOPIC) if r.said == on_topic else r for r in said]
    order: tuple[ReasonState, ...] = ("failed", "short", "passed")
    return tuple(sorted(said, key=lambda r: order.index(r.state)))


def failed_words(confidence: Confidence, chinese: bool) -> list[str]:
    """The failed checks' words, for a note that says why an answer may be wrong."""
    return [r.said.pick(chinese) for r in reasons(confidence) if r.state == "failed"]


def _merged(checks: Iterable[ConfidenceCheck]) -> dict[str, bool]:
    merged: dict[str, bool] = {}
    for check in checks:
        merged[check.check] = merged.get(check.check, True) and check.passed
    return merged
