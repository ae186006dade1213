"""Traces, feedback and test cases: ``/v1/traces``, ``/v1/test-cases``, ``/v1/evaluate``. Each caller sees
their own (an admin may ask for everyone's traces), as in the Traces tab."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Literal

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, Field

from ragapp.config import RetrievalSettings
from ragapp.core.access import Action, require
from ragapp.core.serial import dump
from ragapp.engine import TestCase
from ragapp.engine.engine import Engine
from ragapp.serve.api.auth import Caller, KeyCheck
from ragapp.serve.api.errors import ApiError, ApiRoute
from ragapp.serve.api.schemas import (
    CaseResultOut,
    EvaluateReport,
    EvaluateRequest,
    TestCaseIn,
    TestCaseOut,
    TraceSummaryOut,
)
from ragapp.serve.api.scope import scope_of


class FeedbackIn(BaseModel):
    rating: Literal["up", "down"]
    comment: str = Field("", max_length=2000)


def case_out(case: TestCase) -> TestCaseOut:
    return TestCaseOut(
        id=case.id, question=case.question, expected=list(case.expected),
        kbs=None if case.kbs is None else list(case.kbs), created_at=case.created_at, trace_id=case.trace_id,
    )  # fmt: skip


def router(engine: Engine, check: KeyCheck) -> APIRouter:
    api = APIRouter(prefix="/v1", route_class=ApiRoute, tags=["traces and test cases"])
    observability = engine.observability

    @api.get("/traces", response_model=list[TraceSummaryOut], summary="Your recent traces, newest first")
    def traces(
        text: str = Query("", description="Part of the question."),
        status: str | None = Query(None, description="ok, refused, not found, degraded, failed, clarified, cancelled"),
        mode: str | None = Query(None, description="workflow, agent, ingest"),
        kind: str | None = Query(None, description="chat or ingest"),
        rating: Literal["up", "down", "any", "none"] | None = Query(None, description="Feedback given."),
        limit: int = Query(50, ge=1, le=500),
        everyone: bool = Query(False, description="Everyone's (admins)."),
        caller: Caller = Depends(check),
    ) -> list[TraceSummaryOut]:
        found = observability.traces(
            caller.owner, actor=caller.actor, everyone=everyone, text=text, status=status, mode=mode, kind=kind,
            rating=rating, limit=limit,
        )  # fmt: skip
        # Each degradation in English (its records are for the page, which words them in its own language)
        return [TraceSummaryOut(**{**asdict(t), "degradations": list(t.degradations)}) for t in found]

    @api.get("/traces/{trace_id}", summary="One trace, whole: spans, searches, model calls, the answer")
    def trace(trace_id: str, everyone: bool = Query(False), caller: Caller = Depends(check)) -> dict[str, Any]:
        found = observability.trace(trace_id, caller.owner, actor=caller.actor, everyone=everyone)
        if found is None:
            raise ApiError(404, f"No trace {trace_id!r} of yours (traces are kept a limited time).", "unknown_trace")
        return found.to_dict()

    @api.post("/traces/{trace_id}/feedback", summary="Thumbs up or down on the answer of a trace", status_code=204)
    def feedback(trace_id: str, body: FeedbackIn, caller: Caller = Depends(check)) -> None:
        observability.give_feedback(trace_id, caller.owner, body.rating, body.comment, actor=caller.actor)

    @api.post("/test-cases", response_model=TestCaseOut, status_code=201, summary="Save a question and its documents")
    def add_case(body: TestCaseIn, caller: Caller = Depends(check)) -> TestCaseOut:
        require(caller.actor, Action.OWN_TEST_CASES)
        kbs = scope_of(engine, body.kbs, caller.actor)
        try:
            case = observability.save_test_case(
                caller.owner, body.question, body.expected, sorted(kbs) if kbs else None, body.trace_id
            )
        except ValueError as exc:
            raise ApiError(400, str(exc)) from None
        return case_out(case)

    @api.get("/test-cases", response_model=list[TestCaseOut], summary="Your saved test cases")
    def cases(caller: Caller = Depends(check)) -> list[TestCaseOut]:
        require(caller.actor, Action.OWN_TEST_CASES)
        return [case_out(c) for c in observability.test_cases(caller.owner)]

    @api.delete("/test-cases/{case_id}", status_code=204, summary="Delete one of your test cases")
    def delete_case(case_id: int, caller: Caller = Depends(check)) -> None:
        require(caller.actor, Action.OWN_TEST_CASES)
        if not observability.delete_test_case(caller.owner, case_id):
            raise ApiError(404, f"No test case {case_id} of yours.", "unknown_test_case")

    @api.post(
        "/evaluate",
        response_model=list[EvaluateReport],
        summary="Score your test cases (hit rate, MRR, nDCG), with the current settings and with changes",
    )
    def evaluate(body: EvaluateRequest, caller: Caller = Depends(check)) -> list[EvaluateReport]:
        known = set(RetrievalSettings.model_fields) | {"rerank"}
        unknown = sorted(set(body.changes) - known)
        if unknown:
            raise ApiError(400, f"Not retrieval settings: {', '.join(unknown)}; known: {', '.join(sorted(known))}.")
        if "rerank" in body.changes and not isinstance(body.changes["rerank"], bool):
            raise ApiError(400, "changes.rerank: true (try the shipped reranker) or false (no reranker).")
        if not observability.test_cases(caller.owner):
            raise ApiError(400, "You have no test cases: save some first (POST /v1/test-cases).", "no_test_cases")
        reports = observability.run_test_cases(caller.owner, body.changes, body.k, actor=caller.actor)
        return [
            EvaluateReport(
                label=r.label, k=r.k, settings=dump(r.settings), hit_rate=r.hit_rate, mrr=r.mrr, ndcg=r.ndcg,
                results=[CaseResultOut(**{**asdict(c), "expected": list(c.expected), "ranked": list(c.ranked)})
                         for c in r.results],
            )
            for r in reports
        ]  # fmt: skip

    return api
