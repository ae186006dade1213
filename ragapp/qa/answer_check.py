"""The final answer event from the model's reply: checked sentence by sentence against the passages in the
prompt (``grounding``), its [n] markers computed, or refused when its core is not in the documents.

A reply that only repeats the question ("int64 [1]" for "Which IDL types map to int64?", "The function that
must be called first is [1].": the 1.5B model's way of not finding the value) is replaced by the passage
sentence that answers the question best, quoted with its marker: the reader gets the documents' words
instead of an echo."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragapp.core.events import AnswerEvent
from ragapp.core.types import Citation, RetrievedChunk, SentenceSupport
from ragapp.qa.citations import cited_numbers
from ragapp.qa.grounding import (
    SupportRules,
    best_sentence,
    check_support,
    core_unsupported,
    model_refused,
    split_sentences,
    strip_markers,
)
from ragapp.qa.prompts import quoted_message, unsupported_message
from ragapp.store.tokenize import tokenize

DEFAULT_RULES = SupportRules()
CLOSEST = 3  # passages shown under a refused answer
# A marker standing where the value belongs, at the end of the reply: "The function to call first is [1]."
_VALUE_SLOT = re.compile(r"(\b(?:is|are|was|were|be|called|named)|[:：是为])\s*(?:\[\d+\]\s*)+[.。]?\s*$")
MIN_QUOTE_WORDS = 2  # question words a passage sentence must share to be quoted instead of an echo


def checked_answer(
    question: str, reply: str, kept: Sequence[RetrievedChunk], rules: SupportRules = DEFAULT_RULES
) -> AnswerEvent:
    """The answer to ``question`` from ``reply``, written from ``kept`` (numbered from 1 in the prompt)."""
    quoted = quoted_answer(question, kept) if echoes(question, reply) else None
    if quoted is not None:
        return quoted
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


def echoes(question: str, reply: str) -> bool:
    """The reply says nothing the question did not: every word of it, markers aside, is one of the question's,
    and it is a word or two ("int64 [1]") or ends with a marker where the value belongs ("... is [1].").
    (A longer reply of the question's words can be an answer: "6 becomes [B; C]" when the question names
    B and C.)"""
    words = tokenize(strip_markers(reply))
    if not words:
        return True
    return set(words) <= set(tokenize(question)) and (len(words) <= 2 or bool(_VALUE_SLOT.search(reply)))


def quoted_answer(question: str, kept: Sequence[RetrievedChunk]) -> AnswerEvent | None:
    """The passage sentence sharing most words with the question (the earlier passage on a tie), with the
    sentence before it when that one shares a word too (it often names the subject: "Initialize the COM
    library. Must be called once before ..."), quoted with its marker and highlighted in its passage; None when
    no sentence shares ``MIN_QUOTE_WORDS``."""
    asked = set(tokenize(question))
    best: tuple[int, int, str] | None = None  # (shared words, -number, the passage's text quoted)
    for number, passage in enumerate(kept, start=1):
        pieces = _prose_sentences(passage.chunk.text)
        shared = [len(asked & set(tokenize(piece))) for piece in pieces]
        for i, piece in enumerate(pieces):
            if shared[i] >= MIN_QUOTE_WORDS and (best is None or (shared[i], -number) > best[:2]):
                raw = pieces[i - 1] + piece if i and shared[i - 1] else piece
                best = (shared[i], -number, raw.strip())
    if best is None:
        return None
    number, raw = -best[1], best[2]
    text = quoted_message(question, " ".join(raw.split()), number)
    passage = kept[number - 1]
    support = SentenceSupport(text, "supported", cited=(number,), passages=(number,), overlap=1.0, evidence=(raw,))
    citation = Citation(number, passage.chunk, passage.rerank_score, (raw,))
    return AnswerEvent(text, (citation,), grounded=True, support=(support,))


def _prose_sentences(text: str) -> list[str]:
    """``text`` cut into sentences that join back into it, a single line break not ending one (PDF text breaks
    lines inside sentences): the cut is made on a copy with those breaks as spaces, the same length."""
    flat = re.sub(r"(?<!\n)\n(?!\n)", " ", text)
    pieces, at = [], 0
    for piece in split_sentences(flat):
        pieces.append(text[at : at + len(piece)])
        at += len(piece)
    return pieces


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
