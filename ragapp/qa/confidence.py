"""How sure the app is of an answer: the checks behind it, the signals a learned calibrator reads, and the
probability and level it gives.

Four checks, none of them a model call, shown to the reader as the reasons behind the level:

- ``supported``: every sentence that states a key fact has it in a passage it cites (``grounding``); an answer
  of plain words ("unique [1]") when most of its words are in the passages.
- ``fits``: the answer gives a value where the question asks for one, of the kind it asks for (``fit``).
- ``agrees``: the key facts the answer adds to the question (or, without any, its added words) are in the evidence
  sentence quoted before it, when one was; a different value there is the neighbouring-fact mistake the
  support check cannot see.
- ``on_topic``: the reranker's score of the question against the passage sentences the answer rests on; a
  sentence that holds the answer's facts but does not address the question scores low.

The level is not set by rules on these: the checks, the selection of the answering sentence (``select``), the
answer tokens' log-probabilities and the passages' scores become ``signals``, and the calibrator fitted on the
blind set's dev split (``calibrator``) turns them into P(right) and a level (docs/benchmarks.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ragapp.core.facts import PassageFacts
from ragapp.core.lang import is_chinese
from ragapp.core.types import Confidence, ConfidenceCheck, RetrievedChunk, Said, SentenceSupport
from ragapp.qa.answer_fit import asked_kind, has_kind, leaves_slot
from ragapp.qa.calibrator import Calibrator
from ragapp.qa.grounding import best_sentence, strip_markers
from ragapp.qa.select import Pick, asks_bare_fact
from ragapp.store.tokenize import tokenize

# Scores sentences for a question, best high; None for a sentence it cannot judge (see answer_check).
SentenceScorer = Callable[[str, Sequence[str]], Sequence[float | None]]

WORDS_HELD = 0.6  # a sentence without key facts is "in the passages" when this share of its words is


@dataclass(frozen=True)
class Thresholds:
    """Overrides of the calibrator's own thresholds on P(right) (None: the fitted ones)."""

    high_from: float | None = None
    stated_from: float | None = None


DEFAULT_THRESHOLDS = Thresholds()


@dataclass(frozen=True)
class Clues:
    """What the pipeline saw while answering, besides the reply and its check: the selection (None: no
    selection step), whether the answer is the picked sentence itself, the written answer's token
    log-probabilities (empty: none given), the passages in the prompt, and the model's own check of the answer
    (None: not asked)."""

    pick: Pick | None = None
    quoted: bool = False
    logprobs: tuple[float, ...] = ()
    kept: tuple[RetrievedChunk, ...] = ()
    part: bool = False
    echoed: bool = False
    verified: float | None = None  # the model's P(yes) that the cited passages state the answer (``qa.verify``)


NO_CLUES = Clues()


def assess(
    question: str,
    reply: str,
    support: Sequence[SentenceSupport],
    passages: Sequence[str],
    quote: str | None = None,
    scorer: SentenceScorer | None = None,
    calibrator: Calibrator | None = None,
    clues: Clues = NO_CLUES,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
) -> Confidence:
    """The confidence of an answer to ``question`` written as ``reply`` and checked as ``support`` against
    ``passages`` (numbered from 1); ``quote`` is the evidence sentence shown before it, ``scorer`` the
    reranker's sentence scorer (None: reranking off, and ``on_topic`` is not judged). Without a
    ``calibrator`` only the checks and signals are given, at level medium."""
    checks = [_supported(support), _fits(question, reply)]
    agrees = _agrees(question, support, quote)
    if agrees is not None:
        checks.append(agrees)
    score = _on_topic_score(question, support, passages, scorer)
    if score is not None:
        checks.append(ConfidenceCheck("on_topic", score >= ON_TOPIC_LOW, f"{score:.2f}"))
    signals = answer_signals(question, reply, support, checks, score, quote, scorer, clues)
    if calibrator is None:
        return Confidence("medium", tuple(checks), None, tuple(signals.items()))
    probability = calibrator.probability(signals)
    level = calibrator.level(signals, probability, thresholds.stated_from, thresholds.high_from)
    return Confidence(level, tuple(checks), round(probability, 4), tuple(signals.items()))


ON_TOPIC_LOW = 0.05  # the on_topic check fails under this score (a reason shown; the calibrator reads the score)


