"""How sure the app is of an answer: high, medium or low, with the checks behind it.

Four checks, none of them a model call:

- ``supported``: every sentence that states a key fact has it in a passage it cites (``grounding``); an answer
  of plain words ("unique [1]") when most of its words are in the passages.
- ``fits``: the answer gives a value where the question asks for one, of the kind it asks for (``fit``).
- ``agrees``: the key facts the answer adds to the question (or, without any, its added words) are in the evidence
  sentence quoted before it, when one was; a different value there is the neighbouring-fact mistake the
  support check cannot see.
- ``on_topic``: the reranker's score of the question against the passage sentences the answer rests on; a
  sentence that holds the answer's facts but does not address the question scores low.

The level: low when the answer is unsupported, does not fit, or rests on sentences scoring under
``low_below``; high when every check passes, the quote agrees, and that score reaches ``high_from``; else
medium. The two thresholds are chosen on the dev split of the blind answer set (docs/benchmarks.md) so that
"high" answers are right at least 95% of the time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ragapp.core.facts import PassageFacts
from ragapp.core.types import Confidence, ConfidenceCheck, ConfidenceLevel, Said, SentenceSupport
from ragapp.qa.answer_fit import asked_kind, has_kind, leaves_slot
from ragapp.qa.grounding import best_sentence, strip_markers
from ragapp.store.tokenize import tokenize

# Scores sentences for a question, best high; None for a sentence it cannot judge (see answer_check).
SentenceScorer = Callable[[str, Sequence[str]], Sequence[float | None]]


@dataclass(frozen=True)
class Thresholds:
    high_from: float = 0.9  # on_topic score from which an answer passing every check is "high"
    low_below: float = 0.05  # on_topic score under which an answer is "low"


DEFAULT_THRESHOLDS = Thresholds()
WORDS_HELD = 0.6  # a sentence without key facts is "in the passages" when this share of its words is


def assess(
    question: str,
    reply: str,
    support: Sequence[SentenceSupport],
    passages: Sequence[str],
    quote: str | None = None,
    scorer: SentenceScorer | None = None,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
) -> Confidence:
    """The confidence of an answer to ``question`` written as ``reply`` and checked as ``support`` against
    ``passages`` (numbered from 1); ``quote`` is the evidence sentence shown before it, ``scorer`` the
    reranker's sentence scorer (None: reranking off, and ``on_topic`` is not judged)."""
    checks = [_supported(support), _fits(question, reply)]
    agrees = _agrees(question, support, quote)
    if agrees is not None:
        checks.append(agrees)
    score = _on_topic_score(question, support, passages, scorer)
    if score is not None:
        checks.append(ConfidenceCheck("on_topic", score >= thresholds.low_below, f"{score:.2f}"))
    return Confidence(_level(checks, score, thresholds), tuple(checks))


def _level(checks: Sequence[ConfidenceCheck], score: float | None, thresholds: Thresholds) -> ConfidenceLevel:
    if any(not c.passed for c in checks if c.check in ("supported", "fits", "on_topic")):
        return "low"
    agreed = any(c.check == "agrees" for c in checks)  # high needs the quote to confirm the answer
    if agreed and all(c.passed for c in checks) and score is not None and score >= thresholds.high_from:
        return "high"
    return "medium"


def _supported(support: Sequence[SentenceSupport]) -> ConfidenceCheck:
    """Sentences with key facts must be supported; one without (a plain word: "unique [1]") counts when most of
    its words are in the passages."""
    unsupported = sum(s.status == "unsupported" for s in support)
    backed = sum(s.supported or (s.status == "neutral" and s.overlap >= WORDS_HELD) for s in support)
    if unsupported:
        return ConfidenceCheck.worded(
            "supported", False, Said("confidence.unsupported", {"n": unsupported, "of": len(support)})
        )
    if not backed:
        return ConfidenceCheck.worded("supported", False, Said("confidence.none_supported"))
    return ConfidenceCheck.worded("supported", True, Said("confidence.supported", {"n": backed, "of": len(support)}))


def _fits(question: str, reply: str) -> ConfidenceCheck:
    if leaves_slot(reply):
        return ConfidenceCheck.worded("fits", False, Said("confidence.citation_for_value"))
    kind = asked_kind(question)
    if kind is not None and not has_kind(reply, kind, question):
        return ConfidenceCheck.worded("fits", False, Said("confidence.kind_missing", {"kind": kind}))
    return ConfidenceCheck.worded("fits", True, *([Said("confidence.kind_given", {"kind": kind})] if kind else []))


def _agrees(question: str, support: Sequence[SentenceSupport], quote: str | None) -> ConfidenceCheck | None:
    """The answer says what the quoted sentence says: its key facts, or (without any) the words it adds to the
    question, are in the quote. None when nothing was quoted or the answer adds nothing to compare."""
    if not quote:
        return None
    asked_facts = PassageFacts.of(question)  # the subject the answer repeats from the question is no claim
    facts = [f for f in dict.fromkeys(f for s in support if s.status != "neutral" for f in s.facts)]
    facts = [f for f in facts if not asked_facts.has(f)]
    if facts:
        quoted = PassageFacts.of(quote)
        missing = [f for f in facts if not quoted.has(f)]
    else:
        asked = set(tokenize(question))
        said = [w for s in support for w in tokenize(strip_markers(s.text)) if w not in asked]
        if not said:
            return None
        held = set(tokenize(quote))
        missing = [w for w in dict.fromkeys(said) if w not in held]
    if missing:
        lacks = Said("confidence.quote_lacks", {"missing": ", ".join(missing[:3])})
        return ConfidenceCheck.worded("agrees", False, lacks)
    return ConfidenceCheck.worded("agrees", True, Said("confidence.quote_same"))


def _on_topic_score(
    question: str, support: Sequence[SentenceSupport], passages: Sequence[str], scorer: SentenceScorer | None
) -> float | None:
    """The best score of the question against the passage sentences the answer rests on: those supporting its
    sentences, and for a sentence without key facts the sentence of its (cited, else any) passage sharing most
    of its words."""
    if scorer is None:
        return None
    sentences = [e for s in support if s.supported for e in s.evidence]
    for s in support:
        if s.status == "neutral" and s.overlap >= WORDS_HELD:
            numbers = [n for n in s.cited if 1 <= n <= len(passages)] or range(1, len(passages) + 1)
            sentences += [best_sentence(passages[n - 1], strip_markers(s.text)) for n in numbers]
    sentences = list(dict.fromkeys(s for s in sentences if s.strip()))
    if not sentences:
        return None
    scores = [s for s in scorer(question, sentences) if s is not None]
    return max(scores) if scores else None
