"""The model's second look at its own answer (``workflow.verify``): in a call of its own, the model is shown the
passages the answer cites, the question and the answer, and asked whether those passages state that answer to
that very question, in one word. The probability it gives "yes" (read from the reply's one token, where the
backend scores tokens: the local model) ranked the dev splits' right answers above wrong ones better than any
single signal the calibrator had, though not the fresh test split's (docs/lab-log.md, "The model's check of its
answer"): it is one more of the calibrator's signals (``verified``), never a verdict of its own.

The call reads at most ``CITED`` cited passages of ``PASSAGE_CHARS`` characters (the first one in the prompt when
the answer cites none), so it costs the model a few hundred tokens of reading and one of writing."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence

from ragapp.core.types import ChatTurn, RetrievedChunk
from ragapp.models.llm import LLM, ScoredPiece, holds_grammar
from ragapp.qa.citations import citations_for
from ragapp.qa.grounding import strip_markers

VERIFY_SYSTEM = "You check answers against passages. Reply with one word: yes or no."
VERIFY_ASK = "Do the passages state this answer to this exact question? Reply yes or no."
GRAMMAR = 'root ::= "yes" | "no"'  # where the backend holds a reply to a grammar: never anything else
CITED = 2  # cited passages shown, in the order the answer cites them
PASSAGE_CHARS = 1500  # of each passage
YES = ("yes", "是")
NO = ("no", "否")


def verify_messages(question: str, answer: str, passages: Sequence[str]) -> list[ChatTurn]:
    """The call's messages: the passages numbered, the question, the answer (its markers left out), the ask."""
    shown = "\n\n".join(f"[{n}] {text[:PASSAGE_CHARS]}" for n, text in enumerate(passages, start=1))
    said = strip_markers(answer).strip()
    user = f"Passages:\n{shown}\n\nQuestion: {question}\nProposed answer: {said}\n\n{VERIFY_ASK}"
    return [ChatTurn("system", VERIFY_SYSTEM), ChatTurn("user", user)]


def verified_passages(reply: str, kept: Sequence[RetrievedChunk]) -> list[str]:
    """The texts the check reads: the first ``CITED`` distinct passages ``reply`` cites, else the prompt's first."""
    texts: list[str] = []
    for citation in citations_for(reply, kept):
        if citation.chunk.text not in texts:
            texts.append(citation.chunk.text)
    return texts[:CITED] or [c.chunk.text for c in kept[:1]]


def verify_call(llm: LLM, question: str, reply: str, kept: Sequence[RetrievedChunk]) -> Callable[[], Iterator[str]]:
    """The check of ``reply`` to ``question`` as a call to start (``stream_within`` runs it in its time budget):
    one token, at temperature 0, held to yes or no where the backend can be, with its scores."""
    messages = verify_messages(question, reply, verified_passages(reply, kept))
    held = GRAMMAR if holds_grammar(llm) else None
    return lambda: llm.stream_chat(messages, max_tokens=1, temperature=0.0, grammar=held, scores=True)


def read_verdict(pieces: Sequence[str]) -> float | None:
    """P(yes) against P(no) at the reply's first token, from its scores (``ScoredPiece.top``); None when the
    backend gave no scores or neither word was among the likeliest tokens."""
    first = pieces[0] if pieces else None
    if not isinstance(first, ScoredPiece) or not first.top:
        return None
    yes = sum(math.exp(lp) for token, lp in first.top if token.strip().lower() in YES)
    no = sum(math.exp(lp) for token, lp in first.top if token.strip().lower() in NO)
    return yes / (yes + no) if yes + no > 0 else None


def is_verify_call(messages: Sequence[dict[str, object]]) -> bool:
    """A traced call is this check's (its reply is a verdict, not an answer: the replay tells them apart)."""
    return bool(messages) and messages[0].get("content") == VERIFY_SYSTEM