def answer_signals(
    question: str,
    reply: str,
    support: Sequence[SentenceSupport],
    checks: Sequence[ConfidenceCheck],
    on_topic: float | None,
    quote: str | None,
    scorer: SentenceScorer | None,
    clues: Clues,
) -> dict[str, float]:
    """The calibrator's inputs, each a number; a signal that can be absent has a ``*_missing`` beside it."""
    passed = {c.check: c.passed for c in checks}
    backed = sum(s.supported or (s.status == "neutral" and s.overlap >= WORDS_HELD) for s in support)
    pick = clues.pick
    top = clues.kept[0].rerank_score if clues.kept else None
    chinese = is_chinese(question)
    passage_language = [is_chinese(c.chunk.text) for c in clues.kept[:1]]
    signals: dict[str, float] = {
        "on_topic": on_topic or 0.0,
        "on_topic_missing": float(on_topic is None),
        "supported": backed / len(support) if support else 0.0,
        "unsupported": float(any(s.status == "unsupported" for s in support)),
        "fits": float(passed.get("fits", True)),
        "agrees": float(passed.get("agrees", False)),
        "agrees_missing": float("agrees" not in passed),
        "top_rerank": top or 0.0,
        "top_rerank_missing": float(top is None),
        "passages": float(len(clues.kept)),
        "chinese": float(chinese),
        "cross_language": float(bool(passage_language) and passage_language[0] != chinese),
        "asks_value": float(asked_kind(question) is not None),
        "bare_fact": float(asks_bare_fact(question)),
        "part": float(clues.part),
        "answer_words": math.log1p(len(tokenize(strip_markers(reply)))),
        "quoted": float(clues.quoted),
        "echoed": float(clues.echoed),
    }
    signals |= _passage_signals(question, reply, support, clues.kept, scorer)
    signals |= _pick_signals(question, pick, quote, scorer)
    logprobs = clues.logprobs
    signals["logprob_mean"] = sum(logprobs) / len(logprobs) if logprobs else 0.0
    signals["logprob_min"] = min(logprobs) if logprobs else 0.0
    signals["logprob_missing"] = float(not logprobs)
    signals["verified"] = clues.verified or 0.0
    signals["verified_missing"] = float(clues.verified is None)
    return {k: round(v, 4) for k, v in signals.items()}


def _passage_signals(
    question: str,
    reply: str,
    support: Sequence[SentenceSupport],
    kept: Sequence[RetrievedChunk],
    scorer: SentenceScorer | None,
) -> dict[str, float]:
    """What the passages the answer cites say of it: whether it cites the best one, the best rerank score among
    those it cites, the vector similarity of the best passage (cross-language too, where the reranker judges
    nothing), the lead of the best passage over the next, and the reranker's score of the answer itself."""
    cited = sorted({n for s in support for n in s.cited if 1 <= n <= len(kept)})
    scores = [kept[n - 1].rerank_score for n in cited]
    best = max((x for x in scores if x is not None), default=None)
    vector = kept[0].channel_scores.get("vector") if kept else None
    ranked = [c.rerank_score for c in kept[:2]]
    gap = ranked[0] - ranked[1] if len(ranked) == 2 and ranked[0] is not None and ranked[1] is not None else None
    plain = strip_markers(reply).strip()
    said = scorer(question, [plain])[0] if scorer is not None and plain else None
    return {
        "cites_best": float(1 in cited),
        "cited_rerank": best or 0.0,
        "cited_rerank_missing": float(best is None),
        "top_vector": vector or 0.0,
        "top_vector_missing": float(vector is None),
        "rerank_gap": gap or 0.0,
        "answer_on_topic": said or 0.0,
        "answer_on_topic_missing": float(said is None),
    }


def _pick_signals(
    question: str, pick: Pick | None, quote: str | None, scorer: SentenceScorer | None
) -> dict[str, float]:
    picked = pick is not None and pick.candidate is not None
    scored = pick is not None and pick.probability is not None
    pick_score = None
    if picked and scorer is not None and pick is not None and pick.candidate is not None:
        pick_score = scorer(question, [pick.candidate.text])[0]
    same = (
        picked
        and quote is not None
        and pick is not None
        and pick.candidate is not None
        and (_plain(pick.candidate.text) in _plain(quote) or _plain(quote) in _plain(pick.candidate.text))
    )
    return {
        "selected": float(pick is not None),
        "picked": float(picked),
        "pick_probability": (pick.probability or 0.0) if pick is not None else 0.0,
        "pick_margin": (pick.margin or 0.0) if pick is not None else 0.0,
        "none_probability": (pick.none_probability or 0.0) if pick is not None else 0.0,
        "pick_scores_missing": float(not scored),
        "pick_on_topic": pick_score or 0.0,
        "pick_on_topic_missing": float(pick_score is None),
        "pick_is_quote": float(same),
    }


def _plain(text: str) -> str:
    return " ".join(text.split()).lower()


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
