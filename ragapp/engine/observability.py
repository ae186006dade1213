"""The observability facet: traces of past requests and saved test cases scored against the retrieval settings.

Every call names its owner (a browser session or a login): nobody sees another user's traces or cases.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragapp.config import RetrievalSettings, Settings
from ragapp.core.errors import RagAppError
from ragapp.rerank.base import RERANKERS, PassthroughReranker, Reranker
from ragapp.retrieval.pipeline import RetrievalPipeline
from ragapp.testcases.scoring import CaseReport, evaluate_cases
from ragapp.testcases.store import TestCase, TestCaseStore
from ragapp.tracing.model import Trace
from ragapp.tracing.store import TraceStore, TraceSummary


class Observability:
    def __init__(
        self,
        settings: Settings,
        retrieval: RetrievalPipeline,
        traces: TraceStore | None,
        cases: TestCaseStore | None,
    ) -> None:
        self._settings = settings
        self._retrieval = retrieval
        self._traces = traces
        self._cases = cases

    def traces(self, owner: str, **filters: str | int | None) -> list[TraceSummary]:
        """Recent traces of ``owner``, newest first; filters: text, status, mode, kind, limit."""
        if self._traces is None:
            return []
        self._traces.flush(timeout=2.0)  # the request that just ended may still be queued
        return self._traces.list(owner, **filters)  # type: ignore[arg-type]

    def trace(self, trace_id: str, owner: str) -> Trace | None:
        if self._traces is None:
            return None
        self._traces.flush(timeout=2.0)  # a trace of the request that just ended may still be queued
        return self._traces.get(trace_id, owner)

    def save_test_case(
        self,
        owner: str,
        question: str,
        expected: Sequence[str],
        kbs: Sequence[str] | None = None,
        trace_id: str | None = None,
    ) -> TestCase:
        """Keep ``question`` with the documents (names) that should answer it. Raises ``ValueError`` for a
        blank question or no documents."""
        if self._cases is None:
            raise RagAppError("Test cases are not available (no state folder).")
        return self._cases.add(owner, question, expected, kbs, trace_id)

    def test_cases(self, owner: str) -> list[TestCase]:
        return self._cases.list(owner) if self._cases is not None else []

    def delete_test_case(self, owner: str, case_id: int) -> bool:
        return self._cases.delete(owner, case_id) if self._cases is not None else False

    def run_test_cases(self, owner: str, changes: dict[str, Any] | None = None, k: int = 10) -> list[CaseReport]:
        """Score ``owner``'s test cases with the current retrieval settings and, given ``changes`` (retrieval
        setting -> value; ``rerank`` False turns the reranker off, True tries the shipped one when none is on), with
        those changes too, side by side."""
        cases = self.test_cases(owner)
        current = self._retrieval.settings
        reports = [
            evaluate_cases(cases, self._retrieval.retrieve, "current settings", k, _knobs(current, self._retrieval))
        ]
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
                reports.append(evaluate_cases(cases, variant.retrieve, "with changes", k, _knobs(settings, variant)))
            finally:
                variant.close()
        return reports

    def close(self) -> None:
        if self._traces is not None:
            self._traces.close()
        if self._cases is not None:
            self._cases.close()


def _knobs(settings: RetrievalSettings, pipeline: RetrievalPipeline) -> dict[str, Any]:
    """The settings a test-case run is labelled with."""
    keys = ("fusion", "weights", "candidate_limit", "context_top_k", "min_rerank_score")
    return {k: getattr(settings, k) for k in keys} | {"reranker": pipeline.reranker.name}
