"""The answer check's view in the Traces tab, from hand-built runs: the counts and score of the run and the run
before, what got better and worse (the user's question shown as text, never as Markdown), each case's row, in
both languages."""

from __future__ import annotations

from ragapp.engine import AnswerCheck, AnswerRun, CaseAnswer
from ragapp.ui.case_truth import answers_frame, truth_markdown
from tests.text import shown


def _run(run_id: int, **verdicts: str) -> AnswerRun:
    results = tuple(
        CaseAnswer(q, v, f"said {q}", v != "missing", unanswerable=q == "moon", in_prompt=True)  # type: ignore[arg-type]
        for q, v in verdicts.items()
    )
    return AnswerRun(run_id, f"2026-01-0{run_id}T10:00:00+00:00", results)


def test_the_first_run_shows_its_counts_and_says_the_next_is_compared_with_it() -> None:
    text = truth_markdown(AnswerCheck(_run(1, a="accurate", b="hallucinated", moon="accurate", d="missing")))
    english, chinese = shown(text, "en"), shown(text, "zh")
    assert "| this run (2026-01-01 10:00:00) | 2 | 1 | 1 | +0.25 |" in english
    assert "| 本次 (2026-01-01 10:00:00) | 2 | 1 | 1 | +0.25 |" in chinese
    assert "The first run: the next one is compared with it." in english and "首次运行" in chinese
    assert "Better" not in english


def test_a_run_against_the_one_before_names_what_got_better_and_worse() -> None:
    before = _run(1, a="accurate", moon="accurate", gone="missing", **{"b *x*": "hallucinated"})
    after = _run(2, a="missing", moon="accurate", new="accurate", **{"b *x*": "accurate"})
    check = AnswerCheck(after, before)
    english, chinese = shown(truth_markdown(check), "en"), shown(truth_markdown(check), "zh")
    assert "| last run (2026-01-01 10:00:00) | 2 | 1 | 1 | +0.25 |" in english
    assert "| this run (2026-01-02 10:00:00) | 3 | 1 | 0 | +0.75 |" in english
    assert "Truthfulness against the last run: **better** (+0.50)." in english
    assert "与上次相比，真实性**更好**（+0.50）。" in chinese
    assert "**Better (1)**\n\n- b \\*x\\*: ❌ hallucinated → ✅ accurate" in english  # the question as text
    assert "**Worse (1)**\n\n- a: ✅ accurate → ⚪ missing" in english
    assert "- a: ✅ 准确 → ⚪ 缺失" in chinese
    assert "New cases: 1; cases since deleted: 1." in english
    frame = answers_frame(check)
    assert list(frame.columns) == ["Question", "Verdict", "Last run", "In prompt", "Answer"]
    rows = {r[0]: r for r in frame.values.tolist()}
    assert shown(rows["a"][1], "en") == "⚪ missing" and shown(rows["a"][2], "zh") == "✅ 准确"
    assert rows["new"][2] == "–" and rows["moon"][3] == "–" and rows["a"][3] == "✓"
    assert rows["b *x*"][4] == "said b *x*"
