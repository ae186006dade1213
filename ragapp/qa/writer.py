"""Writing the answer from the passages kept: the model's reply streamed as tokens (its wait in the model's
queue shown), screened, checked against the passages and cited; part by part for a question of several parts.
Workflow mode (``pipeline``) and the agent's final answer both end here."""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TypeVar

from ragapp.config import Settings
from ragapp.core.errors import LLMError
from ragapp.core.events import (
    AnswerEvent,
    CheckedTextEvent,
    EngineEvent,
    EvidenceEvent,
    NoticeEvent,
    TokenEvent,
    WaitEvent,
)
from ragapp.core.lang import is_chinese
from ragapp.core.markers import with_numbers
from ragapp.core.stages import VERIFIED_YES, Stage, begin
from ragapp.core.tokens import estimate_tokens
from ragapp.core.types import ChatTurn, Citation, RetrievedChunk, Said
from ragapp.models.llm import LLM, ScoredPiece, Waiting, holds_grammar, stream_with_waits
from ragapp.qa.answer_check import (
    as_shown,
    checked_answer,
    composed,
    evidence_for,
    not_sure_answer,
    picked_answer,
    reranker_scorer,
    withheld,
)
from ragapp.qa.calibrator import SHIPPED, Calibrator, load_calibrator
from ragapp.qa.checked_draft import CheckedDraft
from ragapp.qa.citations import citations_for, renumbered
from ragapp.qa.condense import condense
from ragapp.qa.confidence import Clues, SentenceScorer, Thresholds
from ragapp.qa.grounding import SupportRules
from ragapp.qa.injection import screen_passages, screen_reply
from ragapp.qa.prompt_fit import prompt_parts
from ragapp.qa.prompts import answer_messages, answer_slot, memory_block, not_found_message, passages_only_message
from ragapp.qa.select import (
    FREE_TOKENS,
    Pick,
    asks_bare_fact,
    candidates,
    enough,
    grammar,
    read_pick,
    selection_messages,
    selection_slot,
    window,
)
from ragapp.qa.verify import read_verdict, verify_call
from ragapp.rerank.base import Reranker

log = logging.getLogger(__name__)

T = TypeVar("T")
Steps = Generator[EngineEvent, None, T]  # a step that streams events, then returns its result

WAIT_TICK_S = 1.0  # how often a waiting answer says so (the UI's live timer)


