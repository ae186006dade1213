"""The answer check of the saved test cases (Traces tab, evaluation panel): accurate / missing / hallucinated and
truthfulness of this run beside the run before, the cases that got better and worse, and each case's verdict.
Pure: a check in, Markdown and a table out, in both languages (``both``)."""

from __future__ import annotations

import pandas as pd

from ragapp.engine import AnswerCheck, AnswerRun, Tally, Verdict
from ragapp.ui.i18n import both
from ragapp.ui.markup import escape_text

ANSWER_HEADERS = ["Question", "Verdict", "Last run", "In prompt", "Answer"]
ANSWER_TYPES = ["str", "html", "html", "str", "str"]
VERDICT_WORDS: dict[Verdict, tuple[str, str]] = {
    "accurate": ("✅ accurate", "✅ 准确"),
    "missing": ("⚪ missing", "⚪ 缺失"),
    "hallucinated": ("❌ hallucinated", "❌ 幻觉"),
}
LEGEND = (
    "+1 accurate: right, or refused where the documents do not hold the answer · 0 missing: refused or not sure · "
    "−1 hallucinated: wrong, or answered where it should have refused. Truthfulness is the mean.",
    "+1 准确：答对，或在文档没有答案时拒答 · 0 缺失：拒答或不确定 · −1 幻觉：答错，或本应拒答却作答。真实性为平均分。",
)


def _verdict(which: Verdict) -> str:
    return both(*VERDICT_WORDS[which])


def _score(tally: Tally) -> str:
    return "–" if tally.score is None else f"{tally.score:+.2f}"


def _row(name: str, run: AnswerRun) -> str:
    t, when = run.tally, run.created_at[:19].replace("T", " ")
    return f"| {name} ({when}) | {t.accurate} | {t.missing} | {t.hallucinated} | {_score(t)} |"


def truth_markdown(check: AnswerCheck) -> str:
    """The run's counts and score, the run before's beneath, and which cases moved."""
    words = [both(*w) for w in (("run", "运行"), ("accurate", "准确"), ("missing", "缺失"), ("hallucinated", "幻觉"))]
    lines = [f"| {' | '.join(words)} | {both('truthfulness', '真实性')} |", "|---|---|---|---|---|"]
    lines.append(_row(both("this run", "本次"), check.run))
    if check.previous is not None:
        lines.append(_row(both("last run", "上次"), check.previous))
    lines += ["", both(*LEGEND), ""]
    changed = check.comparison
    if changed is None:
        lines.append(both("The first run: the next one is compared with it.", "首次运行：下次运行将与它比较。"))
        return "\n".join(lines)
    delta = changed.delta or 0.0
    en, zh = ("better", "更好") if delta > 1e-9 else ("worse", "更差") if delta < -1e-9 else ("the same", "持平")
    lines.append(
        both(
            f"Truthfulness against the last run: **{en}** ({delta:+.2f}).",
            f"与上次相比，真实性**{zh}**（{delta:+.2f}）。",
        )
    )
    for changes, title in ((changed.better, ("Better", "变好")), (changed.worse, ("Worse", "变差"))):
        lines += ["", f"**{both(*title)} ({len(changes)})**", ""]
        lines += [f"- {escape_text(c.key)}: {_verdict(c.before)} → {_verdict(c.after)}" for c in changes]
    if changed.added or changed.dropped:
        lines += ["", both(f"New cases: {len(changed.added)}; cases since deleted: {len(changed.dropped)}.",
                           f"新增用例：{len(changed.added)}；已删除用例：{len(changed.dropped)}。")]  # fmt: skip
    return "\n".join(lines)


def answers_frame(check: AnswerCheck) -> pd.DataFrame:
    """One row per case: its verdict now and in the run before, whether an expected document reached the prompt,
    and what the app answered."""
    before = check.previous.verdicts() if check.previous is not None else {}
    rows = [
        [
            r.question,
            _verdict(r.verdict),
            _verdict(before[r.question]) if r.question in before else "–",
            "–" if r.unanswerable else "✓" if r.in_prompt else "✗",
            r.answer,
        ]
        for r in check.run.results
    ]
    return pd.DataFrame(rows, columns=ANSWER_HEADERS)
