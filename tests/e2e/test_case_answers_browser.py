"""A test-case run compared with the last, in the Traces tab: two questions saved from their traces (one with the
words of its right answer, one as unanswerable), their answers checked, a document removed, checked again; the
page names the case that got worse and the one that got better, in English and then in Chinese.

The real app with the scripted LLM (it answers from whatever passage about the Alpha robot reaches the prompt).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.core.types import ChatTurn

pytestmark = [pytest.mark.e2e, pytest.mark.slow]  # starts its own app

ALPHA = "# Alpha robot\n\nThe Alpha robot battery lasts 90 minutes on a full charge.\n"
BATTERY = "How long does the Alpha robot battery last?"
GAMMA = "How long does the Gamma robot battery last?"  # no document says


def _reply(messages: list[ChatTurn]) -> str:
    """What the model says: the Alpha robot's battery, citing its passage, whatever was asked (so the Gamma
    question gets a wrong answer while that passage reaches the prompt)."""
    prompt = messages[-1].content
    return "The Alpha robot battery lasts 90 minutes [1]." if "90 minutes" in prompt else "The passages do not say."


def _save_from_trace(page: Any, open_trace: Callable[[Any, str], None], question: str, **how: Any) -> None:
    open_trace(page, question)
    page.locator("#trace-header").get_by_text(question).first.wait_for()
    if "words" in how:
        page.locator("#case-answer textarea").fill(how["words"])
    if how.get("unanswerable"):
        page.locator("#case-unanswerable input").check()
    page.locator("#case-save").click()
    page.locator("#case-list").get_by_text(question).filter(visible=True).first.wait_for()


def test_a_test_case_run_compared_with_the_last(
    scripted_app: Callable[..., tuple[Any, str]],
    open_page: Callable[[str], Any],
    ask_and_wait: Callable[[Any, str], None],
    open_trace: Callable[[Any, str], None],
    artifacts: Path,
) -> None:
    rig, url = scripted_app({"alpha.md": ALPHA})
    rig.llm.reply_with(_reply)
    page = open_page(url)
    for question in (BATTERY, GAMMA):
        ask_and_wait(page, question)
    page.get_by_role("tab", name="Traces").click()
    _save_from_trace(page, open_trace, BATTERY, words="90 minutes")  # the cited alpha.md is picked already
    _save_from_trace(page, open_trace, GAMMA, unanswerable=True)

    truth = page.locator("#eval-truth")
    page.locator("#eval-answers").click()
    truth.get_by_text("The first run: the next one is compared with it.").wait_for(timeout=60_000)
    results = page.locator("#eval-answer-results")
    # the Gamma question, answered from the Alpha passage
    results.get_by_text("hallucinated").filter(visible=True).first.wait_for()
    assert "+0.00" in truth.inner_text()  # one accurate, one hallucinated

    # The change: the Alpha manual is removed. The battery question loses its answer; the Gamma one is refused.
    (alpha,) = rig.engine.library.documents()
    rig.engine.library.delete(alpha.doc_id)
    page.locator("#eval-answers").click()
    truth.get_by_text("Truthfulness against the last run").wait_for(timeout=60_000)
    shown = truth.inner_text()
    assert "Truthfulness against the last run: better (+0.50)." in shown, shown  # missing 0, accurate +1
    better, worse = shown.split("Better (1)")[1].split("Worse (1)")
    assert GAMMA in better and "hallucinated → ✅ accurate" in better, shown
    assert BATTERY in worse and "accurate → ⚪ missing" in worse, shown
    page.screenshot(path=str(artifacts / "case-answers-en.png"), full_page=True)

    page.locator("#language-switch").get_by_role("link", name="中文").click()
    page.locator("#eval-truth").get_by_text("变好 (1)").wait_for()
    truth.get_by_text("与上次相比").first.wait_for()  # the switch has reached the whole panel
    chinese = truth.inner_text()
    for words in (
        "与上次相比，真实性更好（+0.50）",
        "变差 (1)",
        "❌ 幻觉 → ✅ 准确",
        "✅ 准确 → ⚪ 缺失",
        "本次",
        "上次",
    ):
        assert words in chinese, chinese
    for english in ("Better", "Worse", "accurate", "missing", "hallucinated", "this run", "Truthfulness"):
        assert english not in chinese, chinese
    assert "判定" in results.inner_text() and "上次运行" in results.inner_text()  # the table's headers
    page.screenshot(path=str(artifacts / "case-answers-zh.png"), full_page=True)
