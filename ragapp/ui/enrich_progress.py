"""The Knowledge tab's line on background indexing: for each knowledge base the user may read that is still
being indexed, how far each step has got ("manuals: vectors for 120 of 340 passages, 14 a minute"), in both
languages from the engine's records (``ragapp.core.said_enrich``). Refreshed every few seconds while the page is
open; empty once every base is fully indexed. Beside it, for those who may add documents, a base's indexing is
paused and resumed (as ``POST /v1/knowledge-bases/{kb}/enrichment/pause`` does)."""

from dataclasses import dataclass
from typing import Any

import gradio as gr

from ragapp.core.access import LOCAL_ACTOR, Action, Actor, may
from ragapp.core.errors import AccessDenied
from ragapp.engine.engine import Engine
from ragapp.ui.handlers import user_errors
from ragapp.ui.i18n import t
from ragapp.ui.said_words import said_text
from ragapp.ui.state import actor_of

REFRESH_S = 5.0


@dataclass(frozen=True)
class EnrichLine:
    line: gr.Markdown
    timer: gr.Timer
    controls: gr.Row  # shown while a base the user may edit is being indexed
    kb: gr.Dropdown
    pause: gr.Button
    resume: gr.Button


def build_enrich_line() -> EnrichLine:
    line = gr.Markdown(elem_id="enrich-progress")
    with gr.Row(visible=False, elem_id="enrich-controls") as controls:
        kb = gr.Dropdown(choices=[], label=t("kb.enrich_kb"), elem_id="enrich-kb", scale=2)
        pause = gr.Button(t("kb.enrich_pause"), size="sm", elem_id="enrich-pause", scale=1)
        resume = gr.Button(t("kb.enrich_resume"), size="sm", elem_id="enrich-resume", scale=1)
    return EnrichLine(line, gr.Timer(REFRESH_S), controls, kb, pause, resume)


class EnrichHandlers:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _actor(self, request: gr.Request | None) -> Actor | None:
        if request is None:
            return LOCAL_ACTOR
        try:
            return actor_of(self.engine, request)
        except AccessDenied:  # not signed in: nothing to show
            return None

    def refresh(self, picked: str | None = None, request: gr.Request | None = None) -> tuple[str, Any, Any]:
        """The line (one line per step left over each readable base still being indexed, as the worker last saw
        them), the controls shown or hidden, and the bases they act on (``picked`` kept while listed)."""
        actor = self._actor(request)
        text, bases = self._shown(actor)
        editable = bases if actor is not None and may(actor, Action.UPLOAD) else []
        value = picked if picked in editable else (editable[0] if editable else None)
        return text, gr.update(visible=bool(editable)), gr.update(choices=editable, value=value)

    @user_errors
    def pause(self, kb: str | None, request: gr.Request | None = None) -> tuple[str, Any, Any]:
        """Stop indexing ``kb`` after the batch under way (kept across restarts), and show it."""
        return self._act(kb, request, pause=True)

    @user_errors
    def resume(self, kb: str | None, request: gr.Request | None = None) -> tuple[str, Any, Any]:
        return self._act(kb, request, pause=False)

    def _act(self, kb: str | None, request: gr.Request | None, *, pause: bool) -> tuple[str, Any, Any]:
        enrichment, actor = self.engine.enrichment, self._actor(request)
        if enrichment is None or actor is None or not kb:
            return self.refresh(kb, request)
        (enrichment.pause if pause else enrichment.resume)(kb, actor=actor)  # refused here for a reader
        return self.refresh(kb, request)

    def _shown(self, actor: Actor | None) -> tuple[str, list[str]]:
        """The progress lines and the bases they are about."""
        enrichment = self.engine.enrichment
        if enrichment is None or actor is None:
            return "", []
        readable = {kb.name for kb in self.engine.library.knowledge_bases(actor=actor)}
        lines, bases = [], []
        for kb in enrichment.indexing(frozenset(readable)):
            progress = enrichment.progress(kb, actor=actor)
            if progress.indexing:
                bases.append(kb)
                lines += [text for said in progress.said() if (text := said_text(said)) is not None]
        return "  \n".join(lines), bases


def wire_enrich_line(engine: Engine, shown: EnrichLine, after: gr.events.Dependency | None = None) -> None:
    """Fill the line on every tick, and once an upload (``after``) has ended; pause and resume the base picked."""
    handlers = EnrichHandlers(engine)
    io: dict[str, Any] = {
        "inputs": [shown.kb],
        "outputs": [shown.line, shown.controls, shown.kb],
        "queue": False,
        "show_progress": "hidden",
    }
    shown.timer.tick(handlers.refresh, **io)
    if after is not None:
        after.then(handlers.refresh, **io)
    shown.pause.click(handlers.pause, **io)
    shown.resume.click(handlers.resume, **io)
