"""The next questions under an answer, as a user meets them: in an English page after an English question and in a
Chinese page after a Chinese one, buttons under the answer in the question's language; a click asks that question
(it shows as the user's message) and it is answered. Before that, the first screen offers questions the uploaded
documents answer, in the page's language. Scripted replies; the rest is the real app in a browser."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from ragapp.core.lang import is_chinese
from tests.conftest import DEMO_DIR

pytestmark = [pytest.mark.e2e, pytest.mark.slow]  # its own app (scripted_app), two pages, two clicks: ~30 s

NOTES = (DEMO_DIR / "v2_pro_firmware_release_notes.md").read_text("utf-8")
MANUAL_ZH = (DEMO_DIR / "lumen_v1_manual_zh.md").read_text("utf-8")
NOTES_SAY = "What does the Lumen V2 Pro Firmware Release Notes say about"
DONE = (
    "() => !document.querySelector('#chatbot .pending, #chatbot [data-status=\"pending\"]')"
    " && !document.querySelector('.generating')"
)


def _click_and_wait(page: Any, button: Any) -> str:
    """Click a next question; returns it once it shows as the user's message and its answer is written."""
    asked = button.inner_text().strip()
    button.click()
    page.locator("#chatbot [data-testid=user]", has_text=asked).first.wait_for()
    page.wait_for_function(DONE, timeout=60_000)
    return str(asked)


def test_next_questions_show_under_the_answer_in_both_languages_and_a_click_asks_one(
    scripted_app: Callable[..., Any],
    open_page: Callable[[str], Any],
    ask_and_wait: Callable[[Any, str], None],
    browser: Any,
    artifacts: Path,
) -> None:
    rig, url = scripted_app({"release_notes.md": NOTES, "v1_manual_zh.md": MANUAL_ZH})
    page = open_page(url)
    chat = page.locator("#chatbot")
    # Before anything is asked, the first screen offers questions the uploaded documents answer, in its language;
    # a click puts one in the question box, as an example does.
    opening = page.locator("#kb-questions-en").get_by_text(f"{NOTES_SAY} version 2.5.1?")
    opening.first.click()
    expect(page.locator("#question textarea")).to_have_value(f"{NOTES_SAY} version 2.5.1?")  # a round trip: waits
    assert not page.locator("#kb-questions-zh").is_visible()
    assert page.locator("#kb-questions-en button:visible").count() == 2  # two of the notes; none of the Chinese manual
    rig.llm.enqueue("Version 2.5.1 fixed the false error E12 on cold mornings [1].")
    ask_and_wait(page, "What was fixed in firmware version 2.5.1?")
    chat.get_by_text("false error E12").first.wait_for()
    offered = chat.locator("button", has_text=NOTES_SAY)
    offered.first.wait_for(state="visible")
    assert 2 <= offered.count() <= 3
    page.screenshot(path=str(artifacts / "next-questions.png"), full_page=True)
    rig.llm.enqueue("Version 2.5.0 was released on 28 May 2024 [1].")
    asked = _click_and_wait(page, chat.locator("button", has_text="version 2.5.0").first)
    assert asked == f"{NOTES_SAY} version 2.5.0?"
    chat.get_by_text("was released on 28 May 2024").first.wait_for()
    assert rig.llm.calls and asked in str(rig.llm.calls[-1])  # the model was asked the clicked question

    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="zh-CN")
    try:
        zh = context.new_page()
        zh.set_default_timeout(30_000)
        zh.goto(url)
        zh.locator("#question textarea").wait_for()
        zh_chat = zh.locator("#chatbot")
        zh.locator("#kb-questions-zh").get_by_text("流明 V1 扫地机器人 使用手册中关于“产品规格”是怎么说的？").wait_for()
        assert not zh.locator("#kb-questions-en").is_visible()
        assert "Run" not in zh.locator("#kb-questions-zh").inner_text()
        rig.llm.enqueue("滤网每 2 个月更换一次 [1]。")
        box = zh.locator("#question textarea")  # ask_and_wait waits for English words
        box.fill("V1 的滤网多久更换一次？")
        box.press("Enter")
        zh_chat.get_by_text("滤网每 2 个月更换一次").first.wait_for()
        offered = zh_chat.locator("button", has_text="流明 V1 扫地机器人 使用手册中关于")
        offered.first.wait_for(state="visible")
        labels = [offered.nth(i).inner_text() for i in range(offered.count())]
        assert 2 <= len(labels) <= 3 and all(is_chinese(label) for label in labels), labels
        zh.screenshot(path=str(artifacts / "next-questions-zh.png"), full_page=True)
        rig.llm.enqueue("V1 提供安静、标准、强力三档吸力 [1]。")
        asked = _click_and_wait(zh, zh_chat.locator("button", has_text="清洁模式").first)
        assert asked == "流明 V1 扫地机器人 使用手册中关于“清洁模式”是怎么说的？"
        zh_chat.get_by_text("三档吸力").first.wait_for()
    finally:
        context.close()
