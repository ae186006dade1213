"""Browser fixtures: the whole app served in-process on a free port (ragapp.serve, as app.py serves it), driven by
Debian's Chromium."""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.workers import MODEL_THREADS

# Debian's headless shell where it is installed (.ci/run installs it): Chromium's page engine without the browser
# around it, the build Playwright itself runs headless. A page open costs about a quarter less CPU in it than in
# the whole browser (docs/lab-log.md, "Tests"), and the browser tests open hundreds. The whole browser otherwise.
HEADLESS_SHELL = Path("/usr/bin/chromium-headless-shell")
CHROMIUM = os.environ.get("RAGAPP_TEST_CHROMIUM") or str(
    HEADLESS_SHELL if HEADLESS_SHELL.exists() else Path("/usr/bin/chromium")
)
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
def app_url(
    tmp_path_factory: pytest.TempPathFactory, shared_models: Any, indexed_demo: Callable[[Path], None]
) -> Iterator[str]:
    """The real app: demo knowledge base (the run's indexed copy: ``indexed_demo``), real embedder, the packaged
    local LLM."""
    from ragapp.config import Settings
    from ragapp.engine.build import build_engine
    from ragapp.serve.server import start_server

    # An agent decision past its budget falls back to the workflow; on a busy 2-core runner the first one (the
    # tool list read cold) has taken over the default 60 s, so these tests give it room: they check the UI.
    # The answer cache is off: these tests share one app and some ask the same question, each expecting the
    # whole pipeline (its steps, the model writing); test_answer_cache_browser.py serves an app with it on.
    # Two agent steps show the loop (a tool call, its result read back by the model's next decision) before the
    # answer; the 1.5B model's later steps repeat its search, each a decision of tens of seconds.
    state = tmp_path_factory.mktemp("e2e-state")
    indexed_demo(state)
    settings = Settings(
        paths={"state_dir": state},
        agent={"step_timeout_s": 240.0, "max_steps": 2},
        answer_cache={"enabled": False},
        retrieval={"channel_timeout_s": 60.0},  # a loaded runner's search must not lose a channel to the 5 s budget
        llm={"threads": MODEL_THREADS},  # this xdist worker's share of the cores (tests/workers.py)
        ingest={"ocr_threads": MODEL_THREADS},
    )
    engine = build_engine(settings, shared_models.parts(settings))  # the run's models, the local LLM's included
    engine.warm_up()  # what another app of the run had the shared LLM read already is not read again
    server = start_server(engine, "127.0.0.1", _free_port())  # as app.py serves it: headers, sessions, uploads
    try:
        yield server.url
    finally:
        server.close()
        engine.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: install Debian's chromium-headless-shell (see .ci/run).")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        browser.new_context = _reduced_motion(browser.new_context)  # type: ignore[method-assign]
        yield browser
        browser.close()


def _reduced_motion(new_context: Callable[..., Any]) -> Callable[..., Any]:
    """Every page as a reader who asks the system for less motion sees it (``prefers-reduced-motion: reduce``,
    which the app honours: ragapp.ui.quiet_page), unless a test asks otherwise: Gradio's pulsing border and
    spinner, drawn in software by the headless shell, cost 0.15 of a core while an answer is awaited, and the
    tests wait minutes for the real model (docs/lab-log.md, "An open page's frames"). No test reads an animation;
    test_quiet_page_browser.py checks the page's frames both ways."""

    def with_reduced_motion(**options: Any) -> Any:
        options.setdefault("reduced_motion", "reduce")
        return new_context(**options)

    return with_reduced_motion


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


DOCS_PICTURES = Path(__file__).resolve().parents[2] / "docs" / "assets"


def _keep_for_docs(picture: Path) -> None:
    if os.environ.get("RAGAPP_UPDATE_SCREENSHOT") == "1":
        DOCS_PICTURES.mkdir(exist_ok=True)
        shutil.copy(picture, DOCS_PICTURES / picture.name)


@pytest.fixture(scope="session")
def keep_for_docs() -> Callable[[Path], None]:
    """``keep(picture)``: with ``make screenshot`` (RAGAPP_UPDATE_SCREENSHOT=1), the docs' copy of ``picture``
    (docs/assets/) is refreshed from the browser test that took it."""
    return _keep_for_docs


@pytest.fixture()
def scripted_app(make_engine: Callable[..., Any]) -> Iterator[Callable[..., tuple[Any, str]]]:
    """``start(documents, **overrides)``: a real engine with the scripted LLM (``make_engine``) holding
    ``documents`` (name: text), served on a free port; returns (rig, url). The app is closed at teardown."""
    from ragapp.serve.server import start_server

    servers: list[Any] = []

    def start(documents: dict[str, str] | None = None, **overrides: Any) -> tuple[Any, str]:
        rig = make_engine(**overrides)
        for name, text in (documents or {}).items():
            path = rig.settings.paths.state_dir.parent / name
            path.write_text(text, "utf-8")
            (result,) = rig.engine.library.ingest([(path, name)])
            assert result.status == "added", result.message
        server = start_server(rig.engine, "127.0.0.1", _free_port())  # as app.py serves it
        servers.append(server)
        return rig, server.url

    yield start
    for server in servers:
        server.close()


