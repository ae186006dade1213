"""What the page shows after a switch to 中文 speaks Chinese, and says what it means: the sources panel and the
feedback row shown again after being closed (Gradio drew them again in the language they were first drawn in:
"Close" stayed English); the Traces list marks a refusal as one, not "✅ ok"; the Admin users table shows how each
user signs in as words, not as raw HTML."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from ragapp.accounts.store import UserStore

pytestmark = [pytest.mark.e2e]

DOCS = {"alpha.md": "# Alpha robot\n\nThe Alpha robot battery lasts 90 minutes on a full charge.\n"}
ANSWER = "The Alpha battery lasts 90 minutes [1]."


def _ask(page: Any, question: str) -> None:
    """Send ``question`` and wait until its answer is written (in either language)."""
    before = page.locator("#chatbot .message").count()
    box = page.locator("#question textarea")
    box.fill(question)
    box.press("Enter")
    page.wait_for_function(
        "(before) => document.querySelectorAll('#chatbot .message').length > before + 1"
        " && !document.querySelector('#chatbot .pending, #chatbot [data-status=\"pending\"]')"
        " && !document.querySelector('.generating')",
        arg=before,
        timeout=60_000,
    )


def _to_chinese(page: Any) -> None:
    page.locator("#language-switch").get_by_role("link", name="中文").click()
    expect(page.locator("#send")).to_have_text("发送")


# Behind `slow` (make test-slow, which CI runs after make test): it starts its own app.
@pytest.mark.slow
def test_what_shows_again_after_a_switch_speaks_chinese_and_a_refusal_is_marked(
    scripted_app: Callable[..., Any], open_page: Callable[[str], Any], artifacts: Path
) -> None:
    rig, url = scripted_app(DOCS)
    page = open_page(url)
    panel, row = page.locator("#citation-view"), page.locator("#feedback-row")
    rig.llm.enqueue(ANSWER)
    _ask(page, "How long does the Alpha battery last?")
    expect(panel).to_be_visible()
    expect(page.locator("#citation-close")).to_have_text("Close")
    page.locator("#chatbot .message-buttons-left button").nth(1).click()  # 👎: the feedback row opens
    expect(row).to_be_visible()
    page.locator("#feedback-send").click()  # and closes
    expect(row).to_be_hidden()
    page.locator("#citation-close").click()
    expect(panel).to_be_hidden()

    _to_chinese(page)
    rig.llm.enqueue(ANSWER, "The documents do not mention a warranty for the Alpha robot.")
    _ask(page, "How long does the Alpha battery last on a full charge?")
    expect(panel).to_be_visible()  # shown again, in the page's language now
    expect(page.locator("#citation-close")).to_have_text("关闭")
    expect(page.locator("#citation-choice")).to_contain_text("本回答的出处")
    page.locator("#chatbot .message-buttons-left button").nth(1).click()
    expect(row).to_be_visible()
    expect(page.locator("#feedback-send")).to_have_text("提交反馈")
    expect(page.locator("#feedback-save-case")).to_have_text("存为测试用例")
    placeholder = page.locator("#feedback-comment textarea").get_attribute("placeholder")
    assert placeholder == "这个回答哪里不对？（可选）"
    _ask(page, "What warranty does the Alpha robot battery have?")  # found, and the documents do not say
    page.screenshot(path=str(artifacts / "switched-chat-zh.png"))

    page.get_by_role("tab", name="追踪", exact=True).click()
    listing = page.locator("#trace-list")
    rows = listing.get_by_role("row")
    refused = rows.filter(has_text="What warranty does the Alpha robot")
    for _ in range(20):  # a trace is written when its request ends
        if refused.count():
            break
        page.locator("#trace-refresh").click()
        page.wait_for_timeout(500)
    expect(refused).to_contain_text("🚫 拒答", use_inner_text=True)
    expect(rows.filter(has_text="on a full charge?")).to_contain_text("✅ 正常", use_inner_text=True)
    assert "refused" not in listing.inner_text() and "✅ ok" not in listing.inner_text()
    assert page.locator("#trace-status input").input_value() == "全部"  # the status filter in Chinese too
    page.locator("#trace-status input").click()
    page.get_by_role("option", name="拒答").click()
    expect(rows.filter(has_text="Alpha")).to_have_count(1)
    expect(rows.filter(has_text="Alpha")).to_contain_text("What warranty")


# Behind `slow` (make test-slow, which CI runs after make test): it starts its own app.
@pytest.mark.slow
def test_the_users_table_says_how_each_user_signs_in_in_words(
    scripted_app: Callable[..., Any],
    open_page: Callable[[str], Any],
    tmp_path: Path,
    sign_in: Callable[[Any, str, str], None],
) -> None:
    users = tmp_path / "users.json"
    UserStore(users, 4).add("boss", "admin password", "admin")
    _rig, url = scripted_app(auth={"enabled": True, "users_file": users, "bcrypt_rounds": 4})
    page = open_page(url)
    sign_in(page, "boss", "admin password")
    page.get_by_role("tab", name="Admin").click()
    table = page.locator("#users-table")
    row = table.get_by_role("row").filter(has_text="boss")
    expect(row).to_contain_text("password", use_inner_text=True)
    expect(row).to_contain_text("Admin", use_inner_text=True)
    assert "<span" not in table.inner_text() and "lang-" not in table.inner_text()
    _to_chinese(page)
    expect(row).to_contain_text("密码", use_inner_text=True)
    expect(row).to_contain_text("管理员", use_inner_text=True)
    assert "password" not in row.inner_text() and "<span" not in table.inner_text()
