"""The final answer event from the model's reply: checked sentence by sentence against the passages in the
prompt (``grounding``), its [n] markers computed, or refused when its core is not in the documents; an answer
carries its confidence (``confidence``).

A reply that only repeats the question ("int64 [1]" for "Which IDL types map to int64?", "The function that
must be called first is [1].": the 1.5B model's way of not finding the value) is replaced by the passage
sentence that answers the question best, quoted with its marker: the reader gets the documents' words
instead of an echo."""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from ragapp.core.events import AnswerEvent, EvidenceEvent
from ragapp.core.facts import key_facts
from ragapp.core.lang import is_chinese
from ragapp.core.markers import cited_numbers
from ragapp.core.quotes import collapsed, quote
from ragapp.core.types import (
    Chunk,
    Citation,
    Confidence,
    ConfidenceCheck,
    ConfidenceLevel,
    RetrievedChunk,
    Said,
    SentenceSupport,
)
from ragapp.qa.calibrator import Calibrator
from ragapp.qa.confidence import DEFAULT_THRESHOLDS, NO_CLUES, Clues, SentenceScorer, Thresholds, assess
from ragapp.qa.grounding import (
    SupportRules,
    about_the_question,
    best_sentence,
    check_support,
    core_unsupported,
    model_refused,
    prose_sentences,
    strip_markers,
    without_stray_end,
)
from ragapp.qa.prompts import (
    not_sure_message,
    part_missing_message,
    part_not_sure_message,
    quoted_message,
    unsupported_message,
)
from ragapp.qa.select import Pick
from ragapp.rerank.base import Reranker
from ragapp.store.tokenize import STOPWORDS, tokenize

log = logging.getLogger(__name__)

DEFAULT_RULES = SupportRules()
CLOSEST = 3  # passages shown under a refused answer
# A marker standing where the value belongs, at the end of the reply: "The function to call first is [1]."
_VALUE_SLOT = re.compile(r"(\b(?:is|are|was|were|be|called|named)|[:：是为])\s*(?:\[\d+\]\s*)+[.。]?\s*$")
MIN_QUOTE_WORDS = 2
ECHOED = Said("confidence.echoed")  # the model's reply only repeated the question: the quote is shown instead
_CHOICE = re.compile(r"\bor\b|还是|或者", re.IGNORECASE)  # a question that offers the answers to choose from
QUOTE_CANDIDATES = 8  # sentences the scorer reads (~50 ms with the shipped reranker on 2 cores)


def checked_answer(
    question: str,
    reply: str,
    kept: Sequence[RetrievedChunk],
    rules: SupportRules = DEFAULT_RULES,
    scorer: SentenceScorer | None = None,
    evidence: EvidenceEvent | None = None,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    calibrator: Calibrator | None = None,
    clues: Clues = NO_CLUES,
) -> AnswerEvent:
    """The answer to ``question`` from ``reply``, written from ``kept`` (numbered from 1 in the prompt). A
    reply that echoes the question is replaced by ``evidence`` (the quote already shown) or, without one, by
    the quote ``scorer`` picks (``best_quote``); ``calibrator`` (with ``thresholds`` overriding its own) sets
    its confidence from the checks and ``clues`` (``confidence.assess``)."""
    said = bool(tokenize(strip_markers(reply)))  # "[1]" alone: the model found nothing to say
    clues = replace(clues, kept=tuple(kept))
    if said and echoes(question, reply):
        evidence = evidence or evidence_for(question, kept, scorer)
        if evidence is not None:
            return quoted_answer(question, evidence, kept, scorer, calibrator, replace(clues, echoed=True), thresholds)
    ocr = [c.chunk.ocr_confidence is not None for c in kept]
    support = tuple(about_the_question(question, check_support(reply, [as_shown(c) for c in kept], rules, ocr)))
    if not said or core_unsupported(support):
        return _refusal(question, kept, support)
    text = without_stray_end("".join(s.text for s in support).strip())
    refused = model_refused(support)
    quote = evidence.quote if evidence is not None else None
    shown = [as_shown(c) for c in kept]
    confidence = (
        None if refused else assess(question, reply, support, shown, quote, scorer, calibrator, clues, thresholds)
    )
    return AnswerEvent(
        text, _citations(text, kept, support), grounded=True, abstained=refused, support=support, confidence=confidence
    )


