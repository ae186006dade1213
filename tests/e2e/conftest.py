"""Browser fixtures: the whole app served in-process on a free port, driven by Debian's Chromium."""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("RAGAPP_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).parent / "artifacts"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The real app: demo knowledge base, real embedder, the packaged local LLM."""
    from ragapp.config import Settings
    from ragapp.engine.build import build_engine
    from ragapp.ui.layout import build_ui

    port = _free_port()
    settings = Settings(paths={"state_dir": tmp_path_factory.mktemp("e2e-state")}, ui={"port": port})
    engine = build_engine(settings)
    engine.warm_up()
    demo = build_ui(engine).queue()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        demo.close()
        engine.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: install Debian's chromium (see .ci/run).")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture()
def page(browser: object, app_url: str) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")  # type: ignore[attr-defined]
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(app_url)
    # Gradio renders in the browser: once the question box exists, the app's scripts are running.
    page.locator("#question textarea").wait_for()
    yield page
    context.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
