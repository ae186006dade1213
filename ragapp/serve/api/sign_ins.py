"""The browsers signed in, for admins: ``GET /v1/sessions`` lists them, ``DELETE /v1/sessions/{id}`` signs one
out, ``DELETE /v1/sessions?user=NAME`` all of a user's (docs/api.md). Each has an id of its own: neither its
token nor the token's hash ever leaves the server."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, Field

from ragapp.engine.engine import Engine
from ragapp.serve.api.auth import Caller, KeyCheck
from ragapp.serve.api.errors import ApiError, ApiRoute


class SignInOut(BaseModel):
    id: str = Field(description="The sign-in's id (not its token): DELETE /v1/sessions/{id} ends it.")
    user: str
    method: str = Field(description='How they signed in: "password", "oidc", ...')
    client: str = Field(description="The address they signed in from (empty when not known).")
    agent: str = Field(description="The browser's user agent (empty when not known).")
    started_at: str = Field(description="When they signed in (UTC, ISO 8601).")
    expires_at: str
    last_seen_at: str = Field(description="Their last request, to within a minute.")


class EndedOut(BaseModel):
    ended: int = Field(description="How many sign-ins ended.")
    user: str


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")


def router(engine: Engine, check: KeyCheck) -> APIRouter:
    api = APIRouter(prefix="/v1", route_class=ApiRoute, tags=["sessions"])

    def listed(caller: Caller) -> list[dict[str, Any]]:
        return [
            {"id": s.id, "user": s.user, "method": s.method, "client": s.client, "agent": s.agent,
             "started_at": _iso(s.started), "expires_at": _iso(s.expires), "last_seen_at": _iso(s.last_seen)}
            for s in engine.admin.sign_ins(actor=caller.actor)
        ]  # fmt: skip

    @api.get("/sessions", response_model=list[SignInOut], summary="The browsers signed in now (admins)")
    def sessions(caller: Caller = Depends(check)) -> list[dict[str, Any]]:
        return listed(caller)

    @api.delete("/sessions/{session_id}", response_model=EndedOut, summary="Sign one browser out (admins)")
    def end(session_id: str, caller: Caller = Depends(check)) -> dict[str, Any]:
        if session_id not in {s["id"] for s in listed(caller)}:  # an admin's check first, then 404
            raise ApiError(
                404, f"No sign-in {session_id!r} (it ended or expired); GET /v1/sessions lists them.", "unknown_session"
            )
        return {"ended": 1, "user": engine.admin.end_sign_in(session_id, actor=caller.actor)}

    @api.delete("/sessions", response_model=EndedOut, summary="Sign a user out everywhere (admins)")
    def end_all(
        user: str = Query(description="The user whose sign-ins end."), caller: Caller = Depends(check)
    ) -> dict[str, Any]:
        return {"ended": engine.admin.end_sign_ins_of(user, actor=caller.actor), "user": user.strip()}

    return api
