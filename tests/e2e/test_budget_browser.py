"""The prompt budget as a user meets it in the Traces tab: in a small window the answer prompt's passages were
condensed to fit, and the trace's "Prompt budget" section tables each part's tokens and says so. The reply is
scripted; everything else is the real app in a real browser."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.e2e]

MANUAL = "\n\n".join(
    f"## Part {n}\n\n" + f"The Alpha robot battery fact number {n} is {n} minutes. " * 6 for n in range(12)
)
QUESTION = "Alpha robot battery fact minutes"


def test_the_trace_tables_the_prompt_budget_and_what_was_condensed(
    scripted_app: Callable[..., Any],
    open_page: Callable[[str], Any],
    ask_and_wait: Callable[[Any, str], None],
    open_trace: Callable[[Any, str], None],
    artifacts: Path,
) -> None:
    rig, url = scripted_app(
        {"alpha.md": MANUAL},
        llm={"max_tokens": 300},
        workflow={"context_window": 600},  # 300 tokens to share: the passages must be condensed
        retrieval={"channel_timeout_s": 60},  # a busy machine's vector search must not fall back to keywords
    )
    rig.engine.chat.retrieve(QUESTION)  # the embedder and reranker load now, not while the page waits
    page = open_page(url)
    rig.llm.enqueue("Fact 3 is 3 minutes [1].")
    ask_and_wait(page, QUESTION)

    page.get_by_role("tab", name="Traces").click()
    open_trace(page, QUESTION)
    page.locator("#trace-detail").get_by_text("Prompt budget: tokens per part").click()
    budget = page.locator("#trace-budget")
    budget.get_by_text("Answer prompt").first.wait_for()
    text = budget.inner_text()
    for part in ("instructions", "question", "conversation", "passages", "answer (kept free)"):
        assert part in text, f"no {part!r} row in the prompt budget:\n{text}"
    assert "Compressed to fit: passages after the best condensed to 1 sentence(s) each" in text, text
    assert "window 600" in text
    page.screenshot(path=str(artifacts / "trace-budget.png"), full_page=True)
