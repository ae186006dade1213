"""Per-user state, held in ``gr.State``: one instance per browser session, never shared."""

from __future__ import annotations

from dataclasses import dataclass, field

from ragapp.types import ChatTurn


@dataclass
class Session:
    history: list[ChatTurn] = field(default_factory=list)
    max_turns: int = 6  # turns of history sent with each question (the workflow issue adds summaries)

    def remember(self, question: str, answer: str) -> None:
        self.history += [ChatTurn("user", question), ChatTurn("assistant", answer)]
        del self.history[: -2 * self.max_turns]

    def recent(self) -> list[ChatTurn]:
        return list(self.history)
