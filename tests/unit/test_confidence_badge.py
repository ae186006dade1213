"""The confidence badge under an answer and the words behind it (``ragapp.core.confidence_words``), drawn from
synthetic answers: no model, no browser (tests/e2e/test_confidence_badge_browser.py shows it in one)."""

from __future__ import annotations

import re
from typing import get_args

from ragapp.core.confidence_words import CHECKS, LEVELS, answer_look, reasons
from ragapp.core.events import AnswerEvent
from ragapp.core.types import Chunk, Citation, Confidence, ConfidenceCheck, ConfidenceLevel
from ragapp.engine.chat_export import confidence_lines
from ragapp.ui.confidence_badge import confidence_badge
from ragapp.ui.render import TurnView
from tests.text import shown

CHUNK = Chunk("d1-0000", "d1", 0, "The V1 draws 2600 Pa.", "lumen_v1.md")
CITED = (Citation(1, CHUNK),)
LATIN = re.compile(r"[A-Za-z]")


def _answer(confidence: Confidence | None, grounded: bool = True, abstained: bool = False) -> AnswerEvent:
    return AnswerEvent("2600 Pa [1].", CITED if grounded else (), grounded, abstained, confidence=confidence)


def _checks(*passed: tuple[str, bool]) -> tuple[ConfidenceCheck, ...]:
    return tuple(ConfidenceCheck(name, ok) for name, ok in passed)


def _text(badge: str, lang: str = "en") -> str:
    """The badge's words as a page in ``lang`` shows them."""
    return re.sub(r"<[^>]+>", "", shown(badge, lang))


def _reason_lines(badge: str, lang: str = "en") -> list[str]:
    return [shown(r, lang) for r in re.findall(r'<span class="confidence-reason[^"]*">(.*?</span>)</span>', badge)]


def test_every_level_has_its_own_icon_and_words_in_both_languages() -> None:
    assert set(get_args(ConfidenceLevel)) <= set(LEVELS)
    assert len({look.icon for look in LEVELS.values()}) == len(LEVELS)  # shapes differ, not colours alone
    for look in LEVELS.values():
        for said in (look.name, look.label, look.meaning):
            assert said.english and said.chinese and not LATIN.search(said.chinese)
    for passed, failed in CHECKS.values():
        assert not LATIN.search(passed.chinese) and not LATIN.search(failed.chinese)


def test_a_high_answer_shows_its_level_and_every_passed_check() -> None:
    high = Confidence("high", _checks(("supported", True), ("fits", True), ("agrees", True), ("on_topic", True)))
    badge = confidence_badge(_answer(high))
    assert "\n" not in badge  # one line: Markdown keeps it as one HTML block
    assert badge.startswith('<details class="confidence-badge confidence-high"><summary>')
    assert "✔" in _text(badge) and "High confidence" in _text(badge)
    assert _reason_lines(badge) == [
        "✓ Every sentence is in the passages",
        "✓ It gives what was asked for",
        "✓ It says what the quoted sentence says",
        "✓ The passage it rests on is about the question",
    ]


def test_a_medium_answer_says_what_kept_it_from_high() -> None:
    # The example: every check passed, the quote agreed, yet the passage is about another model.
    partly = Confidence("medium", _checks(("supported", True), ("fits", True), ("agrees", True), ("on_topic", True)))
    lines = _reason_lines(confidence_badge(_answer(partly)))
    assert lines[0] == "– The passage it rests on matches the question only in part"
    assert "✓ The passage it rests on is about the question" not in lines
    unquoted = Confidence("medium", _checks(("supported", True), ("fits", True)))
    assert _reason_lines(confidence_badge(_answer(unquoted)))[:2] == [
        "– It was not compared with a quoted sentence",
        "– How closely the passage matches the question was not measured",
    ]
    differs = Confidence("medium", _checks(("supported", True), ("agrees", False), ("on_topic", True)))
    assert _reason_lines(confidence_badge(_answer(differs)))[0] == "✗ It differs from the quoted sentence"
    badge = confidence_badge(_answer(differs))
    assert "confidence-medium" in badge and "◐ Medium confidence" in _text(badge)


def test_a_low_answer_lists_the_failed_checks_first() -> None:
    low = Confidence("low", _checks(("supported", True), ("fits", False)))
    badge = confidence_badge(_answer(low))
    assert "⚠ Not sure" in _text(badge) and "Likely wrong; check the passage." in _text(badge)
    assert _reason_lines(badge) == ["✗ It may not answer what was asked", "✓ Every sentence is in the passages"]


def test_the_chinese_badge_holds_no_english() -> None:
    for level, checks in [
        ("high", _checks(("supported", True), ("fits", True), ("agrees", True), ("on_topic", True))),
        ("medium", _checks(("supported", True), ("fits", True))),
        ("low", _checks(("supported", False), ("fits", False), ("agrees", False), ("on_topic", False))),
    ]:
        badge = confidence_badge(_answer(Confidence(level, checks)))  # type: ignore[arg-type]
        text = _text(badge, "zh")
        assert text and not LATIN.search(text), text
    assert "中等置信度" in _text(confidence_badge(_answer(Confidence("medium"))), "zh")


def test_a_part_checked_in_several_parts_is_said_once_failed_if_any_part_failed() -> None:
    parts = Confidence(
        "low", _checks(("supported", True), ("supported", False), ("fits", True), ("fits", True), ("parts", False))
    )
    assert [(r.state, r.said.english) for r in reasons(parts)] == [
        ("failed", "not every sentence is in the passages"),
        ("failed", "some parts of the question are not in the documents"),
        ("passed", "it gives what was asked for"),
    ]


def test_answers_that_state_nothing_from_the_documents_get_no_badge() -> None:
    assert confidence_badge(_answer(None, grounded=False)) == ""  # a greeting, an ask-back, "not found"
    assert confidence_badge(_answer(None, grounded=False, abstained=True)) == ""  # a refusal
    assert answer_look(_answer(None, grounded=False)) is None


def test_a_grounded_answer_never_checked_gets_the_neutral_badge() -> None:
    badge = confidence_badge(_answer(None))  # the support check turned off, or the passages shown instead
    assert "confidence-unchecked" in badge and "○ Not checked" in _text(badge) and "未核对" in _text(badge, "zh")
    assert _reason_lines(badge) == []


def test_the_badge_sits_under_the_answer_and_the_low_note_under_it() -> None:
    view = TurnView()
    view.apply(_answer(Confidence("low", _checks(("fits", False)))))
    answer = str(view.messages()[0].content)
    text, badge, note = answer.split("\n\n")
    assert text.startswith("2600 Pa") and badge.startswith("<details") and note.startswith("⚠️ **May be wrong")


def test_the_exported_chat_says_the_same_reasons() -> None:
    medium = _answer(Confidence("medium", _checks(("supported", True), ("fits", True))))
    assert confidence_lines(medium, chinese=False) == [
        "*Confidence: medium*",
        "",
        "- – It was not compared with a quoted sentence",
        "- – How closely the passage matches the question was not measured",
        "- ✓ Every sentence is in the passages",
        "- ✓ It gives what was asked for",
        "",
    ]
    assert confidence_lines(medium, chinese=True)[2] == "- – 没有与引用的原文句子对照"
    assert confidence_lines(_answer(None), chinese=True) == ["*置信度：未核对*", ""]
    assert confidence_lines(_answer(None, grounded=False), chinese=False) == []
