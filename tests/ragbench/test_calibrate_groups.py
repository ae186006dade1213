"""The calibrator's fit report per language, where its probabilities tell right answers from wrong ones, and per
file, each scored by a fit on the others."""

from __future__ import annotations

from ragbench.answers.calibrate import by_file, by_group, group
from ragbench.answers.scoring import Row


def row(qid: str, lang: str, right: bool, cross: bool = False, on_topic: float = 0.5) -> Row:
    signals = {"cross_language": float(cross), "on_topic": on_topic}
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


def test_each_file_is_scored_by_a_fit_on_the_others_alone() -> None:
    # In three files the reranker's on-topic score tells right answers (0.9) from wrong ones (0.1); in the fourth
    # it says the opposite. Every answer was stated.
    def answers(name: str, right_on_topic: float) -> list[Row]:
        return [row(f"{name}-{n}", "en", n % 2 == 0, on_topic=right_on_topic if n % 2 == 0 else 1 - right_on_topic)
                for n in range(20)]  # fmt: skip

    files = {"a.json": answers("a", 0.9), "b.json": answers("b", 0.9), "c.json": answers("c", 0.9)}
    files["odd.json"] = answers("odd", 0.1)
    lines = dict(line.split(": ", 1) for line in by_file(files, c=0.5))
    assert list(lines) == ["a.json", "b.json", "c.json", "odd.json"]
    for name in ("a.json", "b.json", "c.json"):  # the others' fit withholds the wrong answers: +0.50, not 0.00
        assert lines[name].startswith("+0.50 fitted on the others") and lines[name].endswith("+0.00 as run")
    # fitted on the other three alone, the odd file's right answers are withheld and its wrong ones stated
    assert lines["odd.json"].startswith("-0.50 fitted on the others"), lines["odd.json"]
