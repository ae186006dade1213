"""Scoring one question of an answer set, and the figures per question type. Nothing here calls a model.

- ``abstained``: the app said the documents do not hold the answer. The engine's own signals first
  (``AnswerEvent.abstained``: the support check refused an answer whose facts are in no passage, or nothing
  relevant was found; ``grounded`` False: the not-found message was shown), then the model
  saying so in its own words, citing nothing, over passages that did not hold it ("is not mentioned in the
  passages", "资料中没有提到"). An answer that cites a passage is never an abstention, so a correct answer that
  happens to say "does not include" still counts as an answer.
- correct: an answerable question whose answer holds every must_contain entry (any one of a nested list),
  case-insensitive, citation markers removed, and which is not an abstention.
- citation on evidence: a cited chunk is on an evidence page (PDF) or under an evidence heading (HTML);
  evidence in prompt: a chunk of a ``RetrievalEvent`` (what the answer was written from) is.
- confidence: per level (high, medium, low), the share of answers carrying it and the share of those that are
  right (an answered unanswerable question is wrong): "high" should be right 95% of the time.
- quote correct: the evidence sentence quoted before the answer holds every must_contain entry (of the
  answerable questions that got a quote); trap stated: a near-miss question answered, wrongly, with one of
  its ``trap`` values (the neighbouring fact).
- truthfulness (``ragapp.testcases.truthfulness``, as CRAG scores): each row is accurate, missing or
  hallucinated (``Row.verdict``). An abstention, a "not sure", a clarifying question or no answer at all is no
  stated answer: missing on an answerable question, an honest refusal (accurate) on an unanswerable one.
- not sure (``Row.not_sure``): the app withheld its answer as too unsure to state, showing the passage most
  likely to hold it (the API's ``answered: false``). It is no abstention (the app does not say the documents
  lack the answer), so ``abstained`` stays False and ``correct`` False; ``answer`` keeps the withheld guess.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from ragapp.core.events import (
    EngineEvent,
)
from ragapp.core.turn import Turn
from ragapp.core.types import Chunk
from ragapp.qa.prompts import NOT_FOUND_EN, NOT_FOUND_ZH
from ragapp.testcases.truthfulness import Tally, Verdict, verdict
from ragbench.answers.answer_set import Evidence, Needle, Question
from ragbench.eval.answers import median, strip_citations

# The model declining over passages that do not hold the answer, in the phrasings the answer prompt invites.
_DECLINE = re.compile(
    r"(could not|couldn't|cannot|can't|unable to) find|(is|are) not (mentioned|provided|specified|stated|given|"
    r"included|covered|described)|(does|do) not (mention|provide|specify|say|state|contain|include|cover|describe)|"
    r"no (information|mention|relevant)|not in the (knowledge base|passages|documents|provided)|"
    r"没有(找到|相关|提到|提及|说明|给出|包含)|未(提及|提到|说明|找到|包含)|无法(回答|确定|找到)|不包含",
    re.IGNORECASE,
)


def abstained(text: str, grounded: bool, cited: bool = False) -> bool:
    """The app said the knowledge base does not hold the answer (see the module docstring): ``grounded`` and
    ``cited`` as the answer's ``AnswerEvent`` gives them (cited: it has citations)."""
    plain = strip_citations(text)
    if not grounded or plain in (NOT_FOUND_EN, NOT_FOUND_ZH):
        return True
    return not cited and bool(_DECLINE.search(plain))


def contains_all(text: str, needles: Sequence[Needle]) -> bool:
    """Every entry appears in ``text`` (case-insensitive, citations removed); an entry of several strings is any-of."""
    plain = strip_citations(text).lower()
    return bool(needles) and all(any(n.lower() in plain for n in needle) for needle in needles)


def _norm(heading: str | None) -> str:
    return "".join((heading or "").split()).lower()  # "1.2.Pages" and "1.2. Pages" are one heading


def on_evidence(chunk: Chunk, doc_id: str | None, evidence: Iterable[Evidence]) -> bool:
    """``chunk`` (of set document ``doc_id``) lies on an evidence page or under an evidence heading (or a heading
    path that ends with it)."""
    for ev in evidence:
        if ev.doc != doc_id:
            continue
        if ev.page is not None and chunk.page == ev.page:
            return True
        if ev.section is not None and _norm(chunk.heading).endswith(_norm(ev.section)):
            return True
    return False