@pytest.fixture(scope="session")
def read_only_app(make_session_engine: Callable[..., Any]) -> Iterator[tuple[Any, str]]:
    """(rig, url): one app for the whole run, with the scripted LLM, no documents and accounts off, for the
    browser tests that only look (each in its own browser page). Never ask, upload, sign in or change a setting
    in it: a test that does starts its own (``scripted_app``)."""
    from ragapp.serve.server import start_server

    rig = make_session_engine("read-only-app")
    server = start_server(rig.engine, "127.0.0.1", _free_port())
    try:
        yield rig, server.url
    finally:
        server.close()


@pytest.fixture()
def users(tmp_path: Path) -> Any:
    """The users file of ``accounts_app`` (a ``UserStore``, cheap hashing): add the test's users, keys and
    rules to it before starting the app."""
    from ragapp.accounts.store import UserStore

    return UserStore(tmp_path / "users.json", 4)


@pytest.fixture()
def accounts_app(scripted_app: Callable[..., Any], users: Any) -> Callable[..., tuple[Any, str]]:
    """``start(documents=None, **overrides)``: ``scripted_app`` with accounts on over the ``users`` file (and any
    ``auth`` settings in ``overrides``); returns (rig, url)."""

    def start(documents: dict[str, str] | None = None, **overrides: Any) -> tuple[Any, str]:
        auth = {"enabled": True, "users_file": users.path, "bcrypt_rounds": 4} | overrides.pop("auth", {})
        return tuple(scripted_app(documents, auth=auth, **overrides))  # type: ignore[return-value]

    return start


@pytest.fixture()
def signed_in(open_page: Callable[[str], Any]) -> Callable[[str, str, str], Any]:
    """``signed_in(url, name, password)``: a fresh browser page at ``url`` (``open_page``), signed in as ``name``
    through the sign-in page (``sign_in``)."""

    def open_as(url: str, name: str, password: str) -> Any:
        page = open_page(url)
        _sign_in(page, name, password)
        return page

    return open_as


def _ask_and_wait(page: Any, question: str) -> None:
    box = page.locator("#question textarea")
    box.fill(question)
    box.press("Enter")
    page.locator("#chatbot").get_by_text("Writing the answer").last.wait_for()
    page.wait_for_function(
        "() => !document.querySelector('#chatbot .pending, #chatbot [data-status=\"pending\"]')"
        " && !document.querySelector('.generating')",
        timeout=60_000,
    )


def _open_trace(page: Any, question: str) -> None:
    """In the Traces tab: refresh until the request asking ``question`` is listed (its trace is written when the
    request ends), then open it."""
    row = page.locator("#trace-list").locator('[role=gridcell][data-col="1"]', has_text=question).first
    for _ in range(20):
        if row.count():
            break
        page.locator("#trace-refresh").click()
        page.wait_for_timeout(500)
    row.click()


@pytest.fixture()
def open_trace() -> Callable[[Any, str], None]:
    """``open_trace(page, question)``: in the Traces tab, the request that asked ``question``, opened."""
    return _open_trace


@pytest.fixture()
def ask_and_wait() -> Callable[[Any, str], None]:
    """``ask(page, question)``: type the question, send it, and wait until the answer is written."""
    return _ask_and_wait


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Each phase's report kept on the test, so that ``open_page`` knows at teardown whether the test failed."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture()
def open_page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Callable[[str], Any]]:
    """``open_page(url)``: a fresh browser page at ``url`` (English, 1280×900); closed at teardown. When the test
    fails, each page's screenshot and browser console are left in tests/e2e/artifacts/failed/ to read."""
    contexts: list[Any] = []
    pages: list[tuple[Any, list[str]]] = []

    def open_at(url: str) -> Any:
        context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
        contexts.append(context)
        page = context.new_page()
        console: list[str] = []
        page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
        page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
        pages.append((page, console))
        page.set_default_timeout(30_000)
        page.goto(url)
        return page

    yield open_at
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        _keep_failed(request.node.name, pages)
    for context in contexts:
        context.close()


def _keep_failed(test: str, pages: list[tuple[Any, list[str]]]) -> None:
    failed = ARTIFACTS / "failed"
    failed.mkdir(parents=True, exist_ok=True)
    for n, (page, console) in enumerate(pages):
        stem = failed / f"{test[:80]}-{n}"
        try:
            page.screenshot(path=f"{stem}.png", full_page=True)
        except Exception as exc:  # a page already gone: its console is still worth reading
            console.append(f"(no screenshot: {exc})")
        stem.with_suffix(".console.txt").write_text("\n".join(console), "utf-8")


def _sign_in(page: Any, name: str, password: str) -> None:
    # Not exact: Playwright matches a label by all its text, the other language's hidden words too.
    page.get_by_label("Name").fill(name)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.locator("#account").get_by_text("Signed in as").wait_for()


@pytest.fixture()
def sign_in() -> Callable[[Any, str, str], None]:
    """``sign_in(page, name, password)``: fill the sign-in page (in English: ragapp.ui.signin) and wait for the
    header to name the user."""
    return _sign_in
