"""A cited figure shown in the chat, under the answer: its picture cropped from its page, small, with its caption
and page, inside the citation's message (``ragapp.ui.render.citation_message``).

The picture travels inside the message as a ``data:`` URL. The HTTP API's figure route
(``/v1/passages/{id}/figure``) asks for an API key the page does not hold, and a file handed to Gradio is served
to anyone who has its address; a ``data:`` URL is drawn under the page's Content-Security-Policy (``img-src 'self'
data:``, ``ragapp.serve.headers``), and its access was checked for the person asking when it was made.
"""

from __future__ import annotations

import base64
import html
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ragapp.core.access import LOCAL_ACTOR, Actor
from ragapp.core.errors import RagAppError
from ragapp.core.types import Citation
from ragapp.ui.i18n import both
from ragapp.ui.markup import escape_text

if TYPE_CHECKING:  # the chat's renderer imports this module and stays free of the engine
    from ragapp.engine.engine import Engine

log = logging.getLogger(__name__)

THUMBNAIL_PX = 400  # the crop's width in pixels: sharp when shown at SHOWN_PX on a dense screen, ~20-60 KB of PNG
SHOWN_PX = 280  # its width at most in the chat: small under the answer, a plot's labels still readable
FIGURE_CLASS = "cited-figure"  # the picture's class, for the page's style and the tests


def figure_pictures(engine: Engine, citations: Iterable[Citation], actor: Actor = LOCAL_ACTOR) -> dict[str, str]:
    """The ``data:`` URL of each cited figure that can be drawn (its file kept), by chunk id; a figure that cannot
    (a Word figure indexed before its picture's name was kept, a file no longer kept, a picture that will not
    draw) is left out: its citation is shown as text, as any other."""
    pictures: dict[str, str] = {}
    for citation in citations:
        chunk = citation.chunk
        if not chunk.figure_drawn or chunk.chunk_id in pictures:
            continue
        try:
            _chunk, png = engine.library.figure_image(chunk.chunk_id, THUMBNAIL_PX, actor=actor)
        except RagAppError as exc:  # gone, or no picture to crop: the text is still there to read
            log.info("no picture for cited figure %s: %s", chunk.chunk_id, exc)
            continue
        except Exception as exc:  # a page that will not draw costs its picture, never the answer
            log.warning("could not draw cited figure %s: %r", chunk.chunk_id, exc)
            continue
        pictures[chunk.chunk_id] = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    return pictures


def figure_markup(citation: Citation, picture: str) -> str:
    """The figure's picture (``picture``: its ``data:`` URL), then its caption and page under it."""
    chunk = citation.chunk
    caption = chunk.figure.caption if chunk.figure is not None else ""
    alt = html.escape(caption, quote=True) or "🖼"  # an attribute: plain text, no Markdown escapes
    image = f'<img src="{picture}" alt="{alt}" class="{FIGURE_CLASS}" style="max-width:{SHOWN_PX}px;width:100%">'
    under = [f"*{escape_text(caption)}*"] if caption else []
    if chunk.page is not None:
        under.append(both(f"page {chunk.page}", f"第 {chunk.page} 页"))
    return image + ("\n\n" + " · ".join(under) if under else "")
