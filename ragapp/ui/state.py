"""Per-user state, held in ``gr.State``: one instance per browser session, never shared."""

from __future__ import annotations

from dataclasses import dataclass, field

from ragapp.types import ChatTurn


@dataclass
class Session:
    history: list[ChatTurn] = field(default_factory=list)
    # Turns of history sent with each question. Kept short: with five passages the prompt already fills
    # much of the local model's 4,096-token window (the workflow issue adds summaries of older turns).
    max_turns: int = 2

    def remember(self, question: str, answer: str) -> None:
        self.history += [ChatTurn("user", question), ChatTurn("assistant", answer)]
        del self.history[: -2 * self.max_turns]

    def recent(self) -> list[ChatTurn]:
        return list(self.history)
