"""Long-term memory as users meet it (issue 36's "done when"): Ann says "remember that I use the V2 Pro"; in a new
chat "how long does the battery last?" is answered for the V2 Pro and says it used a memory; Bob, signed in on
another browser, gets no such memory (and keeps one of his own with "Remember this" under an answer); Ann deletes
hers in the Memory panel and the next answer no longer uses it.

The replies are scripted at the LLM seam (they answer for the product the prompt's memory names, citing the
passage that holds it); the embedder, Chroma, the stores, the accounts and the app are the real ones."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.accounts.store import UserStore
from ragapp.core.types import ChatTurn

# Two sign-ins and five questions: about 70 s on the shared 2-core machine, so it runs with `make test-slow`.
pytestmark = [pytest.mark.e2e, pytest.mark.slow]

V1 = "# Lumen V1 manual\n\nThe Lumen V1 battery lasts 6 hours on a full charge.\n"
V2 = "# Lumen V2 Pro manual\n\nThe Lumen V2 Pro battery lasts 10 hours on a full charge.\n"
BATTERY = "How long does the battery last?"
USED = "Used 1 memory: I use the V2 Pro"


def reply(messages: list[ChatTurn]) -> str:
    """The model's answer: for the V2 Pro when the prompt's memories say the user has one, else for the V1, citing
    the numbered passage about that product."""
    system, user = messages[0].content, messages[-1].content
    product, hours = ("V2 Pro", 10) if "- I use the V2 Pro" in system else ("V1", 6)
    numbers = re.findall(r"^\[(\d+)\] \(([^)]*)\)\n([^\[]*)", user, flags=re.MULTILINE)
    number = next((n for n, _where, text in numbers if f"Lumen {product} battery" in text), "1")
    return f"The Lumen {product} battery lasts {hours} hours on a full charge [{number}]."


def ask(page: Any, question: str, wait_for: str) -> None:
    box = page.locator("#question textarea")
    box.fill(question)
    box.press("Enter")
    page.locator("#chatbot").get_by_text(wait_for).first.wait_for()
    page.wait_for_function("() => !document.querySelector('.generating')", timeout=60_000)


def open_memory_panel(page: Any) -> Any:
    toggle = page.locator(".sidebar-parent button, button.toggle-button").first
    if toggle.count():
        toggle.click()
    page.locator("#memory-panel").get_by_text("Memory").first.click()
    return page.locator("#memory-list")


def test_a_memory_shapes_a_later_chat_for_its_user_only_until_it_is_deleted(
    accounts_app: Callable[..., Any],
    users: UserStore,
    signed_in: Callable[..., Any],
    artifacts: Path,
) -> None:
    users.add("ann", "ann password", "reader")
    users.add("bob", "bob password", "reader")
    rig, url = accounts_app(
        {"v1.md": V1, "v2_pro.md": V2},
        retrieval={"channel_timeout_s": 60.0},  # a busy machine must not cost the answer its passages
    )
    rig.llm.reply_with(reply)

    ann = signed_in(url, "ann", "ann password")
    ask(ann, "remember that I use the V2 Pro", "Got it, I will remember")
    chat = ann.locator("#chatbot")

    # A new chat: the battery question is answered for the V2 Pro, and says which memory it used.
    ann.locator("#clear").click()
    chat.get_by_text("Got it, I will remember").first.wait_for(state="detached")
    ask(ann, BATTERY, "battery lasts 10 hours")
    chat.get_by_text(USED).first.wait_for()
    assert "V2 Pro" in chat.inner_text() and "6 hours" not in chat.inner_text()
    listing = open_memory_panel(ann)
    listing.get_by_text("I use the V2 Pro").first.wait_for()
    ann.screenshot(path=str(artifacts / "memory-used.png"), full_page=True)

    # Bob, on another browser: no memory of his, none of Ann's.
    bob = signed_in(url, "bob", "bob password")
    ask(bob, BATTERY, "battery lasts 6 hours")
    assert "Used 1 memory" not in bob.locator("#chatbot").inner_text()
    assert "V2 Pro" not in bob.locator("#chatbot").inner_text()
    bob_listing = open_memory_panel(bob)
    bob.locator("#memory-status").get_by_text("0 memories kept").first.wait_for()
    assert "I use the V2 Pro" not in bob_listing.inner_text()
    # Bob says what he has in a question: the answer offers to remember it, and keeps it when he accepts.
    ask(bob, "I use the V1, how long does the battery last?", "battery lasts 6 hours")
    offer = bob.locator("#chatbot").locator("button", has_text="Remember this")
    offer.first.wait_for(state="visible")
    assert "I use the V1" not in bob_listing.inner_text()  # offered, not kept
    offer.first.click()
    bob.locator("#chatbot").get_by_text("Remembered: “I use the V1”").first.wait_for()
    bob_listing.get_by_text("I use the V1").first.wait_for()

    # Ann deletes the memory: the next answer no longer uses it.
    listing.get_by_text("I use the V2 Pro").first.click()
    ann.locator("#memory-delete").click()
    ann.locator("#memory-status").get_by_text("0 memories kept").first.wait_for()
    ann.locator("#clear").click()
    chat.get_by_text(USED).first.wait_for(state="detached")
    ask(ann, BATTERY, "battery lasts 6 hours")
    assert "Used 1 memory" not in chat.inner_text()
