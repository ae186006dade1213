"""The early quote in a real browser (scripted model): while routing's model call is still deciding, the best
sentence of the general search is on screen; when routing then asks back, the quote is taken away and the
choices are offered. The classifier call is held until the test has seen the quote in the page, which proves
the order without timing."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.core.types import ChatTurn

pytestmark = [pytest.mark.e2e]

TREE = """
intents:
  - code: alpha
    name: Alpha robot
    children:
      - {code: alpha.specs, name: Specs, kind: KB, knowledge_bases: [alpha], description: Alpha battery and size}
  - code: beta
    name: Beta robot
    children:
      - {code: beta.specs, name: Specs, kind: KB, knowledge_bases: [beta], description: Beta battery and size}
"""
ALPHA = "# Alpha robot manual\n\nThe Alpha robot battery lasts 90 minutes on a full charge.\n"
BETA = "# Beta robot manual\n\nThe Beta robot battery lasts 150 minutes on a full charge.\n"
CLASSIFICATION = '{"matches": [{"id": "alpha.specs", "score": 0.9}, {"id": "beta.specs", "score": 0.88}]}'
WAIT_S = 120.0  # only how long a broken order may hang the test before it fails


def test_the_quote_shows_while_routing_decides_and_goes_when_the_app_asks_back(
    scripted_app: Callable[..., Any], open_page: Callable[[str], Any], artifacts: Path
) -> None:
    rig, url = scripted_app(workflow={"route": True})
    for name, text, kb in (("alpha_manual.md", ALPHA, "alpha"), ("beta_manual.md", BETA, "beta")):
        path = rig.settings.paths.state_dir.parent / name
        path.write_text(text, "utf-8")
        assert rig.engine.library.ingest([(path, name)], kb=kb)[0].status == "added"
    rig.engine.intents.import_tree(TREE)
    seen = threading.Event()
    released: list[bool] = []

    def classify(_messages: list[ChatTurn]) -> str:
        released.append(seen.wait(WAIT_S))
        return CLASSIFICATION

    rig.llm.reply_with(classify)
    page = open_page(url)
    box = page.locator("#question textarea")
    box.fill("How long does the battery last?")
    box.press("Enter")
    chat = page.locator("#chatbot")
    try:
        chat.get_by_text("From the documents").first.wait_for(timeout=60_000)
        chat.get_by_text("on a full charge").first.wait_for()
        page.screenshot(path=str(artifacts / "early-evidence.png"), full_page=True)
    finally:
        seen.set()  # let routing decide (a failed wait must not leave the classifier's thread held)

    chat.get_by_role("button", name="Search everything").wait_for(timeout=60_000)  # the app asks back
    page.wait_for_function("() => !document.querySelector('#chatbot')?.innerText.includes('From the documents')")
    assert released == [True]  # routing answered only after the quote was in the page
