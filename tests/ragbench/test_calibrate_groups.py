"""The calibrator's fit report per language: where its probabilities tell right answers from wrong ones."""

from __future__ import annotations

from ragbench.answers.calibrate import by_group, group
from ragbench.answers.scoring import Row


def row(qid: str, lang: str, right: bool, cross: bool = False) -> Row:
    signals = {"cross_language": float(cross), "on_topic": 0.5}
    return Row(qid, "fact", lang, "?", True, "x [1]", True, False, right, False, False, True, (), (), None, 1.0,
               guess_right=right, signals=signals)  # fmt: skip


def test_answers_are_grouped_by_the_question_language_and_the_passages() -> None:
    assert group(row("a", "en", True)) == "en"
    assert group(row("b", "zh", True, cross=True)) == "zh→en"
    assert group(row("c", "en", False, cross=True)) == "en→zh"


def test_a_group_the_signals_cannot_judge_shows_its_right_answers_withheld() -> None:
    rows = [
        row("en-1", "en", True), row("en-2", "en", True), row("en-3", "en", False),
        row("zx-1", "zh", True, cross=True), row("zx-2", "zh", False, cross=True), row("zx-3", "zh", False, True),
    ]  # fmt: skip
    probability = {"en-1": 0.9, "en-2": 0.8, "en-3": 0.2, "zx-1": 0.4, "zx-2": 0.45, "zx-3": 0.7}
    lines = by_group(rows, probability, stated_from=0.6, high_from=0.85).splitlines()
    en = next(line for line in lines if line.startswith("en "))
    crossed = next(line for line in lines if line.startswith("zh→en"))
    assert en.split() == ["en", "3", "2", "0.85", "0.20", "0/2", "0/1", "1"]
    # its right answer gets less than its wrong ones: withheld, while one wrong answer is stated
    assert crossed.split() == ["zh→en", "3", "1", "0.40", "0.57", "1/1", "1/2", "0"]
