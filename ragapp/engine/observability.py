"""The observability facet: traces of past requests, feedback on answers, and saved test cases scored against
the retrieval settings, or answered and judged (truthfulness) and compared with the run before.

Every call names its owner (a browser session or a login): nobody sees another user's traces or cases, except
an admin who asks for everyone's (``everyone=True``, checked against the actor's role). Test-case runs search
only the knowledge bases the actor may read, like a question does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ragapp.accounts.kb_access import KbAccess
from ragapp.config import RetrievalSettings, Settings
from ragapp.core.access import LOCAL_ACTOR, Action, Actor, require
from ragapp.core.errors import RagAppError
from ragapp.core.events import EngineEvent
from ragapp.core.types import RetrievalResult, Scope
from ragapp.engine.procedural import ProceduralMemory
from ragapp.rerank.base import RERANKERS, PassthroughReranker, Reranker
from ragapp.retrieval.pipeline import RetrievalPipeline
from ragapp.store.procedural import TableRow
from ragapp.testcases.answers import AnswerCheck, answer_cases
from ragapp.testcases.scoring import CaseReport, evaluate_cases
from ragapp.testcases.store import TestCase, TestCaseStore
from ragapp.tracing.model import Trace
from ragapp.tracing.store import TraceStore, TraceSummary

log = logging.getLogger(__name__)

# A test case's question asked as the chat would answer it, by whom (``Chat.ask_case``).
AskCase = Callable[..., Iterable[EngineEvent]]


class Observability:
    def __init__(
        self,
        settings: Settings,
        retrieval: RetrievalPipeline,
        traces: TraceStore | None,
        cases: TestCaseStore | None,
        access: KbAccess | None = None,
        procedural: ProceduralMemory | None = None,
        ask: AskCase | None = None,
    ) -> None:
        self._settings = settings
        self._ask = ask  # None: test cases are scored on retrieval only
        self._procedural = procedural  # None: procedural memory off, feedback is only kept with its trace
        self._retrieval = retrieval
        self._traces = traces
        self._cases = cases
        self._access = access  # None: accounts off, every knowledge base readable

    def traces(
        self, owner: str, *, actor: Actor = LOCAL_ACTOR, everyone: bool = False, **filters: str | int | None
    ) -> list[TraceSummary]:
        """Recent traces of ``owner`` (``everyone``: of all users, for an admin), newest first; filters: text,
        status, mode, kind, rating ("up", "down", "any", "none"), limit."""
        require(actor, Action.ALL_TRACES if everyone else Action.OWN_TRACES)
        if self._traces is None:
            return []
        self._traces.flush(timeout=2.0)  # the request that just ended may still be queued
        return self._traces.list(None if everyone else owner, **filters)  # type: ignore[arg-type]

    def trace(self, trace_id: str, owner: str, *, actor: Actor = LOCAL_ACTOR, everyone: bool = False) -> Trace | None:
        require(actor, Action.ALL_TRACES if everyone else Action.OWN_TRACES)
        if self._traces is None:
            return None
        self._traces.flush(timeout=2.0)  # a trace of the request that just ended may still be queued
        return self._traces.get(trace_id, None if everyone else owner)

    def give_feedback(
        self, trace_id: str, owner: str, rating: str, comment: str = "", *, actor: Actor = LOCAL_ACTOR
    ) -> None:
        """Keep a thumbs up or down ("up"/"down") and an optional comment with the trace of an answer the owner
        was given (a later one replaces it). Raises ``RagAppError`` when there is no such trace of theirs."""
        require(actor, Action.FEEDBACK)
        if self._traces is None:
            raise RagAppError("Feedback is not kept: tracing is off (RAGAPP_TRACING__ENABLED).")
        try:
            kept = self._traces.set_feedback(trace_id, owner, rating, comment)
        except ValueError as exc:
            raise RagAppError(str(exc)) from None
        if not kept:
            raise RagAppError("That answer's trace is gone (traces are kept for a limited time).")
        if self._procedural is not None:
            self._learn(trace_id, owner, rating)

    def _learn(self, trace_id: str, owner: str, rating: str) -> None:
        """Let procedural memory learn from the rating; the feedback is kept whatever happens here."""
        assert self._procedural is not None and self._traces is not None
        try:
            trace = self._traces.get(trace_id, owner)
            if trace is not None:
                self._procedural.rated(trace, rating)
        except Exception:
            log.warning("procedural memory could not learn from feedback on trace %s", trace_id, exc_info=True)

    def experience(self, *, actor: Actor = LOCAL_ACTOR) -> list[TableRow] | None:
        """What procedural memory has learned (every user's feedback together, so for those who may see all
        traces): per kind of question and mode, answers and how many were kept; None when it is off."""
        require(actor, Action.ALL_TRACES)
        return self._procedural.table() if self._procedural is not None else None

    def feedback(self, trace_id: str) -> tuple[str, str]:
        """(rating, comment) given on the answer of trace ``trace_id``; ("", "") when none."""
        return self._traces.feedback(trace_id) if self._traces is not None else ("", "")

    def save_test_case(
        self,
        owner: str,
        question: str,
        expected: Sequence[str],
        kbs: Sequence[str] | None = None,
        trace_id: str | None = None,
        *,
        must_contain: str = "",
        unanswerable: bool = False,
    ) -> TestCase:
        """Keep ``question`` with the documents (names) that should answer it, and optionally the words the right
        answer holds, or that a refusal is right (``unanswerable``). Raises ``ValueError`` for a blank question,
        or no documents for a question the documents answer."""
        if self._cases is None:
            raise RagAppError("Test cases are not available (no state folder).")
        return self._cases.add(
            owner, question, expected, kbs, trace_id, must_contain=must_contain, unanswerable=unanswerable
        )

    def test_cases(self, owner: str) -> list[TestCase]:
        return self._cases.list(owner) if self._cases is not None else []

    def delete_test_case(self, owner: str, case_id: int) -> bool:
        return self._cases.delete(owner, case_id) if self._cases is not None else False

    def run_test_cases(
        self, owner: str, changes: dict[str, Any] | None = None, k: int = 10, *, actor: Actor = LOCAL_ACTOR
    ) -> list[CaseReport]:
        """Score ``owner``'s test cases with the current retrieval settings and, given ``changes`` (retrieval
        setting -> value; ``rerank`` False turns the reranker off, True tries the shipped one when none is on), with
        those changes too, side by side. Each case searches only the bases ``actor`` may read."""
        require(actor, Action.OWN_TEST_CASES)
        cases = self.test_cases(owner)
        current = self._retrieval.settings
        reports = [
            evaluate_cases(
                cases, self._scoped(self._retrieval.retrieve, actor), "current settings", k,
                _knobs(current, self._retrieval),
            )
        ]  # fmt: skip
        changes = dict(changes or {})
        rerank = changes.pop("rerank", None)
        if changes or rerank is not None:
            settings = current.model_copy(update=changes)
            reranker: Reranker | None = None  # the engine's own
            if rerank is False:
                reranker = PassthroughReranker()
            elif rerank is True and not self._retrieval.reranker.enabled:  # try the shipped one
                reranker = RERANKERS.get("builtin")(self._settings)
            variant = self._retrieval.variant(RetrievalSettings.model_validate(settings.model_dump()), reranker)
            try:
                scoped = self._scoped(variant.retrieve, actor)
                reports.append(evaluate_cases(cases, scoped, "with changes", k, _knobs(settings, variant)))
            finally:
                variant.close()
        return reports

    def check_answers(
        self, owner: str, *, actor: Actor = LOCAL_ACTOR, progress: Callable[[int, int], None] | None = None
    ) -> AnswerCheck:
        """Answer each of ``owner``'s test cases as the chat would (``Chat.ask_case``: alone, the configured mode,
        only what ``actor`` may read), judge each answer accurate, missing or hallucinated
        (``ragapp.testcases.answers``), keep the run and return it with the run before, to compare.
        ``progress(done, total)`` is called after each case."""
        require(actor, Action.OWN_TEST_CASES)
        if self._cases is None or self._ask is None:
            raise RagAppError("Test cases are not available (no state folder).")
        ask = self._ask
        previous = self._cases.runs(owner, 1)
        results = answer_cases(self.test_cases(owner), lambda q, kbs: ask(q, kbs, actor=actor), progress)
        settings = {"mode": self._settings.agent.mode} | _knobs(self._retrieval.settings, self._retrieval)
        run = self._cases.add_run(owner, results, settings)
        return AnswerCheck(run, previous[0] if previous else None)

    def answer_checks(self, owner: str, *, actor: Actor = LOCAL_ACTOR) -> AnswerCheck | None:
        """The owner's last kept run with the one before it (None: no run yet)."""
        require(actor, Action.OWN_TEST_CASES)
        runs = self._cases.runs(owner, 2) if self._cases is not None else []
        return AnswerCheck(runs[0], runs[1] if len(runs) > 1 else None) if runs else None

    def _scoped(self, retrieve: Any, actor: Actor) -> Any:
        """``retrieve`` with its scope narrowed to what ``actor`` may read (unchanged with accounts off)."""
        access = self._access
        if access is None:
            return retrieve

        def scoped(question: str, kbs: Scope) -> RetrievalResult:
            return retrieve(question, access.scope_for(actor, kbs))  # type: ignore[no-any-return]

        return scoped

    def close(self) -> None:
        if self._traces is not None:
            self._traces.close()
        if self._cases is not None:
            self._cases.close()


def _knobs(settings: RetrievalSettings, pipeline: RetrievalPipeline) -> dict[str, Any]:
    """The settings a test-case run is labelled with."""
    keys = ("fusion", "weights", "candidate_limit", "context_top_k", "min_rerank_score")
    return {k: getattr(settings, k) for k in keys} | {"reranker": pipeline.reranker.name}
