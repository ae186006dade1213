"""The app under its Content-Security-Policy, in a real browser: sign in, upload a file, ask about it, open the
request's trace (a Plotly chart) and sign out, with every policy violation the page reports collected; there is
none. The reply is scripted; everything else is the real served app (ragapp.serve)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.accounts.store import UserStore
from ragapp.serve.headers import CONTENT_SECURITY_POLICY
from tests.e2e.upload import choose_files

pytestmark = [pytest.mark.e2e]

KETTLE = """# Orion Kettle K9 quick facts

The Orion Kettle K9 boils 1.7 litres of water in 3 minutes and 40 seconds.
Its limescale filter, part number OK-FLT-77, should be rinsed every 14 days.
"""
QUESTION = "How often should the limescale filter of the Orion Kettle K9 be rinsed?"
WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) =>
    window.__violations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`));
"""


# Behind `slow` (make test-slow, which CI runs after make test): one of the longest tests of the default run,
# which must stay under 10 minutes on 2 cores; faster tests in the default run cover the same code paths.
@pytest.mark.slow
def test_the_app_works_under_its_content_security_policy(
    accounts_app: Callable[..., Any],
    users: UserStore,
    browser: Any,
    ask_and_wait: Callable[[Any, str], None],
    open_trace: Callable[[Any, str], None],
    tmp_path: Path,
    artifacts: Path,
) -> None:
    users.add("eddie", "editor password", "editor")
    rig, url = accounts_app()
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    context.add_init_script(WATCH)
    page = context.new_page()
    page.set_default_timeout(30_000)
    console: list[str] = []
    page.on("console", lambda msg: console.append(msg.text) if "Content Security Policy" in msg.text else None)
    try:
        reply = page.goto(url)  # the sign-in page, under the same policy
        assert reply.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        page.get_by_label("Name").fill("eddie")
        page.get_by_label("Password").fill("editor password")
        page.get_by_role("button", name="Sign in").click()
        page.locator("#account").get_by_text("Signed in as").wait_for()

        page.get_by_role("tab", name="Knowledge").click()
        doc = tmp_path / "orion_kettle_k9.md"
        doc.write_text(KETTLE, "utf-8")
        choose_files(page, doc)
        page.locator("#add-files").click()
        page.locator("#ingest-report").get_by_text("orion_kettle_k9.md: added").wait_for(timeout=120_000)

        page.get_by_role("tab", name="Chat").click()
        rig.llm.enqueue("Every 14 days [1].")
        ask_and_wait(page, QUESTION)
        page.locator("#chatbot").get_by_text("Every 14 days").first.wait_for()

        page.get_by_role("tab", name="Traces").click()
        open_trace(page, QUESTION)
        page.locator("#trace-waterfall .js-plotly-plot").wait_for()
        page.screenshot(path=str(artifacts / "csp.png"), full_page=True)
        violations = page.evaluate("window.__violations")

        page.goto(f"{url}/logout")  # Gradio's sign-out, mounted: back to the sign-in page
        page.get_by_role("button", name="Sign in").wait_for()
        violations += page.evaluate("window.__violations")
    finally:
        context.close()
    assert violations == [] and console == [], (violations, console)
