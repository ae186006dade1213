"""Which of a user's memories a question recalls: only a question that names something (``min_words`` content
words at least), and of its memories those the embedder scores at least ``min_similarity`` like it.

The small embedder's cosines sit high whatever the texts (0.7-0.8 between unrelated ones), and highest for the
shortest messages: "hello", "thanks!", "你好", "tell me a joke" scored 0.80-0.87 against "I use the V2 Pro" and
"please answer in Chinese", above real questions about the product (0.74-0.80), so every greeting recalled every
memory. A message that names nothing has nothing a memory could be relevant to. Margins and ranks over the
cosines (against the user's other memories, or against facts any user might keep) and the reranker's score did
no better than the threshold on the recall set (docs/benchmarks.md, "Memory recall"). Pure: the
caller embeds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragapp.store.tokenize import tokenize


@dataclass(frozen=True)
class RecallRule:
    """``min_similarity``: a memory's least cosine to the question; ``min_words``: the content words (stop words
    aside, ``store.tokenize``) a question needs to recall anything."""

    min_similarity: float
    min_words: int = 0


def names_something(question: str, rule: RecallRule) -> bool:
    """``question`` holds enough content words to recall a memory ("hello", "who are you?" do not)."""
    return len(set(tokenize(question))) >= rule.min_words


def recalled(question: str, hits: Sequence[tuple[str, float]], rule: RecallRule) -> list[tuple[str, float]]:
    """The (memory id, similarity) ``hits`` that ``question`` recalls, in their order."""
    if not names_something(question, rule):
        return []
    return [(memory_id, similarity) for memory_id, similarity in hits if similarity >= rule.min_similarity]
