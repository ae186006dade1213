"""The audit log over HTTP, for admins: ``GET /v1/audit`` with the Admin tab's filters, as JSON or as CSV
(``?format=csv``, or ``Accept: text/csv``). Anyone else's key is refused (403), and the refusal is itself
recorded."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, Field

from ragapp.engine.audit import AuditAction, AuditQuery, Outcome
from ragapp.engine.engine import Engine
from ragapp.serve.api.auth import Caller, KeyCheck
from ragapp.serve.api.errors import ApiRoute


class AuditRecordOut(BaseModel):
    id: int
    at: str = Field(description="When, in UTC (ISO 8601, to the microsecond).")
    actor: str = Field(description='Who: a user\'s name, "cli" (python -m ragapp.users), "local" (accounts off).')
    role: str = Field(description="Their role then; empty for a refused sign-in.")
    client: str = Field(description="The address the request came from; empty when not known.")
    action: AuditAction
    target: str = Field(description="What it was done to: a knowledge base, kb/document, user, source, intent.")
    outcome: Outcome
    detail: dict[str, Any]


class AuditPageOut(BaseModel):
    records: list[AuditRecordOut]
    total: int = Field(description="How many records match the filters in all.")
    limit: int
    offset: int


def router(engine: Engine, check: KeyCheck) -> APIRouter:
    api = APIRouter(prefix="/v1", route_class=ApiRoute, tags=["audit"])
    audit = engine.audit

    @api.get(
        "/audit",
        response_model=AuditPageOut,
        summary="The audit log, newest first (admins)",
        responses={200: {"content": {"text/csv": {}}, "description": "JSON, or CSV with format=csv"}},
    )
    def audit_log(
        request: Request,
        user: str = Query("", description="Exactly this user (the actor)."),
        action: AuditAction | None = Query(None, description="Only this action."),
        target: str = Query("", description="Part of the target: a knowledge base's name finds its searches too."),
        outcome: Outcome | None = Query(None, description="ok, refused (not allowed) or failed."),
        since: datetime | None = Query(None, description="At or after (ISO 8601; no zone: UTC)."),
        until: datetime | None = Query(None, description="Before (ISO 8601; no zone: UTC)."),
        limit: int = Query(100, ge=1, le=1000),
        offset: int = Query(0, ge=0),
        fmt: Literal["json", "csv"] | None = Query(
            None, alias="format", description="csv: every match (100,000 at most)."
        ),
        caller: Caller = Depends(check),
    ) -> Any:
        query = AuditQuery(user, action.value if action else "", target, outcome or "", since, until, limit, offset)
        wants_csv = fmt == "csv" or (fmt is None and "text/csv" in request.headers.get("accept", ""))
        if wants_csv:
            body = audit.csv(query, actor=caller.actor)
            disposition = 'attachment; filename="audit.csv"'
            return Response(body, media_type="text/csv; charset=utf-8", headers={"Content-Disposition": disposition})
        page = audit.page(query, actor=caller.actor)
        records = [AuditRecordOut.model_validate(r, from_attributes=True) for r in page.records]
        return AuditPageOut(records=records, total=page.total, limit=limit, offset=offset)

    return api
