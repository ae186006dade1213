"""Two people asking at once, in two browsers: while the first answer holds the model, the second sees the quoted
evidence at once and its place in the model's queue, then its own answer. The model is scripted (its first answer
is held on cue, which a real model cannot be) and takes turns through the real queue; the rest is the real app."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.e2e]

KETTLE = """# Orion Kettle K9 quick facts

The Orion Kettle K9 boils 1.7 litres of water in 3 minutes and 40 seconds.
Its limescale filter, part number OK-FLT-77, should be rinsed every 14 days.
"""
FIRST = "How long does the Orion Kettle K9 take to boil 1.7 litres?"
SECOND = "How often should the limescale filter of the Orion Kettle K9 be rinsed?"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _open(browser: Any, url: str) -> tuple[Any, Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(url)
    page.locator("#question textarea").wait_for()
    return context, page


def _send(page: Any, question: str) -> None:
    box = page.locator("#question textarea")
    box.fill(question)
    box.press("Enter")


# Behind `slow` (make test-slow, which CI runs after make test): one of the longest tests of the default run,
# which must stay under 10 minutes on 2 cores; faster tests in the default run cover the same code paths.
@pytest.mark.slow
def test_a_second_asker_sees_the_evidence_and_its_place_in_line_while_the_first_answer_runs(
    make_engine: Callable[..., Any], browser: Any, tmp_path: Path, artifacts: Path
) -> None:
    from ragapp.serve.server import start_server

    rig = make_engine()
    rig.llm.take_turns()
    doc = tmp_path / "orion_kettle_k9.md"
    doc.write_text(KETTLE, "utf-8")
    rig.engine.library.ingest([(doc, doc.name)])
    app = start_server(rig.engine, "127.0.0.1", _free_port())  # four answers at a time, as app.py serves it
    first_context, first = _open(browser, app.url)
    second_context, second = _open(browser, app.url)
    try:
        # The first answer starts, then stalls holding the model until released.
        rig.llm.enqueue(["It takes 3 minutes", rig.llm.hang(120), " and 40 seconds [1]."], "Every 14 days [1].")
        _send(first, FIRST)
        first.locator("#chatbot").get_by_text("It takes 3 minutes").first.wait_for()

        _send(second, SECOND)
        chat = second.locator("#chatbot")
        chat.get_by_text("1 answer ahead of yours").first.wait_for()
        # The documents' own sentence is already on screen, before any generated word of this answer.
        evidence = chat.locator("mark").filter(has_text="should be rinsed every 14 days")
        assert evidence.count() >= 1
        assert "Every 14 days" not in chat.inner_text()
        second.screenshot(path=str(artifacts / "queue.png"), full_page=True)

        rig.llm.release()  # the first answer ends; the second takes its turn
        first.locator("#chatbot").get_by_text("3 minutes and 40 seconds").first.wait_for()
        chat.get_by_text("Every 14 days [1].").first.wait_for()
        second.wait_for_function("() => !document.body.innerText.includes('ahead of yours')")
    finally:
        rig.llm.release()
        first_context.close()
        second_context.close()
        app.close()
