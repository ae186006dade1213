"""The API's routes put on the served FastAPI app (before the Gradio page's mount at /, which would answer
their paths otherwise): /v1/..., /healthz, /readyz, /docs and /openapi.json."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.routing import Mount

from ragapp.engine.engine import Engine
from ragapp.serve.api import audit, chat, conversations, documents, memories, retrieve, sign_ins, sources, traces
from ragapp.serve.api import enrichment as enrichment_api
from ragapp.serve.api.auth import KeyCheck
from ragapp.serve.api.docs import docs_page
from ragapp.serve.api.errors import ApiRoute, error_json
from ragapp.serve.api.jobs import Jobs

TITLE = "ragapp HTTP API"
DESCRIPTION = (
    "The knowledge bases over HTTP: OpenAI-compatible chat (POST /v1/chat/completions, GET /v1/models), "
    "documents and uploads, retrieval, your memories, traces and test cases, sign-ins (admins). Send an API key as "
    "'Authorization: Bearer <key>' (`python -m ragapp.users key NAME` makes one; on loopback with accounts off "
    "none is needed). "
    'Errors are JSON: {"error": {"message": ..., "type": ..., "code": ...}}.'
)


def _health(engine: Engine) -> APIRouter:
    api = APIRouter(route_class=ApiRoute, tags=["health"])

    @api.get("/healthz", summary="The process is up")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @api.get("/readyz", summary="Models loaded and stores open (503 until then)")
    async def readyz() -> Any:
        if engine.warming:
            return error_json(503, "Warming up: the models are loading.", "warming_up")
        try:
            status = await run_in_threadpool(engine.status)
        except Exception as exc:  # a store that does not answer: not ready, and say why
            return error_json(503, f"Not ready: {type(exc).__name__}: {exc}", "not_ready")
        return {"status": "ready", "llm": status.llm, "embedder": status.embedder, "reranker": status.reranker,
                "documents": status.documents, "chunks": status.chunks}  # fmt: skip

    return api


def add_api(app: FastAPI, engine: Engine, check: KeyCheck) -> Jobs:
    """Put the API on ``app`` (``check`` resolves its keys); returns the upload jobs, to close when the server
    stops."""
    jobs = Jobs(engine)
    for router in (
        _health(engine),
        audit.router(engine, check),
        chat.router(engine, check),
        conversations.router(engine, check),
        memories.router(engine, check),
        documents.router(engine, check, jobs),
        enrichment_api.router(engine, check),
        retrieve.router(engine, check),
        sources.router(engine, check),
        traces.router(engine, check),
        sign_ins.router(engine, check),
    ):
        app.include_router(router)
    spec: dict[str, Any] = {}

    def openapi() -> dict[str, Any]:
        if not spec:
            routes = [r for r in app.routes if not isinstance(r, Mount)]  # the API's, not the Gradio page's
            spec.update(get_openapi(title=TITLE, version="1", description=DESCRIPTION, routes=routes))
        return spec

    @app.get("/openapi.json", include_in_schema=False)
    def openapi_json() -> JSONResponse:
        return JSONResponse(openapi())

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return HTMLResponse(docs_page(openapi()))

    return jobs