@dataclass
class Seen:
    """What one ``ask`` showed."""

    answer: str = ""
    grounded: bool = False
    answered: bool = False  # an AnswerEvent came (not a clarifying question)
    refused: bool = False  # the AnswerEvent says the app abstained (support check, nothing found)
    clarified: bool = False
    cited: list[Chunk] = field(default_factory=list)
    prompt: list[Chunk] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    error: str | None = None
    ttft_s: float | None = None
    evidence_s: float | None = None  # when the quoted evidence sentence came (before the model's first token)
    quote: str = ""  # that sentence
    confidence: str = ""  # the answer's confidence level ("" when not assessed)
    seconds: float = 0.0
    not_sure: bool = False  # the app said "not sure" instead of stating its answer (see the module docstring)
    probability: float | None = None  # the calibrated P(right) of the answer
    signals: dict[str, float] = field(default_factory=dict)  # what the calibrator read
    picked: str = ""  # the sentence the selection picked ("none": none)


def watch(events: Iterable[EngineEvent], clock: Callable[[], float] = time.perf_counter) -> Seen:
    """Read one question's events, timing the first token and the whole answer from the first event asked for."""
    turn = Turn.of(events, clock=clock)
    answer, clarify = turn.answer, turn.clarify
    confidence = answer.confidence if answer is not None else None
    selected = next((s for s in turn.stages if s.stage == "select" and s.status == "finished"), None)
    shown = answer.guess if answer is not None and answer.not_sure else answer.text if answer is not None else ""
    return Seen(
        answer=shown if answer is not None else clarify.question if clarify is not None else "",
        grounded=answer is not None and answer.grounded,
        answered=answer is not None,
        refused=answer is not None and answer.abstained,
        clarified=clarify is not None,
        cited=[c.chunk for c in turn.citations],
        prompt=list(turn.context),
        notices=[n.message for n in turn.notices],
        error=turn.failure("generate"),
        ttft_s=turn.first_token_s,
        evidence_s=turn.evidence_s,
        quote=turn.evidence.quote if turn.evidence is not None else "",
        confidence=confidence.level if confidence is not None else "",
        seconds=turn.now(),
        not_sure=answer is not None and answer.not_sure,
        probability=confidence.probability if confidence is not None else None,
        signals=dict(confidence.signals) if confidence is not None else {},
        picked=str(selected.detail.get("picked", "")) if selected is not None else "",
    )


@dataclass(frozen=True)
class Row:
    id: str
    type: str
    lang: str
    question: str
    answerable: bool
    answer: str
    grounded: bool
    clarified: bool
    correct: bool
    abstained: bool
    citation_on_evidence: bool
    evidence_in_prompt: bool
    cited: tuple[str, ...]  # "name p. 3" / "name · heading"
    prompt: tuple[str, ...]
    ttft_s: float | None
    seconds: float
    notices: tuple[str, ...] = ()
    error: str | None = None
    evidence_s: float | None = None
    tags: tuple[str, ...] = ()
    kind: str = ""
    split: str = ""
    trap_stated: bool = False  # a near-miss question answered with the neighbouring value instead
    quote: str = ""  # the evidence sentence quoted before the answer
    quote_correct: bool = False  # that quote holds the gold answer (every must_contain entry)
    confidence: str = ""  # high, medium, low; "" for a refusal or when not assessed
    not_sure: bool = False  # "not sure" instead of an answer: no answer stated, ``answer`` is the withheld guess
    guess_right: bool = False  # the answer, stated or withheld, holds the gold answer (what the calibrator learns)
    probability: float | None = None  # the calibrated P(right) the app gave it
    signals: dict[str, float] = field(default_factory=dict)  # what the calibrator read (``ragapp.qa.confidence``)
    picked: str = ""  # the sentence the selection picked, "none", or "" without a selection
    picked_right: bool = False  # that sentence holds the gold answer (the answer had it been the quote)

    @property
    def stated(self) -> bool:
        """An answer was stated: not an abstention, a "not sure" or a question back, and not empty."""
        return not (self.abstained or self.not_sure or self.clarified) and bool(self.answer.strip())

    @property
    def verdict(self) -> Verdict:
        """Accurate, missing or hallucinated, as CRAG scores an answer."""
        return verdict(self.answerable, self.stated, self.correct)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Row:
        """A row as a result file holds it (``as_json``); fields a later version added take their defaults, and
        fields this version does not know are left out."""
        known = {f.name for f in fields(cls)}
        values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in known}
        values["signals"] = dict(data.get("signals") or {})
        return cls(**values)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["cited"], data["prompt"], data["notices"] = list(self.cited), list(self.prompt), list(self.notices)
        data["tags"] = list(self.tags)
        data["ttft_s"] = None if self.ttft_s is None else round(self.ttft_s, 3)
        data["evidence_s"] = None if self.evidence_s is None else round(self.evidence_s, 3)
        data["seconds"] = round(self.seconds, 3)
        return data


def _where(chunk: Chunk) -> str:
    return f"{chunk.source} · {chunk.location}" if chunk.location else chunk.source


