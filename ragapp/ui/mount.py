"""The page on a FastAPI app: Gradio mounted at / with what the served app needs of it (sign-in through the
engine, the upload limit, the language), and the handles the server keeps to time sign-ins, to send signed-out
browsers to our sign-in page (``ragapp.ui.signin``) and to stop the page. Kept here so that only the UI package
talks to Gradio; ``ragapp.serve`` builds the server around it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import gradio as gr
from fastapi import FastAPI
from gradio.routes import App as GradioApp
from starlette.routing import Mount

from ragapp.engine.engine import Engine
from ragapp.ui.chat_tab import CHAT_HEAD
from ragapp.ui.confidence_badge import BADGE_HEAD
from ragapp.ui.i18n import I18N
from ragapp.ui.layout import build_ui
from ragapp.ui.page_language import HEAD
from ragapp.ui.quiet_page import QuietPage

# Gradio builds a whole FastAPI app (about a hundred routes, and the page's config) for a Blocks when it is made (it
# queues itself), again when its ``with`` ends, and at each ``queue()``; each replaces the one before, and
# ``mount_gradio_app`` builds the one served. None but the served one is needed: ``build_page`` skips the others (a
# fifth of a page's start, and of each served app's in the tests) and ``mount_page`` hands the queue the served one,
# as Gradio's own ``launch()`` does. Checked per context (a ContextVar), so a page built in another thread meanwhile,
# or any other Blocks, is built as Gradio builds it.
IDLE_POLL_S = 0.01  # how often an idle page's queue looks for a new event (see ``mount_page``)
_BUILDING: ContextVar[bool] = ContextVar("ragapp_building_page", default=False)
_gradio_create_app = GradioApp.create_app


def _create_app_unless_building(blocks: Any, *args: Any, **kwargs: Any) -> Any:
    return None if _BUILDING.get() else _gradio_create_app(blocks, *args, **kwargs)


if not getattr(GradioApp.create_app, "ragapp_wrapped", False):  # once, however often this module loads
    _create_app_unless_building.ragapp_wrapped = True  # type: ignore[attr-defined]
    GradioApp.create_app = staticmethod(_create_app_unless_building)  # type: ignore[method-assign]


@contextmanager
def _without_throwaway_apps() -> Iterator[None]:
    token = _BUILDING.set(True)
    try:
        yield
    finally:
        _BUILDING.reset(token)


def build_page(engine: Engine) -> Any:
    """The app's page (``build_ui``), queued four answers at a time, without Gradio's throwaway apps."""
    with _without_throwaway_apps():
        return build_ui(engine).queue(default_concurrency_limit=4)


@dataclass(frozen=True)
class MountedPage:
    blocks: Any  # the gr.Blocks served
    gradio: Any  # Gradio's own app under the mount: its login tokens and cookie name

    @property
    def cookie_id(self) -> str:
        return str(self.gradio.cookie_id)

    @property
    def page_paths(self) -> frozenset[str]:
        """The paths that answer with the page, or Gradio's stock sign-in form to a signed-out browser: /, each
        page of a multipage app, and Gradio's run history."""
        pages = {f"/{route}" for route, *_ in self.blocks.pages if route}
        return frozenset({"/", "/gradio_api/runs", *pages})

    def use_tokens(self, tokens: Any, cookie_id: str | None = None) -> None:
        """Keep the page's sign-ins in ``tokens`` (a dict-like that keeps them in the database), their cookies
        named with ``cookie_id`` (Gradio draws a new name at each start, which a browser's cookie from before a
        restart, or from another replica, would not match); None keeps Gradio's."""
        self.gradio.tokens = tokens
        if cookie_id is not None:
            self.gradio.cookie_id = cookie_id

    def close(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """As Blocks.close() does: the queue stops and the pages' event streams end. ``loop``: the server's
        event loop, when this is called from another thread: an asyncio event is set on its own loop (set from
        another thread it raced the streams waiting on it, and a close failed now and then)."""
        self.blocks._queue.close()
        if loop is not None and loop.is_running():
            loop.call_soon_threadsafe(self.gradio.stop_event.set)
        else:
            self.gradio.stop_event.set()


def mount_page(
    app: FastAPI, engine: Engine, login: Callable[[str, str], Awaitable[bool]] | None, blocks: Any = None
) -> MountedPage:
    """Mount ``blocks`` (default: the app's page, four answers at a time) at / of ``app``; with ``login``, behind
    Gradio's sign-in route (POST /login: ``ragapp.serve.signin_page`` serves the page that posts to it). Routes of
    ``app`` must be added before: the mount answers every path after it."""
    settings = engine.settings
    page = blocks if blocks is not None else build_page(engine)
    gr.mount_gradio_app(
        app,
        page,
        path="/",
        server_name=settings.ui.host,
        server_port=settings.ui.port,
        # Accounts on: our sign-in page asks, Gradio's /login route has the engine check (bcrypt, throttled per
        # name and address) and sets the cookies, and every handler acts as the signed-in user's role.
        auth=login,
        root_path=settings.ui.root_path or None,
        show_error=False,
        # Gradio's upload route itself refuses files over the ingest limit, before they are written to disk.
        max_file_size=int(settings.ingest.max_file_mb * 1024 * 1024),  # bytes: Gradio reads "0.5mb" as 0
        # The page's words in the browser's language, and the header's English · 中文 switch (ragapp.ui.i18n)
        i18n=I18N,
        head=HEAD + CHAT_HEAD + BADGE_HEAD,
    )
    # Gradio's queue looks for a new event every millisecond while it has none (every 50 ms on Windows): about 4%
    # of a core for as long as the app is up, idle or not. Every 10 ms costs a tenth of that, and an event waits
    # at most 10 ms more to start (Gradio's own progress updates go out on the same 10 ms tick).
    page._queue.sleep_when_free = IDLE_POLL_S
    app.add_middleware(QuietPage)  # an open page that waits draws far fewer frames (ragapp.ui.quiet_page)
    gradio_app = next(r.app for r in app.routes if isinstance(r, Mount) and isinstance(r.app, GradioApp))
    if page.app is None:  # built by ``build_page``: the queue checks and runs events through the app served
        page.app = gradio_app
    return MountedPage(page, gradio_app)
