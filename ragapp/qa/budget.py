"""Token budgets: what fits in the model's window, split between instructions, conversation, retrieved
passages and the answer.

Counting is the estimate of ``ragapp.core.tokens``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragapp.config import Settings
from ragapp.core.tokens import estimate_tokens
from ragapp.core.types import ChatTurn, RetrievedChunk

_PER_MESSAGE = 4  # role markers of the chat template
_PER_PASSAGE = 12  # "[n] (source · page)" around each passage


def turns_tokens(turns: Sequence[ChatTurn]) -> int:
    return sum(estimate_tokens(t.content) + _PER_MESSAGE for t in turns)


def passage_tokens(item: RetrievedChunk) -> int:
    return estimate_tokens(item.chunk.text) + estimate_tokens(item.chunk.source) + _PER_PASSAGE


@dataclass(frozen=True)
class TokenBudget:
    window: int  # what the model reads and writes per call
    answer: int  # kept free for the reply
    instructions: int  # system prompt and question
    history: int  # conversation (summary and recent turns)
    context: int  # retrieved passages

    def as_dict(self) -> dict[str, int]:
        return {
            "window": self.window,
            "answer": self.answer,
            "instructions": self.instructions,
            "history": self.history,
            "context": self.context,
        }


def plan_budget(settings: Settings, instructions: str) -> TokenBudget:
    """Split the window: the answer's ``max_tokens`` first, then the instructions as they are, then the rest
    between conversation (``history_share``) and passages."""
    window = settings.workflow.context_window or settings.llm.n_ctx
    answer = settings.llm.max_tokens
    fixed = estimate_tokens(instructions) + 2 * _PER_MESSAGE
    rest = max(0, window - answer - fixed)
    history = int(rest * settings.workflow.history_share)
    return TokenBudget(window, answer, fixed, history, rest - history)


def fit_passages(chunks: Sequence[RetrievedChunk], budget: int) -> list[RetrievedChunk]:
    """The best passages, in order, while they fit; the first one always (the model cuts a long prompt
    rather than us losing the best passage)."""
    kept: list[RetrievedChunk] = []
    used = 0
    for item in chunks:
        cost = passage_tokens(item)
        if kept and used + cost > budget:
            break
        kept.append(item)
        used += cost
    return kept


def fit_turns(turns: Sequence[ChatTurn], budget: int) -> list[ChatTurn]:
    """The most recent turns that fit in ``budget``, oldest first; a user turn never loses its answer."""
    kept: list[ChatTurn] = []
    used = 0
    for turn in reversed(turns):
        cost = estimate_tokens(turn.content) + _PER_MESSAGE
        if used + cost > budget:
            break
        kept.append(turn)
        used += cost
    kept.reverse()
    while kept and kept[0].role == "assistant":  # an answer without its question confuses the model
        kept.pop(0)
    return kept
