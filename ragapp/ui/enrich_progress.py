"""The Knowledge tab's line on background indexing: for each knowledge base the user may read that is still
being indexed, how far each step has got ("manuals: vectors for 120 of 340 passages, 14 a minute"), in both
languages from the engine's records (``ragapp.core.said_enrich``). Refreshed every few seconds while the page is
open; empty once every base is fully indexed."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from ragapp.core.access import LOCAL_ACTOR, Actor
from ragapp.core.errors import AccessDenied
from ragapp.engine.engine import Engine
from ragapp.ui.said_words import said_text
from ragapp.ui.state import actor_of

REFRESH_S = 5.0


@dataclass(frozen=True)
class EnrichLine:
    line: gr.Markdown
    timer: gr.Timer


def build_enrich_line() -> EnrichLine:
    line = gr.Markdown(elem_id="enrich-progress")
    return EnrichLine(line, gr.Timer(REFRESH_S))


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

    def line(self, request: gr.Request | None = None) -> str:
        """One line per step left over each readable base still being indexed (the bases the worker last saw
        with work: nothing is counted while none is)."""
        enrichment, actor = self.engine.enrichment, self._actor(request)
        if enrichment is None or actor is None:
            return ""
        readable = {kb.name for kb in self.engine.library.knowledge_bases(actor=actor)}
        lines = []
        for kb in enrichment.indexing(frozenset(readable)):
            progress = enrichment.progress(kb, actor=actor)
            if progress.indexing:
                lines += [text for said in progress.said() if (text := said_text(said)) is not None]
        return "  \n".join(lines)


def wire_enrich_line(engine: Engine, shown: EnrichLine, after: gr.events.Dependency | None = None) -> None:
    """Fill the line on every tick, and once an upload (``after``) has ended."""
    handlers = EnrichHandlers(engine)
    shown.timer.tick(handlers.line, outputs=[shown.line], queue=False, show_progress="hidden")
    if after is not None:
        after.then(handlers.line, outputs=[shown.line], queue=False, show_progress="hidden")