def picked_answer(
    question: str,
    pick: Pick,
    kept: Sequence[RetrievedChunk],
    scorer: SentenceScorer | None = None,
    evidence: EvidenceEvent | None = None,
    calibrator: Calibrator | None = None,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
) -> AnswerEvent:
    """The picked sentence itself as the answer (a question that asks for a bare fact), quoted with its
    marker and highlighted in its passage."""
    assert pick.candidate is not None
    number, raw = pick.candidate.passage, pick.candidate.text
    passage = kept[number - 1]
    shown = quote(raw, passage.chunk.text) or collapsed(raw)
    citation = Citation(number, passage.chunk, passage.rerank_score, (raw,))
    clues = Clues(pick=pick, quoted=True, kept=tuple(kept))
    return quoted_answer(
        question, EvidenceEvent(shown, citation), kept, scorer, calibrator, clues, thresholds, evidence
    )


def withheld(question: str, answer: AnswerEvent, kept: Sequence[RetrievedChunk], pick: Pick | None) -> AnswerEvent:
    """``answer`` said as "not sure" when its confidence is low: the passage most likely to hold the answer
    first (the picked sentence's, else the one the answer cites first, else the best), then those the withheld
    guess cites, so its markers still point at them. Other answers pass unchanged."""
    if answer.confidence is None or answer.confidence.level != "low" or answer.abstained or answer.not_sure:
        return answer
    likeliest = _likeliest(kept, pick, answer.citations)
    rest = tuple(c for c in answer.citations if c.number != likeliest.number)
    return replace(
        answer, text=not_sure_message(question), citations=(likeliest, *rest), not_sure=True, guess=answer.text
    )


def not_sure_answer(
    question: str, kept: Sequence[RetrievedChunk], pick: Pick | None, evidence: EvidenceEvent | None = None
) -> AnswerEvent:
    """No sentence of the passages answers (the model picked none): "not sure", with the passage most likely to
    hold the answer (the quote's, else the best) and no guess."""
    quoted = (evidence.citation,) if evidence is not None else ()
    likeliest = _likeliest(kept, pick, quoted)
    check = ConfidenceCheck.worded("selected", False, Said("confidence.none_selected"))
    confidence = Confidence("low", (check,), None, ())
    return AnswerEvent(not_sure_message(question), (likeliest,), grounded=True, confidence=confidence, not_sure=True)


def _likeliest(kept: Sequence[RetrievedChunk], pick: Pick | None, cited: Sequence[Citation]) -> Citation:
    if pick is not None and pick.candidate is not None:
        number, raw = pick.candidate.passage, pick.candidate.text
        return Citation(number, kept[number - 1].chunk, kept[number - 1].rerank_score, (raw,))
    if cited:
        return cited[0]
    best = kept[0]
    return Citation(1, best.chunk, best.rerank_score, ())


def _refusal(question: str, kept: Sequence[RetrievedChunk], support: Sequence[SentenceSupport]) -> AnswerEvent:
    closest = tuple(
        Citation(n, c.chunk, c.rerank_score, (best_sentence(c.chunk.text, question),))
        for n, c in enumerate(kept[:CLOSEST], start=1)
    )
    return AnswerEvent(unsupported_message(question), closest, grounded=False, abstained=True, support=tuple(support))


def composed(question: str, parts: Sequence[str], answers: Sequence[AnswerEvent]) -> AnswerEvent:
    """One answer to a question of several ``parts`` from each part's checked answer, in order: a part the
    documents do not answer (or no sentence answers: "not sure") says so on a line of its own; the citations of
    every answered part (the parts share the passages' numbers); the lowest of their confidences (its
    probability and signals), low when a part went unanswered. Refused (or not sure) only when every part was.
    A part whose answer repeats an earlier part's word for word answers nothing of its own (the small model
    copies its last answer for the next part): it is "not sure"."""
    answers = _without_repeats(answers)
    answered = [a for a in answers if not (a.abstained or a.not_sure)]
    if not answered:
        return answers[0]
    pairs = zip(parts, answers, strict=True)
    lines = [
        a.text
        if a in answered
        else part_not_sure_message(question, p)
        if a.not_sure
        else part_missing_message(question, p)
        for p, a in pairs
    ]
    cited: dict[int, Citation] = {}
    for citation in (c for a in answered for c in a.citations):
        held = cited.get(citation.number)
        highlights = held.highlights + citation.highlights if held else citation.highlights
        cited[citation.number] = replace(citation, highlights=tuple(dict.fromkeys(highlights)))
    checks = [
        ConfidenceCheck.worded(c.check, c.passed, *_of_part(n, c))
        for n, a in enumerate(answers, start=1)
        if a.confidence is not None
        for c in a.confidence.checks
    ]
    assessed = [a.confidence for a in answered if a.confidence is not None]
    lowest = min(assessed, key=lambda c: (_LEVELS.index(c.level), c.probability or 0.0)) if assessed else None
    level: ConfidenceLevel | None = lowest.level if lowest is not None else None
    missing = len(answers) - len(answered)
    if missing:
        lacking = Said("confidence.parts_missing", {"n": missing, "of": len(answers)})
        checks.append(ConfidenceCheck.worded("parts", False, lacking))
        level = "low"
    confidence = None
    if level is not None:
        probability, signals = (lowest.probability, lowest.signals) if lowest is not None else (None, ())
        confidence = Confidence(level, tuple(checks), probability, signals)
    return AnswerEvent(
        "\n\n".join(lines),
        tuple(cited.values()),
        grounded=any(a.grounded for a in answered),
        support=tuple(s for a in answers for s in a.support),
        confidence=confidence,
    )


