"""Token budgets: what fits in the model's window, shared between the parts of a prompt by the budget table
(``Settings.budget``: instructions, history, memories, passages, tool descriptions) after the answer's
``max_tokens``.

The usual RAG-to-agent context split shares the window about 20/30/40/10 between instructions, history, retrieved
passages and tool descriptions, and compresses the history first. Here each part may take up to its share; what a
part leaves (no memories, no tools in Workflow mode, short instructions, a short conversation) goes to the passages,
so the passages are the part that grows and shrinks. ``prompt_fit`` applies the budget to one prompt.

Counting is the estimate of ``ragapp.core.tokens``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from ragapp.config import Settings
from ragapp.core.lang import is_chinese
from ragapp.core.tokens import estimate_tokens
from ragapp.core.types import ChatTurn, RetrievedChunk

_PER_MESSAGE = 4  # role markers of the chat template
_PER_PASSAGE = 12  # "[n] (source · page)" around each passage


def turns_tokens(turns: Sequence[ChatTurn]) -> int:
    return sum(estimate_tokens(t.content) + _PER_MESSAGE for t in turns)


def passage_tokens(item: RetrievedChunk) -> int:
    return estimate_tokens(item.chunk.text) + estimate_tokens(item.chunk.source) + _PER_PASSAGE


def passages_tokens(items: Sequence[RetrievedChunk]) -> int:
    return sum(passage_tokens(item) for item in items)


def text_tokens(text: str) -> int:
    """A part of the prompt that is text (memories, tool descriptions, the summary): nothing when empty."""
    return estimate_tokens(text) + _PER_MESSAGE if text else 0


@dataclass(frozen=True)
class TokenBudget:
    """Tokens for each part of one prompt. ``instructions`` is what the rules and the question take (never
    cut); the others are allowances. ``passages`` already holds what instructions, memories and tools leave of
    their shares; ``passages_after`` adds what the conversation leaves."""

    window: int  # what the model reads and writes per call
    answer: int  # kept free for the reply
    instructions: int  # the answering rules and the question, as they are
    history: int  # conversation: the summary and the recent turns
    memories: int  # long-term memories (0 without any)
    tools: int  # tool descriptions (0 without tools)
    passages: int  # retrieved passages, before what the conversation leaves
    spare: int  # left free: the shares add up to less than 1

    @property
    def context(self) -> int:
        """The passages' allowance when the conversation takes all of its own (the most it may take)."""
        return self.passages

    def passages_after(self, history_used: int) -> int:
        """The passages' allowance once the conversation took ``history_used`` tokens."""
        return self.passages + max(0, self.history - history_used)

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def history_allowance(settings: Settings) -> int:
    """The conversation's tokens: its share of the window less the answer (it depends on nothing else, so the
    conversation can be compressed before the question is searched)."""
    return share_tokens(settings, "history")


def share_tokens(settings: Settings, part: str) -> int:
    """The tokens of ``part``'s share (``Settings.budget``) of the window less the answer."""
    return int(_prompt_tokens(settings) * settings.budget.shares()[part])


def summary_chars(settings: Settings) -> int:
    """The longest summary the conversation's share allows: ``workflow.summary_chars``, less in a small window
    (half the share, counted as one token a character as in Chinese, so the latest turn still fits beside it)."""
    return max(50, min(settings.workflow.summary_chars, history_allowance(settings) // 2))


def turns_over(turns: Sequence[ChatTurn], allowance: int) -> int:
    """How many of the oldest messages must leave so the others fit in ``allowance``."""
    return len(turns) - len(fit_turns(turns, allowance))


def fold_plan(settings: Settings, summary: str, history: Sequence[ChatTurn]) -> tuple[int, int]:
    """How many of the oldest messages to fold into the summary, and the summary's longest length in
    characters: those beyond ``workflow.recent_turns``, and when the conversation is over its share, as many
    more as its share cannot hold beside a summary kept within ``summary_chars``."""
    wf = settings.workflow
    count, chars = max(0, len(history) - 2 * wf.recent_turns), wf.summary_chars
    allowance = history_allowance(settings)
    if text_tokens(summary) + turns_tokens(history) > allowance:  # over budget: compress the history first
        chars = summary_chars(settings)
        chinese = any(is_chinese(t.content) for t in history if t.role == "user")
        count = max(count, turns_over(history, allowance - text_tokens(("字" if chinese else "x") * chars)))
    return count, chars


def plan_budget(settings: Settings, instructions: str, *, memories: str = "", tools: str = "") -> TokenBudget:
    """Share the window: the answer's ``max_tokens`` first, then each part up to its share of the rest;
    ``instructions`` (rules and question) as they are, ``memories`` and ``tools`` as much as they need of
    their shares (the caller cuts them to their allowance); the passages get their share and what the others
    leave."""
    window = settings.workflow.context_window or settings.llm.n_ctx
    answer = settings.llm.max_tokens
    prompt = _prompt_tokens(settings)
    shares = settings.budget.shares()
    allowed = {name: int(prompt * share) for name, share in shares.items()}
    fixed = estimate_tokens(instructions) + 2 * _PER_MESSAGE
    remembered = min(text_tokens(memories), allowed["memories"])
    described = min(text_tokens(tools), allowed["tools"])
    history = allowed["history"]
    spare = max(0, prompt - sum(allowed.values()))
    passages = max(0, prompt - spare - fixed - history - remembered - described)
    return TokenBudget(window, answer, fixed, history, remembered, described, passages, spare)


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


def fit_lines(lines: Sequence[str], budget: int) -> list[str]:
    """The first ``lines`` (best first: memories by relevance, tools in their order) while they fit."""
    kept: list[str] = []
    used = 0
    for line in lines:
        cost = estimate_tokens(line) + 1
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    return kept


def _prompt_tokens(settings: Settings) -> int:
    window = settings.workflow.context_window or settings.llm.n_ctx
    return max(0, window - settings.llm.max_tokens)
