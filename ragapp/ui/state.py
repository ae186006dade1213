"""Per-user state, held in ``gr.State``: one instance per browser session, never shared."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import gradio as gr

from ragapp.core.access import Actor
from ragapp.core.events import ClarifyEvent, MemoryEvent
from ragapp.core.turn import Exchange
from ragapp.core.types import ChatTurn


@dataclass
class Session:
    # The recent turns, verbatim. The engine decides when older ones are folded into ``summary`` (a
    # MemoryEvent), so the session keeps whatever it is told to and never grows without bound.
    history: list[ChatTurn] = field(default_factory=list)
    summary: str = ""
    # The question the app asked back about, and what it asked; cleared by the user's pick or a new question.
    pending_question: str = ""
    pending: ClarifyEvent | None = None
    # The conversation as shown, one record per chat message (see ``ui.conversation_view``: what a click on a
    # message looks up); what is kept of it, each question with the turn that answered it; and its id in the
    # conversation store once saved. ``as_shown``: reopened from a conversation kept as its messages (before
    # exchanges were kept), so it goes on being kept that way.
    records: list[dict[str, Any]] = field(default_factory=list)
    exchanges: list[Exchange] = field(default_factory=list)
    as_shown: bool = False
    conversation_id: str | None = None
    # The answer a thumbs-down was given on, while its comment box is open.
    feedback_trace: str = ""
    # The question whose kept answer (from the answer cache) was shown last: what "Answer again" asks anew.
    again: str = ""

    def remember(self, question: str, answer: str) -> None:
        self.history += [ChatTurn("user", question), ChatTurn("assistant", answer)]

    def fold(self, event: MemoryEvent) -> None:
        self.summary = event.summary
        del self.history[: event.folded]

    def recent(self) -> list[ChatTurn]:
        return list(self.history)


class UploadControl:
    """Per browser session: the Stop button's signal to the upload in flight. Gradio copies a State's initial
    value for each session; a copy is a fresh control (an Event cannot be copied, nor should it be shared)."""

    def __init__(self) -> None:
        self.cancel = threading.Event()

    def __deepcopy__(self, memo: dict[int, Any]) -> UploadControl:
        return UploadControl()


def ensure_owner(engine: Any, stored: str | None, request: gr.Request | None = None) -> str:
    """On page load: the owner id this browser keeps (its traces and test cases), when the server signed it;
    else a new one, signed. The browser keeps it; what it sends back is only believed with its signature."""
    if engine.signer.unsign(stored) is not None:
        return stored  # type: ignore[return-value]
    return engine.signer.sign(owner_of(engine, None, request))  # type: ignore[no-any-return]


def owner_of(engine: Any, stored: str | None, request: Any = None) -> str:
    """Whose traces: a signed-in user's name, else the id this browser keeps if the server signed it (a client
    naming another browser's id gets nothing of theirs). Before the page's load event has stored one, the id
    comes from the session, the same one the load event signs: a question asked in the first instant is not
    lost to another owner."""
    username = getattr(request, "username", None) if request is not None else None
    if username:
        return f"user:{username}"
    kept = engine.signer.unsign(stored)
    if kept is not None:
        return kept  # type: ignore[no-any-return]
    session = getattr(request, "session_hash", None) if request is not None else None
    return f"browser:{session}" if session else "anonymous"


def actor_of(engine: Any, request: Any = None) -> Actor:
    """Whom a UI event (or a script calling the same endpoint through Gradio's API) acts for: the user Gradio
    signed in, as the engine knows them; with accounts off, the local user. The request's client address
    (the proxy's forwarded one only from a trusted proxy: uvicorn decides) goes with them to the audit log."""
    username = getattr(request, "username", None) if request is not None else None
    return engine.actor(username, client_of(request))  # type: ignore[no-any-return]


def client_of(request: Any = None) -> str:
    """The address a Gradio request came from ("" when unknown: a test's request, a script without one)."""
    host = getattr(getattr(request, "client", None), "host", None)
    return host if isinstance(host, str) else ""