_LEVELS: tuple[ConfidenceLevel, ...] = ("low", "medium", "high")


def _without_repeats(answers: Sequence[AnswerEvent]) -> list[AnswerEvent]:
    """``answers`` with each stated one that says what an earlier stated one said (markers, case, spacing and
    punctuation aside) made "not sure"."""
    said: set[str] = set()
    kept = []
    for answer in answers:
        if not (answer.abstained or answer.not_sure):
            words = " ".join(re.findall(r"\w+", strip_markers(answer.text).casefold()))
            if words in said:
                answer = replace(answer, not_sure=True)
            said.add(words)
        kept.append(answer)
    return kept


def _of_part(n: int, check: ConfidenceCheck) -> tuple[Said, ...]:
    """What ``check`` saw of the question's part ``n``, as records: its own after the part's number (a detail
    with none is a figure: the on-topic score)."""
    if not check.detail:
        return (Said("confidence.part_only", {"n": n}),)
    if not check.said:
        return (Said("confidence.part_figure", {"n": n, "figure": check.detail}),)
    return (Said("confidence.part", {"n": n}), *check.said)


def echoes(question: str, reply: str) -> bool:
    """The reply says nothing the question did not: every word of it, markers aside, is one of the question's,
    and it is a word or two ("int64 [1]") or ends with a marker where the value belongs ("... is [1].").
    (A longer reply of the question's words can be an answer: "6 becomes [B; C]" when the question names
    B and C.)"""
    plain = strip_markers(reply)
    words = tokenize(plain)
    if not words:
        return True
    if not set(words) <= set(tokenize(question)):
        return False
    if not is_chinese(plain) and not raw_words(plain) <= raw_words(question):
        return False  # "locales-all" answers a question about "all ... locale data": a new name, not an echo
    if _VALUE_SLOT.search(reply):
        return True
    return len(words) <= 2 and not _CHOICE.search(question)  # "Kestrel Run" answers "Kestrel Run or X?"


def raw_words(text: str) -> set[str]:
    """Words as ``echoes`` reads them: names kept whole ("locales-all", "2.5.0"), stop words aside."""
    return {w for w in re.findall(r"[\w][\w.+-]*[\w]|\w", text.lower()) if w not in STOPWORDS}


def best_quote(
    question: str, kept: Sequence[RetrievedChunk], scorer: SentenceScorer | None = None
) -> tuple[int, str] | None:
    """The passage sentence that best answers the question, with the sentence before it when that one shares
    a word of the question too (it often names the subject: "Initialize the COM library. Must be called once
    before ..."): its passage number and its text as the passage has it (so it highlights there); None when no
    sentence shares ``MIN_QUOTE_WORDS`` of the question's words.

    Sentences sharing the most words are the candidates: each word weighted by how few of the passages'
    sentences hold it (twice for a key fact of the question), and the words of the document's own name not at
    all (they name the subject every sentence shares: a footer "Lumen V2 Pro User Manual - Page 4" would
    otherwise beat the line that explains the error code asked about). ``scorer`` (the reranker) picks among
    the best ``QUOTE_CANDIDATES``."""
    asked = set(tokenize(question))
    split = [prose_sentences(p.chunk.text) for p in kept]
    words = [
        [(asked - set(tokenize(p.chunk.source))) & set(tokenize(piece)) for piece in pieces]
        for p, pieces in zip(kept, split, strict=True)
    ]
    count = sum(len(w) for w in words)
    holding = Counter(word for per_passage in words for shared in per_passage for word in shared)
    facts = set(key_facts(question))  # "E07", "ggsearch36": what the question is about, doubled
    weight = {word: math.log(1 + count / n) * (2 if word in facts else 1) for word, n in holding.items()}
    ranked: list[tuple[float, int, str]] = []  # (lexical score, -number, the passage's text quoted)
    for number, (pieces, shared) in enumerate(zip(split, words, strict=True), start=1):
        for i, piece in enumerate(pieces):
            raw = pieces[i - 1] + piece if i and shared[i - 1] else piece
            # a sentence the chunk cut off with no end to shorten it to is no quote
            if len(shared[i]) >= MIN_QUOTE_WORDS and quote(raw, kept[number - 1].chunk.text) is not None:
                ranked.append((sum(weight[w] for w in shared[i]), -number, raw.strip()))
    if not ranked:
        return None
    ranked.sort(reverse=True)
    best = ranked[0]
    if scorer is not None:
        candidates = ranked[:QUOTE_CANDIDATES]
        scores = scorer(question, [raw for _, _, raw in candidates])
        judged = [(s, c) for s, c in zip(scores, candidates, strict=True) if s is not None]
        if judged:
            best = max(judged, key=lambda pair: (pair[0], pair[1][:2]))[1]
    return -best[1], best[2]