def score(question: Question, seen: Seen, set_doc_of: Mapping[str, str]) -> Row:
    """One row; ``set_doc_of`` maps the catalog's document ids to the set's document ids."""
    declined = seen.answered and (seen.refused or abstained(seen.answer, seen.grounded, bool(seen.cited)))
    withheld = declined or seen.not_sure  # no answer stated: neither right nor wrong, and nothing cited
    correct = question.answerable and not withheld and contains_all(seen.answer, question.must_contain)
    plain = strip_citations(seen.answer).lower()

    def hits(chunks: Sequence[Chunk]) -> bool:
        return question.answerable and any(on_evidence(c, set_doc_of.get(c.doc_id), question.evidence) for c in chunks)

    return Row(
        id=question.id,
        type=question.type,
        lang=question.lang,
        question=question.question,
        answerable=question.answerable,
        answer=seen.answer,
        grounded=seen.grounded,
        clarified=seen.clarified,
        correct=correct,
        abstained=declined,
        citation_on_evidence=not withheld and hits(seen.cited),  # a refusal's closest passages are no citation
        evidence_in_prompt=hits(seen.prompt),
        cited=tuple(_where(c) for c in seen.cited),
        prompt=tuple(_where(c) for c in seen.prompt),
        ttft_s=seen.ttft_s,
        evidence_s=seen.evidence_s,
        seconds=seen.seconds,
        notices=tuple(seen.notices),
        error=seen.error,
        tags=question.tags,
        kind=question.kind,
        split=question.split,
        quote=seen.quote,
        confidence="" if declined else seen.confidence,
        not_sure=seen.not_sure,
        guess_right=question.answerable and not declined and contains_all(seen.answer, question.must_contain),
        probability=seen.probability,
        signals=seen.signals,
        picked=seen.picked,
        picked_right=question.answerable and contains_all(seen.picked, question.must_contain),
        quote_correct=question.answerable and contains_all(seen.quote, question.must_contain),
        trap_stated=not correct and not withheld and any(value.lower() in plain for value in question.trap),
    )


def _share(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def figures(rows: Sequence[Row]) -> dict[str, Any]:
    """The figures of ``rows``: shares of the answerable ones (correct, false abstentions, citations and evidence),
    abstentions of the unanswerable ones, the verdicts and truthfulness of all, and median seconds."""
    answerable = [r for r in rows if r.answerable]
    unanswerable = [r for r in rows if not r.answerable]
    ttft = [r.ttft_s for r in rows if r.ttft_s is not None]
    return {
        "questions": len(rows),
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "correct": _share([r.correct for r in answerable]),
        "abstained": _share([r.abstained for r in rows]),
        "false_abstention": _share([r.abstained for r in answerable]),
        "unanswerable_abstained": _share([r.abstained for r in unanswerable]),
        **Tally.of(r.verdict for r in rows).as_json(),
        "not_sure": sum(r.not_sure for r in rows),
        "citation_on_evidence": _share([r.citation_on_evidence for r in answerable]),
        "evidence_in_prompt": _share([r.evidence_in_prompt for r in answerable]),
        **_calibration(rows),
        "quote_correct": _share([r.quote_correct for r in answerable if r.quote]),
        "trap_stated": _share([r.trap_stated for r in answerable if "near-miss" in r.tags]),
        "clarified": sum(r.clarified for r in rows),
        "errors": sum(r.error is not None for r in rows),
        "evidence_s_p50": median([r.evidence_s for r in rows if r.evidence_s is not None]),
        "ttft_s_p50": median(ttft),
        "seconds_p50": median([r.seconds for r in rows]),
    }


def _calibration(rows: Sequence[Row]) -> dict[str, Any]:
    """Per confidence level: the share of the answers (refusals aside) that carry it, and the share of those that
    are right (an unanswerable question answered is never right)."""
    answered = [r for r in rows if r.confidence]
    out: dict[str, Any] = {}
    for level in ("high", "medium", "low"):
        those = [r for r in answered if r.confidence == level]
        out[f"{level}_share"] = _share([r.confidence == level for r in answered])
        out[f"{level}_right"] = _share([r.correct for r in those])
    return out


def summarize(rows: Sequence[Row], types: Sequence[str]) -> dict[str, Any]:
    """Figures per question type (in ``types`` order, those present), per language, per tag, per kind of
    unanswerable question, and overall."""
    return {
        "by_type": {t: figures([r for r in rows if r.type == t]) for t in types if any(r.type == t for r in rows)},
        "by_lang": {lang: figures([r for r in rows if r.lang == lang]) for lang in sorted({r.lang for r in rows})},
        "by_tag": {
            tag: figures([r for r in rows if tag in r.tags]) for tag in sorted({g for r in rows for g in r.tags})
        },
        "by_kind": {k: figures([r for r in rows if r.kind == k]) for k in sorted({r.kind for r in rows} - {""})},
        "overall": figures(rows),
    }
