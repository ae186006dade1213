"""An upload into a knowledge base no intent searches, as a user meets it: the upload report says so once, with
one click that adds an intent for it; the Intents tab says so too, and no longer once the intent is there. The
real engine and stores with the scripted model (nothing here asks the model)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.upload import choose_files

pytestmark = [pytest.mark.e2e]

DEMO_TREE = Path(__file__).resolve().parents[2] / "data" / "intents" / "demo.yaml"
SHIPPING = "# Shipping\n\nOrders ship within 2 working days; returns are accepted within 7 days.\n"
MANUAL = "# The tq library\n\ntq_open returns NULL when the file cannot be opened, and sets errno.\n"
NOTICE = "No intent searches default"


def test_an_upload_no_intent_searches_is_said_once_with_one_click_to_add_an_intent(
    scripted_app: Callable[..., Any], open_page: Callable[[str], Any], tmp_path: Path
) -> None:
    rig, url = scripted_app()
    shipping = tmp_path / "shipping.md"
    shipping.write_text(SHIPPING, "utf-8")
    assert rig.engine.library.ingest([(shipping, "shipping.md")], kb="demo")[0].status == "added"
    rig.engine.intents.import_tree(DEMO_TREE.read_text("utf-8"))  # every leaf searches "demo"
    page = open_page(url)
    page.locator("#question textarea").wait_for()

    page.get_by_role("tab", name="Intents").click()
    expect(page.locator("#intent-uncovered")).to_be_hidden()  # "default" holds nothing yet

    manual = tmp_path / "tq.md"
    manual.write_text(MANUAL, "utf-8")
    page.get_by_role("tab", name="Knowledge").click()
    choose_files(page, manual)
    page.locator("#add-files").click()
    report = page.locator("#ingest-report")
    report.get_by_text("tq.md: added").wait_for(timeout=120_000)
    report.get_by_text(NOTICE).wait_for()
    assert report.inner_text().count(NOTICE) == 1  # said once
    add = page.locator("#kb-add-leaf")
    expect(add).to_be_visible()

    # The Intents tab says it too, with its own button, while the knowledge base stays uncovered.
    page.get_by_role("tab", name="Intents").click()
    notice = page.locator("#intent-uncovered")
    expect(notice).to_be_visible()
    expect(notice.get_by_text(NOTICE)).to_be_visible()
    expect(page.locator("#intent-add-uncovered")).to_be_visible()

    # One click under the upload adds the intent; the Intents tab then lists it and says no more.
    page.get_by_role("tab", name="Knowledge").click()
    add.click()
    report.get_by_text("Added the intent").wait_for()
    expect(add).to_be_hidden()
    assert [leaf.code for leaf in rig.engine.intents.tree().leaves(["KB"]) if leaf.kbs == ("default",)] == [
        "kb-default"
    ]
    page.get_by_role("tab", name="Intents").click()
    page.locator("#intent-tree").get_by_text("kb-default").filter(visible=True).first.wait_for()
    expect(notice).to_be_hidden()


def test_the_intents_tab_adds_an_intent_for_an_uncovered_base_in_one_click(
    scripted_app: Callable[..., Any], open_page: Callable[[str], Any], tmp_path: Path
) -> None:
    rig, url = scripted_app({"tq.md": MANUAL})  # in "default"
    shipping = tmp_path / "shipping.md"
    shipping.write_text(SHIPPING, "utf-8")
    assert rig.engine.library.ingest([(shipping, "shipping.md")], kb="demo")[0].status == "added"
    rig.engine.intents.import_tree(DEMO_TREE.read_text("utf-8"))
    page = open_page(url + "?lang=zh")  # the Chinese page says it in Chinese only
    page.locator("#question textarea").wait_for()
    page.get_by_role("tab", name="意图").click()
    notice = page.locator("#intent-uncovered")
    expect(notice.get_by_text("没有意图检索")).to_be_visible()
    expect(notice.get_by_text(NOTICE)).to_be_hidden()
    page.locator("#intent-add-uncovered").click()
    page.locator("#intent-message").get_by_text("已添加意图").wait_for()
    page.locator("#intent-tree").get_by_text("kb-default").filter(visible=True).first.wait_for()
    expect(notice).to_be_hidden()