def reranker_scorer(reranker: Reranker) -> SentenceScorer | None:
    """Sentences scored by ``reranker`` as if they were passages (None when reranking is off); a sentence it
    does not judge (another language) gets None, and so does every one when the reranker fails (the shared
    words then choose, as without a reranker: a failing reranker must not cost the answer)."""
    if not reranker.enabled:
        return None

    def score(question: str, sentences: Sequence[str]) -> list[float | None]:
        passages = [RetrievedChunk(Chunk(f"q-{i}", "q", i, s, ""), 0.0, {}, {}) for i, s in enumerate(sentences)]
        try:
            by_id = {c.chunk.chunk_id: c.rerank_score for c in reranker.rerank(question, passages)}
        except Exception:
            log.warning("the reranker failed on the evidence sentences; choosing by shared words", exc_info=True)
            return [None] * len(passages)
        return [by_id.get(p.chunk.chunk_id) for p in passages]

    return score


def evidence_for(
    question: str, kept: Sequence[RetrievedChunk], scorer: SentenceScorer | None = None
) -> EvidenceEvent | None:
    """What to show while the model reads the passages: the best quote, with its citation."""
    found = best_quote(question, kept, scorer)
    if found is None:
        return None
    number, raw = found
    passage = kept[number - 1]
    shown = quote(raw, passage.chunk.text) or collapsed(raw)  # it is one: best_quote took only those
    return EvidenceEvent(shown, Citation(number, passage.chunk, passage.rerank_score, (raw,)))


def quoted_answer(
    question: str,
    evidence: EvidenceEvent,
    kept: Sequence[RetrievedChunk] = (),
    scorer: SentenceScorer | None = None,
    calibrator: Calibrator | None = None,
    clues: Clues = NO_CLUES,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    shown_first: EvidenceEvent | None = None,
) -> AnswerEvent:
    """The quote as the answer, with its marker, highlighted in its passage; its confidence from the
    calibrator (an echo replaced: ``clues.echoed``, its "fits" check failed)."""
    number, (raw,) = evidence.citation.number, evidence.citation.highlights
    text = quoted_message(question, evidence.quote, number)
    support = SentenceSupport(text, "supported", cited=(number,), passages=(number,), overlap=1.0, evidence=(raw,))
    shown = [as_shown(c) for c in kept]
    first = shown_first.quote if shown_first is not None else None
    assessed = assess(question, text, (support,), shown, first, scorer, calibrator, clues, thresholds)
    checks = assessed.checks
    if clues.echoed:
        checks = (ConfidenceCheck.worded("fits", False, ECHOED), *(c for c in checks if c.check != "fits"))
    level = assessed.level if calibrator is not None or not clues.echoed else "low"
    confidence = replace(assessed, level=level, checks=checks)
    return AnswerEvent(text, (evidence.citation,), grounded=True, support=(support,), confidence=confidence)


def as_shown(passage: RetrievedChunk) -> str:
    """A passage as the model read it: the prompt shows its heading beside its number (``format_context``), and
    the model may take a fact from it ("Version 2.5.0" heads a list that never repeats the number). A blank line
    after the heading: passages are cut into sentences as prose (a single line break inside a sentence), and the
    heading glued to the first sentence left that sentence unmatched in the text it highlights."""
    chunk = passage.chunk
    return f"{chunk.heading}\n\n{chunk.text}" if chunk.heading else chunk.text


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
