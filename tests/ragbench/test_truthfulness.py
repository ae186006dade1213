"""Truthfulness as CRAG scores it: the verdict rules, the tally, two runs compared, and the figures issue 50
quotes reproduced from the saved result files (which pins the definition: +0.08 on the blind test split, +0.17
on dev), by the library and by ``python -m ragbench.answers.truth``."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from ragapp.testcases.truthfulness import Tally, compare, verdict
from ragbench.answers.answer_set import TYPES
from ragbench.answers.scoring import Row, summarize
from ragbench.answers.truth import comparison_json, load_rows
from ragbench.answers.truth import main as truth

RESULTS = Path(__file__).resolve().parents[2] / "results" / "answers"


def row(qid: str, answerable: bool = True, correct: bool = False, abstained: bool = False, **more: Any) -> Row:
    fields: dict[str, Any] = {"answer": "It is 3 [1].", "lang": "en", "type": "fact" if answerable else "unanswerable"}
    fields |= more
    kind, lang, answer, clarified = (
        fields.pop("type"),
        fields.pop("lang"),
        fields.pop("answer"),
        fields.pop("clarified", False),
    )
    return Row(qid, kind, lang, "?", answerable, answer, True, clarified, correct, abstained, False, False, (), (),
               None, 1.0, **fields)  # fmt: skip


def test_the_verdict_of_each_outcome() -> None:
    assert verdict(answerable=True, stated=True, right=True) == "accurate"
    assert verdict(answerable=True, stated=True, right=False) == "hallucinated"
    assert verdict(answerable=True, stated=False, right=False) == "missing"
    assert verdict(answerable=False, stated=False, right=False) == "accurate"  # an honest refusal
    assert verdict(answerable=False, stated=True, right=True) == "hallucinated"  # any answer to it is wrong


def test_a_row_that_states_no_answer_is_missing_or_an_honest_refusal() -> None:
    assert row("a", correct=True).verdict == "accurate"
    assert row("b").verdict == "hallucinated"
    assert row("c", abstained=True).verdict == "missing"
    assert row("d", not_sure=True).verdict == "missing"  # "not sure" (answered: false) states nothing
    assert row("e", clarified=True).verdict == "missing"
    assert row("f", answer=" ").verdict == "missing"  # no answer came (an error)
    assert row("g", answerable=False, abstained=True).verdict == "accurate"
    assert row("h", answerable=False, not_sure=True).verdict == "accurate"
    assert row("i", answerable=False).verdict == "hallucinated"


def test_the_tally_and_its_score() -> None:
    tally = Tally.of(["accurate", "accurate", "missing", "hallucinated"])
    assert (tally.accurate, tally.missing, tally.hallucinated, tally.questions) == (2, 1, 1, 4)
    assert tally.score == pytest.approx(0.25) and tally.share("missing") == 0.25
    assert Tally().score is None and Tally().share("accurate") is None
    assert tally.as_json() == {
        "accurate": 2, "missing": 1, "hallucinated": 1, "accurate_share": 0.5, "missing_share": 0.25,
        "hallucinated_share": 0.25, "truthfulness": 0.25,
    }  # fmt: skip


def test_the_summary_holds_the_verdicts_per_type_language_and_overall() -> None:
    rows = [row("a", correct=True), row("b", lang="zh"), row("c", answerable=False, abstained=True, lang="zh")]
    summary = summarize(rows, TYPES)
    assert summary["overall"]["truthfulness"] == pytest.approx(1 / 3)
    assert summary["by_lang"]["zh"]["hallucinated"] == 1 and summary["by_lang"]["zh"]["truthfulness"] == 0.0
    assert summary["by_type"]["unanswerable"]["accurate"] == 1


def test_two_runs_compared_name_what_got_better_and_worse() -> None:
    before = {"a": "missing", "b": "accurate", "c": "hallucinated", "gone": "accurate"}
    after = {"a": "accurate", "b": "hallucinated", "c": "hallucinated", "new": "missing"}
    changed = compare(before, after)  # type: ignore[arg-type]
    assert [(c.key, c.before, c.after) for c in changed.better] == [("a", "missing", "accurate")]
    assert [(c.key, c.before, c.after) for c in changed.worse] == [("b", "accurate", "hallucinated")]
    assert changed.dropped == ("gone",) and changed.added == ("new",)
    assert changed.before.score == pytest.approx(0.25) and changed.after.score == pytest.approx(-0.25)
    assert changed.delta == pytest.approx(-0.5)


@pytest.mark.parametrize(
    ("name", "counts", "score"),
    [("debian-blind-test.json", (87, 18, 73), 0.08), ("debian-blind-dev-parts.json", (93, 23, 63), 0.17)],
)
def test_the_saved_blind_runs_score_as_the_issue_says(name: str, counts: tuple[int, int, int], score: float) -> None:
    rows = load_rows(RESULTS / name)
    overall = summarize(rows, TYPES)["overall"]
    assert (overall["accurate"], overall["missing"], overall["hallucinated"]) == counts
    assert round(overall["truthfulness"], 2) == score


def test_the_command_prints_a_file_and_compares_two(tmp_path: Path) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = truth([str(RESULTS / "debian-blind-dev-parts.json"), "--compare",
                      str(RESULTS / "debian-blind-dev-baseline.json")])  # fmt: skip
    text = out.getvalue()
    assert code == 0, text
    overall = [line for line in text.splitlines() if line.startswith("overall")]
    assert overall[0].split() == ["overall", "179", "93", "52%", "23", "13%", "63", "35%", "+0.17"]
    assert overall[1].split()[1:5] == ["179→179", "85→93", "23→23", "71→63"] and "(+0.09)" in overall[1]
    assert "better (18):" in text and "worse (12):" in text
    assert "\n  mgzh-dreq-skip-test: missing → accurate" in text
    assert "\n  git-manual-object-types: accurate → missing" in text


def test_a_file_that_is_no_result_is_refused_with_its_name(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"rows": 3}', "utf-8")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert truth([str(bad)]) == 2
    assert "bad.json: not a result file" in err.getvalue()


def test_rows_written_before_a_field_existed_still_load(tmp_path: Path) -> None:
    data = row("a", correct=True, not_sure=False).as_json()
    del data["not_sure"], data["confidence"]
    data["from_the_future"] = 1
    (tmp_path / "old.json").write_text(json.dumps({"rows": [data]}), "utf-8")
    (loaded,) = load_rows(tmp_path / "old.json")
    assert loaded == row("a", correct=True)
    kept = comparison_json(tmp_path / "old.json", [loaded], [row("a")])
    assert kept["worse"] == [["a", "accurate", "hallucinated"]] and kept["before"]["truthfulness"] == 1.0
