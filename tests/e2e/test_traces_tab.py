"""The Traces tab end to end: ask in Chat, open the request's trace, see the waterfall and the fused table,
save the question as a test case, and run the evaluation panel over it.

Real app, demo knowledge base, the packaged local model (the answer takes tens of seconds on 2 cores).
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

pytestmark = [pytest.mark.e2e, pytest.mark.llm, pytest.mark.slow]

QUESTION = "What does error code E07 mean on the Lumen V2 Pro?"
QUESTION_CELLS = '[role=gridcell][data-col="1"]'  # Gradio's dataframe: body cells of the second column
DONE = (
    "() => !document.querySelector('#chatbot .pending, #chatbot [data-status=\"pending\"]')"
    " && !document.querySelector('.generating')"
)


def test_trace_of_a_question_then_a_test_case_and_its_evaluation(page: object, artifacts: Path) -> None:
    page.on("pageerror", lambda exc: print("page error:", exc))  # type: ignore[attr-defined]
    box = page.locator("#question textarea")  # type: ignore[attr-defined]
    box.fill(QUESTION)
    box.press("Enter")
    chat = page.locator("#chatbot")  # type: ignore[attr-defined]
    chat.get_by_text("Writing the answer").first.wait_for(timeout=120_000)
    page.wait_for_function(DONE, timeout=600_000)  # type: ignore[attr-defined]
    assert "E07" in chat.inner_text()

    page.get_by_role("tab", name="Traces").click()  # type: ignore[attr-defined]
    listing = page.locator("#trace-list")  # type: ignore[attr-defined]
    row = listing.locator(QUESTION_CELLS, has_text=QUESTION).first
    for _ in range(120):  # the trace is written when the request ends (the chat may still be streaming)
        if row.count():
            break
        page.locator("#trace-refresh").click()  # type: ignore[attr-defined]
        with contextlib.suppress(PlaywrightTimeout):  # the refreshed list as soon as it shows the row; else refresh
            row.wait_for(timeout=2_500)
    try:
        row.wait_for(timeout=10_000)
    except Exception:
        page.screenshot(path=str(artifacts / "traces-failed.png"), full_page=True)  # type: ignore[attr-defined]
        pytest.fail(f"the question is not in the list of requests:\n{listing.inner_text()}")
    assert "workflow" in listing.inner_text()
    listing.locator(QUESTION_CELLS, has_text=QUESTION).first.click()

    detail = page.locator("#trace-detail")  # type: ignore[attr-defined]
    detail.wait_for(state="visible")
    page.locator("#trace-header").get_by_text(QUESTION).first.wait_for()  # type: ignore[attr-defined]
    page.locator("#trace-waterfall .js-plotly-plot").wait_for()  # type: ignore[attr-defined]
    waterfall = page.locator("#trace-waterfall").inner_text()  # type: ignore[attr-defined]
    for span in ("retrieve", "search", "channel vector", "channel keyword", "fusion", "generate", "llm"):
        assert span in waterfall, f"no {span!r} bar in the waterfall:\n{waterfall}"

    fused = page.locator("#trace-fused")  # type: ignore[attr-defined]
    fused.get_by_text("lumen", exact=False).filter(visible=True).first.wait_for()
    table = fused.inner_text()
    for column in ("Final", "Moved", "Rank · vector", "Rank · keyword", "Rerank score", "In prompt"):
        assert column in table, f"no {column!r} column in the fused table:\n{table}"
    assert "✓" in table  # the chunks that reached the prompt are marked
    exported = page.locator("#trace-export")  # type: ignore[attr-defined]
    exported.locator("a").first.wait_for()
    assert re.search(r"trace-\w+\s*\.json", exported.inner_text()), exported.inner_text()
    page.screenshot(path=str(artifacts / "traces.png"), full_page=True)  # type: ignore[attr-defined]

    # The documents the answer cited are pre-selected as the ones that should answer it.
    expected = page.locator("#case-docs").inner_text()  # type: ignore[attr-defined]
    assert "lumen" in expected.lower(), expected
    page.locator("#case-save").click()  # type: ignore[attr-defined]
    page.locator("#case-saved").get_by_text("Saved as test case").wait_for()  # type: ignore[attr-defined]
    page.locator("#case-list").get_by_text(QUESTION).filter(visible=True).first.wait_for()  # type: ignore[attr-defined]

    page.locator("#eval-run").click()  # type: ignore[attr-defined]
    metrics = page.locator("#eval-metrics")  # type: ignore[attr-defined]
    metrics.get_by_text("current settings").wait_for(timeout=60_000)
    page.locator("#eval-chart .js-plotly-plot").wait_for()  # type: ignore[attr-defined]
    assert "1.000" in metrics.inner_text(), metrics.inner_text()  # the cited document is found: hit rate 1
    results = page.locator("#eval-results").inner_text()  # type: ignore[attr-defined]
    assert QUESTION in results and "✓" in results, results
    page.screenshot(path=str(artifacts / "traces-eval.png"), full_page=True)  # type: ignore[attr-defined]
