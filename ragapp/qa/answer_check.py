"""The final answer event from the model's reply: checked sentence by sentence against the passages in the
prompt (``grounding``), its [n] markers computed, or refused when its core is not in the documents."""

from __future__ import annotations

from collections.abc import Sequence

from ragapp.core.events import AnswerEvent
from ragapp.core.types import Citation, RetrievedChunk, SentenceSupport
from ragapp.qa.citations import cited_numbers
from ragapp.qa.grounding import SupportRules, best_sentence, check_support, core_unsupported, model_refused
from ragapp.qa.prompts import unsupported_message

DEFAULT_RULES = SupportRules()
CLOSEST = 3  # passages shown under a refused answer


def checked_answer(
    question: str, reply: str, kept: Sequence[RetrievedChunk], rules: SupportRules = DEFAULT_RULES
) -> AnswerEvent:
    """The answer to ``question`` from ``reply``, written from ``kept`` (numbered from 1 in the prompt)."""
    support = tuple(check_support(reply, [as_shown(c) for c in kept], rules))
    if core_unsupported(support):
        closest = tuple(
            Citation(n, c.chunk, c.rerank_score, (best_sentence(c.chunk.text, question),))
            for n, c in enumerate(kept[:CLOSEST], start=1)
        )
        return AnswerEvent(unsupported_message(question), closest, grounded=False, abstained=True, support=support)
    text = "".join(s.text for s in support).strip()
    return AnswerEvent(
        text, _citations(text, kept, support), grounded=True, abstained=model_refused(support), support=support
    )


def as_shown(passage: RetrievedChunk) -> str:
    """A passage as the model read it: the prompt shows its heading beside its number (``format_context``), and
    the model may take a fact from it ("Version 2.5.0" heads a list that never repeats the number)."""
    chunk = passage.chunk
    return f"{chunk.heading}\n{chunk.text}" if chunk.heading else chunk.text


def _citations(text: str, kept: Sequence[RetrievedChunk], support: Sequence[SentenceSupport]) -> tuple[Citation, ...]:
    """One citation per passage the checked text cites, in order, with the passage sentences that support it."""
    citations = []
    for n in cited_numbers(text):
        if not 1 <= n <= len(kept):
            continue
        evidence = (e for s in support for number, e in zip(s.passages, s.evidence, strict=True) if number == n)
        shown = kept[n - 1].chunk.text  # a fact found in the heading has nothing to highlight in the text
        highlights = tuple(dict.fromkeys(e for e in evidence if e and e in shown))
        citations.append(Citation(n, kept[n - 1].chunk, kept[n - 1].rerank_score, highlights))
    return tuple(citations)
