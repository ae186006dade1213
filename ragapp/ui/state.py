"""Per-user state, held in ``gr.State``: one instance per browser session, never shared."""

from __future__ import annotations

from dataclasses import dataclass, field

from ragapp.tracing.events import ClarifyEvent, MemoryEvent
from ragapp.types import ChatTurn


@dataclass
class Session:
    # The recent turns, verbatim. The engine decides when older ones are folded into ``summary`` (a
    # MemoryEvent), so the session keeps whatever it is told to and never grows without bound.
    history: list[ChatTurn] = field(default_factory=list)
    summary: str = ""
    # The question the app asked back about, and what it asked; cleared by the user's pick or a new question.
    pending_question: str = ""
    pending: ClarifyEvent | None = None

    def remember(self, question: str, answer: str) -> None:
        self.history += [ChatTurn("user", question), ChatTurn("assistant", answer)]

    def fold(self, event: MemoryEvent) -> None:
        self.summary = event.summary
        del self.history[: event.folded]

    def recent(self) -> list[ChatTurn]:
        return list(self.history)
