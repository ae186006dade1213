"""One answer prompt fitted into its token budget (``budget``), in the order the usual context split gives: when
the prompt is over budget the conversation is compressed first, then the passages are condensed, and only then dropped.

- Conversation: the pipeline folds turns beyond its share into the summary before searching (``remember``);
  here a summary still longer than the share is shortened and any verbatim turn that still does not fit is
  left out (oldest first, never an answer without its question).
- Passages: what the conversation leaves of its share goes to them. When they do not fit, the passages after
  the best one are condensed (``condense``: the sentences sharing the question's words) to fewer sentences,
  two then one; only when one sentence each is still too much are the last passages dropped. The best
  passage stays whole (the model cuts a long prompt rather than us losing it).

Only the prompt is cut: citations, highlights and the support check read the whole passages. What was
compressed is said in words for the trace (``FittedPrompt.detail``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragapp.core.tokens import estimate_tokens
from ragapp.core.types import ChatTurn, RetrievedChunk
from ragapp.qa.budget import TokenBudget, fit_passages, fit_turns, passages_tokens, text_tokens, turns_tokens
from ragapp.qa.condense import condense

_TIGHTER = (2, 1)  # sentences per passage tried, in turn, when the passages do not fit


@dataclass(frozen=True)
class FittedPrompt:
    """What goes into the answer prompt: the whole passages kept (the prompt shows them condensed to
    ``condense_keep`` sentences after the best one; 0: whole), the turns kept verbatim and the summary."""

    passages: list[RetrievedChunk]
    condense_keep: int
    turns: list[ChatTurn]
    summary: str
    budget: TokenBudget
    used: dict[str, int]  # tokens each part takes in the prompt
    compressed: tuple[str, ...]  # what was compressed to fit, in words

    def detail(self) -> dict[str, object]:
        """For the retrieve stage's detail (and so the trace)."""
        return {"budget": self.budget.as_dict(), "prompt": dict(self.used), "compressed": list(self.compressed)}


def fit_prompt(
    question: str,
    budget: TokenBudget,
    passages: Sequence[RetrievedChunk],
    turns: Sequence[ChatTurn] = (),
    summary: str = "",
    condense_keep: int = 0,
    *,
    memories: str = "",
    tools: str = "",
) -> FittedPrompt:
    """Fit the conversation first, then the passages into what is left (see the module docstring)."""
    compressed: list[str] = []
    summary, summary_cost = _shortened(summary, budget.history, compressed)
    kept_turns = fit_turns(turns, budget.history - summary_cost)
    if len(kept_turns) < len(turns):
        compressed.append(f"{len(turns) - len(kept_turns)} earlier messages left out of the prompt")
    history_used = summary_cost + turns_tokens(kept_turns)
    allowance = budget.passages_after(history_used)
    kept, keep, cost = _fitted_passages(question, passages, allowance, condense_keep, compressed)
    used = {
        "instructions": budget.instructions - estimate_tokens(question),
        "question": estimate_tokens(question),
        "history": history_used,
        "memories": text_tokens(memories),
        "passages": cost,
        "tools": text_tokens(tools),
    }
    return FittedPrompt(kept, keep, kept_turns, summary, budget, used, tuple(compressed))


def prompt_parts(
    question: str,
    instructions: str,
    shown: Sequence[RetrievedChunk],
    turns: Sequence[ChatTurn],
    summary: str,
    memories: str = "",
) -> dict[str, int]:
    """Tokens of each part of an answer prompt as sent (``shown``: the passages as the prompt shows them;
    ``memories``: the memories' part as the prompt shows it)."""
    return {
        "instructions": estimate_tokens(instructions),
        "question": estimate_tokens(question),
        "history": text_tokens(summary) + turns_tokens(turns),
        "memories": text_tokens(memories),
        "passages": passages_tokens(shown),
    }


def _shortened(summary: str, allowance: int, compressed: list[str]) -> tuple[str, int]:
    """The summary cut at a sentence or word to half the conversation's share when it is longer (the
    pipeline asks the model for a summary that short; one kept from a larger window may be longer)."""
    cost = text_tokens(summary)
    limit = allowance // 2
    if cost <= allowance or not summary:
        return summary, cost
    text = summary
    while text and text_tokens(text) > limit:
        text = text[: int(len(text) * 0.8)]
    cut = max(text.rfind(". "), text.rfind("。"), text.rfind(" "))
    text = (text[: cut + 1] if cut > len(text) // 2 else text).rstrip() + ("…" if text else "")
    compressed.append(f"summary shortened from {cost} to {text_tokens(text)} tokens")
    return text, text_tokens(text)


def _fitted_passages(
    question: str, passages: Sequence[RetrievedChunk], allowance: int, keep: int, compressed: list[str]
) -> tuple[list[RetrievedChunk], int, int]:
    """The passages kept (whole), the sentences each but the best keeps in the prompt, and their tokens."""
    levels = [keep, *(k for k in _TIGHTER if keep == 0 or k < keep)]
    for level in levels:
        shown = condense(question, passages, level)
        cost = passages_tokens(shown)
        if cost <= allowance:
            if level != keep:
                compressed.append(f"passages after the best condensed to {level} sentence(s) each")
            return list(passages), level, cost
    level = levels[-1]
    shown = fit_passages(condense(question, passages, level), allowance)
    if level != keep:
        compressed.append(f"passages after the best condensed to {level} sentence(s) each")
    compressed.append(f"{len(passages) - len(shown)} passages dropped")
    return list(passages[: len(shown)]), level, passages_tokens(shown)
