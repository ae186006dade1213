"""Map the [n] markers in an answer back to the chunks that were numbered n in the prompt, and number an
answer's citations 1..n in the order it cites them (``renumbered``; ``draft_numbers`` for the streamed draft)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ragapp.core.events import AnswerEvent
from ragapp.core.markers import cited_numbers, with_numbers
from ragapp.core.types import Citation, RetrievedChunk


def citations_for(text: str, chunks: Sequence[RetrievedChunk]) -> tuple[Citation, ...]:
    """Citations for the markers that point at a real passage (out-of-range numbers are ignored)."""
    return tuple(
        Citation(number=n, chunk=chunks[n - 1].chunk, score=chunks[n - 1].rerank_score)
        for n in cited_numbers(text)
        if 1 <= n <= len(chunks)
    )


def renumbered(answer: AnswerEvent) -> AnswerEvent:
    """``answer`` with its citations numbered 1..n: in the order its text first cites them, then those it does
    not cite (a refusal's nearest passages) in their order. The markers in the text and in the support check
    follow; a number the model wrote for a passage no longer cited is left as written."""
    numbers = [c.number for c in answer.citations]
    in_text = [n for n in cited_numbers(answer.text) if n in numbers]
    order = in_text + [n for n in numbers if n not in in_text]
    mapping = {old: new for new, old in enumerate(order, start=1)}
    if all(old == new for old, new in mapping.items()):
        return answer
    citations = sorted((replace(c, number=mapping[c.number]) for c in answer.citations), key=lambda c: c.number)
    support = tuple(
        replace(
            s,
            text=with_numbers(s.text, mapping),
            cited=tuple(mapping.get(n, n) for n in s.cited),
            passages=tuple(sorted(mapping.get(n, n) for n in s.passages)),
        )
        for s in answer.support
    )
    text, guess = with_numbers(answer.text, mapping), with_numbers(answer.guess, mapping)
    return replace(answer, text=text, citations=tuple(citations), support=support, guess=guess)
