"""The Intents tab as a user meets it: add a leaf to the demo tree, see it, test a question, delete it again.

The app is the real one (demo knowledge base, demo intent tree, the packaged local model), so the test box's
scores come from the model: the new leaf is about a topic nothing else in the demo tree covers (recycling the
window robot), which the local model scores for it every time we tried.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.e2e, pytest.mark.llm, pytest.mark.slow]

CODE = "glide-w3.recycling"
GLIDE = "Products · 产品 > Glide W3 · 擦窗机器人 Glide W3"  # the parent's full path
PARENT = f"{GLIDE} (glide-w3)"
NAME = "Recycling and disposal · 回收与报废"
QUESTION = "Where can I recycle my broken Glide W3 window robot?"
DEMO_LEAVES = 14  # in data/intents/demo.yaml
CODE_CELLS = '[role=gridcell][data-col="1"]'  # Gradio's dataframe: body cells of the second column
MODEL_WAIT_MS = 300_000  # the first classification over a changed tree reads the whole candidate list


def _choose(page: object, elem_id: str, option: str) -> None:
    """Pick ``option`` in a Gradio dropdown (typing filters the list), then close the list."""
    box = page.locator(f"#{elem_id} input")  # type: ignore[attr-defined]
    box.click()
    box.fill(option.split(" ")[0])
    page.get_by_role("option", name=option, exact=True).click()  # type: ignore[attr-defined]
    page.locator("#intent-intro").click()  # type: ignore[attr-defined]  # close the option list


def test_add_a_leaf_see_it_test_a_question_then_delete_it(page: object, artifacts: Path) -> None:
    page.get_by_role("tab", name="Intents").click()  # type: ignore[attr-defined]
    tree = page.locator("#intent-tree")  # type: ignore[attr-defined]
    tree.get_by_text("glide-w3.usage").filter(visible=True).first.wait_for()
    assert tree.get_by_text(CODE).filter(visible=True).count() == 0

    # The form starts as "New intent": fill it in and save.
    page.locator("#intent-code textarea").fill(CODE)  # type: ignore[attr-defined]
    _choose(page, "intent-parent", PARENT)
    page.locator("#intent-name textarea").fill(NAME)  # type: ignore[attr-defined]
    page.locator("#intent-description textarea").fill(  # type: ignore[attr-defined]
        "How to recycle, dispose of or trade in an old Glide W3 window robot and its battery."
    )
    page.locator("#intent-examples textarea").fill(  # type: ignore[attr-defined]
        "How do I recycle my old Glide W3?\nGlide W3 报废了怎么回收？"
    )
    _choose(page, "intent-kbs", "demo")
    page.locator("#intent-save").click()  # type: ignore[attr-defined]
    message = page.locator("#intent-message")  # type: ignore[attr-defined]
    message.get_by_text("Added").wait_for()
    assert "Glide W3 · 擦窗机器人 Glide W3 > Recycling and disposal" in message.inner_text()

    # The tree shows it under its parent.
    tree.get_by_text(CODE).filter(visible=True).first.wait_for()
    codes = [c.strip() for c in tree.locator(CODE_CELLS).all_inner_texts()]
    assert codes.index(CODE) == codes.index("glide-w3.usage") + 1, codes

    # The test box: every leaf with its score, the new one scored by the model, and the decision.
    page.locator("#intent-test-question textarea").fill(QUESTION)  # type: ignore[attr-defined]
    page.locator("#intent-test").click()  # type: ignore[attr-defined]
    decision = page.locator("#intent-test-decision")  # type: ignore[attr-defined]
    decision.get_by_text("Reason").wait_for(timeout=MODEL_WAIT_MS)
    scores = page.locator("#intent-test-scores")  # type: ignore[attr-defined]
    row = scores.locator("[role=row]").filter(has=page.locator(CODE_CELLS, has_text=CODE)).first  # type: ignore[attr-defined]
    row.wait_for()
    cells = [c.strip() for c in row.locator("[role=gridcell]").all_inner_texts()]
    assert float(cells[-1]) > 0, cells
    listed = [c.strip() for c in scores.locator(CODE_CELLS).all_inner_texts()]
    assert len(listed) == DEMO_LEAVES + 1 and CODE in listed, listed  # every leaf is listed, scored or not
    shown = decision.inner_text()
    assert any(action in shown for action in ("Route", "Ask back")), shown
    assert "路由" not in shown and "原因" not in shown, shown  # an English page: its words only
    assert CODE in shown, shown
    assert "Model time" in shown, shown
    page.screenshot(path=str(artifacts / "intents.png"), full_page=True)  # type: ignore[attr-defined]

    # The picker follows the saved node; picking another one fills the form with it.
    pick = page.locator("#intent-pick input")  # type: ignore[attr-defined]
    code = page.locator("#intent-code textarea")  # type: ignore[attr-defined]
    expect(pick).to_have_value(re.compile(re.escape(f"({CODE})")))
    _choose(page, "intent-pick", f"{GLIDE} > Use and care · 使用与保养 (glide-w3.usage)")
    expect(code).to_have_value("glide-w3.usage")
    expect(page.locator("#intent-name textarea")).to_have_value("Use and care · 使用与保养")  # type: ignore[attr-defined]

    # Delete the new leaf again (the app is shared by the other browser tests).
    _choose(page, "intent-pick", f"{GLIDE} > {NAME} ({CODE})")
    expect(code).to_have_value(CODE)
    page.locator("#intent-delete").click()  # type: ignore[attr-defined]
    message.get_by_text("Deleted").wait_for()
    expect(code).to_have_value("")  # the form is back to "new intent"
    page.wait_for_function(  # type: ignore[attr-defined]
        f"() => !document.querySelector('#intent-tree').innerText.includes('{CODE}')", timeout=30_000
    )
    tree.get_by_text("glide-w3.usage").filter(visible=True).first.wait_for()
