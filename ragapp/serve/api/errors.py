"""Every API error as one JSON shape, OpenAI's: ``{"error": {"message", "type", "code"}}``, so OpenAI clients
show the message. ``ApiRoute`` turns whatever a route raises into it, inside the route: the reply still passes
through the security headers, and the Gradio page mounted beside the API keeps its own error handling."""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import HTTPException, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import ValidationError

from ragapp.core.errors import AccessDenied, LooksUnknown, RagAppError

log = logging.getLogger(__name__)

# The OpenAI error types by status, so clients that branch on them (authentication, permission) do the right thing
_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
    422: "invalid_request_error",
    503: "service_unavailable",
}


class ApiError(Exception):
    """An error with its status and a message that says what to do."""

    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code


def error_body(status: int, message: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": _TYPES.get(status, "server_error"), "code": code}}


def error_json(status: int, message: str, code: str | None = None, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse(error_body(status, message, code), status_code=status, headers=headers)


def _where(location: tuple[Any, ...] | list[Any]) -> str:
    parts = [str(p) for p in location if p not in ("body", "query", "path")]
    return ".".join(parts) or "body"


def describe(exc: Exception) -> tuple[int, str, str | None]:
    """(status, message, code) for what a route raised; unexpected errors are logged and answered generically."""
    if isinstance(exc, ApiError):
        return exc.status, exc.message, exc.code
    if isinstance(exc, RequestValidationError | ValidationError):
        problems = [f"{_where(e.get('loc', ()))}: {e.get('msg', 'invalid')}" for e in exc.errors()[:10]]
        status = 422 if isinstance(exc, RequestValidationError) else 400
        return status, "Invalid request: " + "; ".join(problems), "invalid_request"
    if isinstance(exc, HTTPException):  # FastAPI's own, e.g. a body that is not valid JSON or multipart
        return exc.status_code, str(exc.detail), None
    if isinstance(exc, LooksUnknown):  # in a base the caller may not read: as unknown as an unknown thing
        return 404, str(exc), "not_found"
    if isinstance(exc, AccessDenied):
        return 403, str(exc), "forbidden"
    if isinstance(exc, RagAppError):
        return 400, str(exc), None
    log.exception("unexpected error in an API route")
    return 500, f"Something went wrong ({type(exc).__name__}). The details are in the server log.", "internal_error"


def error_response(exc: Exception) -> Response:
    status, message, code = describe(exc)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return error_json(status, message, code, headers)


class ApiRoute(APIRoute):
    """A route whose errors (bad input, refusals, bugs) come back as ``error_body`` JSON."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            try:
                return await handler(request)
            except Exception as exc:
                return error_response(exc)

        return guarded