class AnswerWriter:
    def __init__(self, llm: LLM, reranker: Reranker, settings: Settings, calibrator: Calibrator | None = None) -> None:
        self._llm = llm
        self._reranker = reranker
        self._settings = settings
        self._calibrator = calibrator or load_calibrator(settings.workflow.calibrator or SHIPPED)

    def write(
        self,
        question: str,
        kept: Sequence[RetrievedChunk],
        recent: Sequence[ChatTurn],
        summary: str,
        parts: Sequence[str] = (),
        memories: Sequence[str] = (),
        *,
        condense_keep: int | None = None,
        fit: Mapping[str, object] | None = None,
    ) -> Iterator[EngineEvent]:
        """The answer from ``kept``: "not in the knowledge base" without passages; the passages themselves
        when the model fails; else the model's answer checked against the passages (see ``answer_check``).
        A question of several ``parts`` is answered part by part from the same passages, each part checked on
        its own, and the answers put together (``composed``): the 1.5B model asked both parts at once answered
        one of them (0 of 13 two-part questions right on the blind set's dev split). ``memories``: the asker's
        recalled memories, in their own part of the prompt (never passages: never cited). ``condense_keep``: the
        sentences each passage after the best keeps in the prompt, as the budget chose (default: the setting);
        ``fit``: the budget and what was compressed to fit (``FittedPrompt.detail``), for the trace."""
        if not kept:
            text = not_found_message(question)
            yield TokenEvent(text)
            yield AnswerEvent(text, (), grounded=False, abstained=True)
            return
        kept, warnings = screen_passages(question, kept)  # every step below sees the passages without them
        yield from warnings
        scorer = reranker_scorer(self._reranker)
        evidence = evidence_for(question, kept, scorer) if self._settings.workflow.show_evidence else None
        if evidence is not None:
            yield evidence  # the documents' own words while the model reads the passages
        keep = self._settings.workflow.condense_keep if condense_keep is None else condense_keep
        condensed = condense(question, kept, keep)
        memory_text = memory_block(memories, is_chinese(question), self._settings.memory.max_tokens)
        answers: list[AnswerEvent] = []
        picks: list[Pick | None] = []
        earlier: list[tuple[str, str]] = []  # the parts answered so far, with the model's replies
        for part in parts if len(parts) > 1 else (None,):
            if answers:
                yield TokenEvent("\n\n")
            messages = answer_messages(
                question, condensed, recent, summary, part, memories, self._settings.memory.max_tokens, earlier
            )
            prompt_tokens = sum(estimate_tokens(m.content) for m in messages)
            instructions = answer_messages(question, condensed)[0].content  # the rules without the summary
            detail: dict[str, object] = {
                "model": self._llm.name,
                "passages": len(kept),
                "prompt tokens": prompt_tokens,
                **(fit or {}),
                "prompt parts": prompt_parts(part or question, instructions, condensed, recent, summary, memory_text),
            }
            if part is not None:
                detail["part"] = part
            if memories:
                detail["memories"] = len(memories)
            asked = part or question
            shown_first = evidence if part is None else None  # the quote shown first was chosen for the whole
            pick = None
            if self._selects:
                pick = yield from self._select(asked, messages, condensed)
            picks.append(pick)
            if pick is not None and pick.none:
                answers.append(not_sure_answer(question, kept, pick, shown_first))
                continue
            if pick is not None and pick.candidate is not None and asks_bare_fact(asked):
                answer = picked_answer(asked, pick, kept, scorer, shown_first, self._calibrator, self._thresholds)
                yield TokenEvent(answer.text)
                answers.append(answer)
                continue
            clues = Clues(pick=pick, part=part is not None)
            if pick is not None and pick.candidate is not None:  # written from the picked sentence alone
                number = pick.candidate.passage
                window_text = window(candidates(condensed), pick.candidate)
                messages = answer_messages(
                    question, [replace(kept[number - 1], chunk=replace(kept[number - 1].chunk, text=window_text))],
                    recent, summary, part, memories, self._settings.memory.max_tokens,
                )  # fmt: skip
                detail |= {"written from": f"[{number}] {window_text}"}
            # the reply checked as it streams; a part's, or one written from a picked sentence, after
            draft = self._draft(question, kept) if part is None and pick is None else None
            scored = yield from _drafted(self.generate_scored(messages, detail, answer_slot(question)), draft)
            if scored is None:
                text = passages_only_message(question, len(kept))
                yield TokenEvent(text)
                citations = tuple(Citation(n, c.chunk, c.rerank_score) for n, c in enumerate(kept, start=1))
                yield AnswerEvent(text, citations, grounded=True)
                return
            reply, logprobs = scored
            if part is not None:
                earlier.append((part, reply))
            if pick is not None and pick.candidate is not None:
                reply = with_numbers(reply, {1: pick.candidate.passage})  # its one passage is [n] among ``kept``
            verified = None  # the model's check of a whole answer, where its backend scores tokens (it read them)
            if self._settings.workflow.verify and part is None and pick is None and logprobs:
                verified = yield from self._verify(asked, reply, kept)
            clues = replace(clues, logprobs=logprobs, verified=verified)
            answer, warnings = checked_reply(
                asked, reply, kept, scorer, shown_first, clues, self._settings, self._calibrator
            )
            yield from warnings
            answers.append(answer)
        yield final_answer(question, parts, answers, kept, picks, self._settings.workflow.not_sure)

    def _select(
        self, question: str, messages: list[ChatTurn], condensed: Sequence[RetrievedChunk]
    ) -> Steps[Pick | None]:
        """The sentence of the passages that answers ``question`` as the model picks it (``select``), or None
        when the selection failed (the answer is then written from all the passages, as without it)."""
        found = candidates(condensed)
        if not found:
            return None
        stage = yield from begin("select", {"model": self._llm.name, "sentences": len(found)})

        def call() -> Iterator[str]:
            return self._llm.stream_chat(
                selection_messages(messages, question), max_tokens=FREE_TOKENS, temperature=0.0,
                prefix_slot=selection_slot(question), grammar=grammar(found), scores=True,
            )  # fmt: skip

        pieces = yield from self._short_call(stage, call, lambda got: enough("".join(got), found, len(got)))
        if pieces is None:
            return None
        pick = read_pick(pieces, found)
        said: dict[str, object] = {"picked": "none" if pick.none else pick.candidate.text if pick.candidate else ""}
        if pick.probability is not None:
            said["probability"] = round(pick.probability, 3)
        if pick.failed:
            unfit = Said("stage.no_sentence", {"reply": f"{pick.reply[:80]!r}"})
            yield stage.failed(unfit.english, said, unfit)
            return None
        yield stage.finished(said)
        return pick

    def _verify(self, question: str, reply: str, kept: Sequence[RetrievedChunk]) -> Steps[float | None]:
        """The model's probability that the passages ``reply`` cites state it as the answer to ``question``
        (``ragapp.qa.verify``), or None when the backend gives no scores or the call fails: the calibrator then
        reads the answer without it."""
        stage = yield from begin("verify", {"model": self._llm.name})
        pieces = yield from self._short_call(stage, verify_call(self._llm, question, reply, kept))
        if pieces is None:
            return None
        yes = read_verdict(pieces)
        detail: dict[str, object] = {"reply": "".join(pieces).strip()[:20]}
        if yes is not None:
            detail[VERIFIED_YES] = round(yes, 4)
        yield stage.finished(detail)
        return yes

    def _short_call(
        self, stage: Stage, call: Callable[[], Iterator[str]], done: Callable[[list[str]], bool] = lambda _got: False
    ) -> Steps[list[str] | None]:
        """The pieces of a step's short reply (the selection, the check), until it ends or ``done`` says they are
        enough, its wait for the model shown; None, ``stage`` said failed, when the call failed: a step that
        fails costs itself, never the answer."""
        pieces: list[str] = []
        try:
            for piece in stream_with_waits(call, self._settings.llm.timeout_s, tick_s=WAIT_TICK_S):
                if isinstance(piece, Waiting):
                    yield WaitEvent(piece.ahead, piece.seconds)
                    continue
                pieces.append(piece)
                if done(pieces):
                    break
        except LLMError as exc:
            yield stage.failed(str(exc), said=Said("notice.llm_error", {"error": str(exc)}))
            return None
        except Exception as exc:  # a backend bug
            log.exception("the %s call failed", stage.name)
            error = f"{type(exc).__name__}: {exc}"
            yield stage.failed(error, said=Said("notice.llm_failed", {"error": error}))
            return None
        return pieces

    def _draft(self, question: str, kept: Sequence[RetrievedChunk]) -> CheckedDraft:
        """The reply checked sentence by sentence as it comes, as ``_checked`` will check it whole."""
        w = self._settings.workflow
        ocr = [c.chunk.ocr_confidence is not None for c in kept]
        passages = [as_shown(c) for c in kept]
        return CheckedDraft(question, passages, SupportRules(w.support_overlap), ocr, w.check_support)

    def evidence(self, question: str, kept: Sequence[RetrievedChunk]) -> EvidenceEvent | None:
        """The quote ``write`` would show first for ``kept`` (the passages that hold instructions left out)."""
        clean, _warnings = screen_passages(question, kept)  # ``write`` gives the warnings with the answer
        return evidence_for(question, clean, reranker_scorer(self._reranker)) if clean else None

    @property
    def _selects(self) -> bool:
        mode = self._settings.workflow.select
        return mode == "on" or (mode == "auto" and holds_grammar(self._llm))

    @property
    def _thresholds(self) -> Thresholds:
        w = self._settings.workflow
        return Thresholds(w.confidence_high_from, w.confidence_low_below)

    def generate(
        self, messages: list[ChatTurn], detail: dict[str, object], slot: str | None = None
    ) -> Steps[str | None]:
        """Stream the model's reply as tokens; returns the text, or None when nothing usable came back
        (the failure is reported as a failed stage and a notice)."""
        written = yield from self._generate(messages, detail, slot, scores=False)
        return written[0] if written is not None else None

    def generate_scored(
        self, messages: list[ChatTurn], detail: dict[str, object], slot: str | None = None
    ) -> Steps[tuple[str, tuple[float, ...]] | None]:
        """``generate``, returning with the text the log-probabilities of its tokens (where the backend gives
        them: the local model; none otherwise)."""
        return (yield from self._generate(messages, detail, slot, scores=True))

    def _generate(
        self, messages: list[ChatTurn], detail: dict[str, object], slot: str | None, scores: bool
    ) -> Steps[tuple[str, tuple[float, ...]] | None]:
        stage = yield from begin("generate", detail)
        parts: list[str] = []
        logprobs: list[float] = []
        error: str | None = None
        said = Said("notice.llm_empty")
        try:
            pieces = stream_with_waits(
                lambda: self._llm.stream_chat(
                    messages, max_tokens=self._settings.llm.max_tokens, prefix_slot=slot, scores=scores
                ),
                self._settings.llm.timeout_s,
                tick_s=WAIT_TICK_S,
            )
            for piece in pieces:
                if isinstance(piece, Waiting):
                    yield WaitEvent(piece.ahead, piece.seconds)
                    continue
                parts.append(piece)
                if isinstance(piece, ScoredPiece) and piece.logprob is not None:
                    logprobs.append(piece.logprob)
                yield TokenEvent(str(piece))
        except LLMError as exc:
            error, said = str(exc), Said("notice.llm_error", {"error": str(exc)[:1].upper() + str(exc)[1:]})
        except Exception as exc:  # a backend bug must not cost the user the passages we found
            log.exception("LLM backend failed")
            error = f"the language model failed ({type(exc).__name__}: {exc})"
            said = Said("notice.llm_failed", {"error": f"{type(exc).__name__}: {exc}"})
        text = "".join(parts).strip()
        if not text and error is None:
            error, said = "the language model returned an empty answer", Said("notice.llm_empty")
        if error is not None:
            yield stage.failed(error, said=said)
            yield NoticeEvent.worded(said, level="warning")
            return (text, tuple(logprobs)) if text else None
        yield stage.finished({"chars": len(text)})
        return text, tuple(logprobs)


