"""An open page that waits asks for few frames of Gradio's seconds (ragapp.ui.quiet_page). Gradio's status tracker asks
for an animation frame on every frame while it counts a pending event's seconds, and goes on after it is gone: the
page's script lets it count four times a second instead. Seen from a script installed before the page's own, which
counts the frames asked for by that counting (recognised by its source, as the page's script does): a few a second
while the page is idle or an answer is awaited, where one counter alone asks for 60. A reader who asks for less
motion also gets no pulsing border nor spinner while the answer is awaited; any other reader still does. The model
is scripted, so that the answer is held on cue."""

from __future__ import annotations

import time
from typing import Any

import pytest

from ragapp.ui.quiet_page import COUNTING

pytestmark = [pytest.mark.e2e]

KETTLE = "# Orion Kettle K9\n\nThe Orion Kettle K9 boils 1.7 litres of water in 3 minutes and 40 seconds.\n"
QUESTION = "How long does the Orion Kettle K9 take to boil?"
# Counts the frames the page's scripts ask for; installed before them, so under ragapp.ui.quiet_page's wrapper.
COUNT_FRAMES = (
    r"""(() => {
  window.__counting = 0;
  const counting = /"""
    + COUNTING
    + r"""/;
  const frame = window.requestAnimationFrame.bind(window);
  window.requestAnimationFrame = (callback) => {
    if (counting.test(Function.prototype.toString.call(callback))) window.__counting += 1;
    return frame(callback);
  };
})();"""
)
RUNNING = """() => document.getAnimations().filter((a) => a.playState === "running"
  && a.effect && a.effect.getTiming().iterations === Infinity).map((a) => a.animationName)"""
WINDOW_S = 2.0
MOST_FRAMES = 30  # in WINDOW_S: two counters at four a second are 16; one counting every frame, about 120


def _frames_in(page: Any, seconds: float) -> int:
    before = page.evaluate("() => window.__counting")
    time.sleep(seconds)
    return int(page.evaluate("() => window.__counting")) - int(before)


def _open(browser: Any, url: str, motion: str) -> tuple[Any, Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US", reduced_motion=motion)
    context.add_init_script(COUNT_FRAMES)
    page = context.new_page()
    page.goto(url)
    page.locator("#question textarea").wait_for()
    return context, page


def _ask_and_hold(rig: Any, page: Any) -> None:
    """Ask; return once the answer's first words show and the model holds the rest."""
    rig.llm.enqueue(["It takes 3 minutes", rig.llm.hang(60), " and 40 seconds [1]."])
    box = page.locator("#question textarea")
    box.fill(QUESTION)
    box.press("Enter")
    page.locator("#chatbot").get_by_text("It takes 3 minutes").first.wait_for()


def _release(rig: Any, page: Any) -> None:
    rig.llm.release()
    page.locator("#chatbot").get_by_text("and 40 seconds").first.wait_for()


def test_an_idle_page_and_an_awaited_answer_ask_for_few_frames_and_less_motion_stills_them(
    scripted_app: Any, browser: Any
) -> None:
    rig, url = scripted_app({"orion_kettle_k9.md": KETTLE})
    context, page = _open(browser, url, "no-preference")
    try:
        page.wait_for_timeout(1000)  # the page's start-up done
        idle = _frames_in(page, WINDOW_S)
        _ask_and_hold(rig, page)
        awaited = _frames_in(page, WINDOW_S)
        running = page.evaluate(RUNNING)
        _release(rig, page)
        assert idle <= MOST_FRAMES, f"an idle page asked for {idle} frames of Gradio's counting in {WINDOW_S} s"
        assert awaited <= MOST_FRAMES, f"{awaited} frames of Gradio's counting in {WINDOW_S} s of an awaited answer"
        assert any("pulse" in name for name in running), f"no pulsing border while the answer is awaited: {running}"
    finally:
        rig.llm.release()
        context.close()

    context, page = _open(browser, url, "reduce")  # a reader who asked the system for less motion
    try:
        _ask_and_hold(rig, page)
        running = page.evaluate(RUNNING)
        _release(rig, page)
        assert running == [], f"endless animations for a reader who asked for less motion: {running}"
    finally:
        rig.llm.release()
        context.close()
