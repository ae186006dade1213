"""Asking back in Chat: an ambiguous question gets clickable choices; clicking one answers it from there.

Real app, demo knowledge base, demo intent tree, the packaged local model. "电池能用多久？" names no product,
and "Specs and battery" exists under three products, so the app asks which one (the model's scores do not
matter for that: the twin rule decides).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.llm, pytest.mark.slow]

CHOICE = "Lumen V1 · 流明 V1 › Specs and battery · 规格与续航"


def test_ambiguous_question_offers_choices_and_a_click_answers_it(page: object, artifacts: Path) -> None:
    chat = page.locator("#chatbot")  # type: ignore[attr-defined]
    box = page.locator("#question textarea")  # type: ignore[attr-defined]
    box.fill("电池能用多久？")
    box.press("Enter")
    choice = chat.get_by_role("button", name=CHOICE)
    choice.wait_for(timeout=300_000)  # the first classification reads the whole candidate list
    assert chat.get_by_role("button", name="Search everything").count() == 1
    assert "你指的是哪一个" in chat.inner_text()
    page.screenshot(path=str(artifacts / "clarify.png"), full_page=True)  # type: ignore[attr-defined]

    choice.click()
    chat.get_by_text(CHOICE).first.wait_for()  # the pick appears as the user's reply
    chat.get_by_text("Writing the answer").first.wait_for(timeout=120_000)
    page.wait_for_function(  # type: ignore[attr-defined]
        "() => !document.querySelector('#chatbot .pending, #chatbot [data-status=\"pending\"]')"
        " && !document.querySelector('.generating')",
        timeout=180_000,
    )
    shown = chat.inner_text()
    assert shown.count("你指的是哪一个") == 1, shown  # answered, not asked again
    citation = chat.get_by_text(re.compile(r"\[\d\] lumen_v1_manual_zh\.md"))
    assert citation.count() >= 1, f"no citation of the V1 manual in:\n{shown}"