def checked_reply(
    question: str,
    reply: str,
    kept: Sequence[RetrievedChunk],
    scorer: SentenceScorer | None,
    evidence: EvidenceEvent | None,
    clues: Clues,
    settings: Settings,
    calibrator: Calibrator,
) -> tuple[AnswerEvent, list[NoticeEvent]]:
    """The answer to ``question`` (a part, or the whole) from the model's ``reply``: screened, then checked
    against ``kept`` (``checked_answer``) unless the support check is off; and the screen's warnings. The
    replay of a stored run (``ragbench.answers.replay``) checks its replies here too, as the run did."""
    reply, warnings = screen_reply(question, reply, kept)
    w = settings.workflow
    if not w.check_support:
        return AnswerEvent(reply, citations_for(reply, kept), grounded=True), warnings
    rules = SupportRules(w.support_overlap)
    thresholds = Thresholds(w.confidence_high_from, w.confidence_low_below)
    return checked_answer(question, reply, kept, rules, scorer, evidence, thresholds, calibrator, clues), warnings


def final_answer(
    question: str,
    parts: Sequence[str],
    answers: Sequence[AnswerEvent],
    kept: Sequence[RetrievedChunk],
    picks: Sequence[Pick | None],
    not_sure: bool,
) -> AnswerEvent:
    """The answer given: the parts' ``answers`` put together (``composed``), said as "not sure" when its
    confidence is low and ``not_sure`` is on (``withheld``), its markers renumbered in citation order (shared
    with the replay, as ``checked_reply``)."""
    answer = answers[0] if len(answers) == 1 else composed(question, parts, answers)
    if not_sure:
        answer = withheld(question, answer, kept, picks[0] if len(picks) == 1 else None)
    return renumbered(answer)


def _drafted(steps: Steps[T], draft: CheckedDraft | None) -> Steps[T]:
    """``steps`` passed on, each token followed by the checked answer's beginning when it grew (a
    ``CheckedTextEvent``); returns what ``steps`` returns."""
    try:
        while True:
            try:
                event = next(steps)
            except StopIteration as done:
                return done.value
            yield event
            if draft is not None and isinstance(event, TokenEvent):
                grown = draft.add(event.text)
                if grown is not None:
                    yield CheckedTextEvent(grown)
    finally:
        steps.close()  # a consumer gone mid-answer lets the model go, as ``yield from`` would
