"""Folders, git repositories and websites knowledge bases follow: ``/v1/sources`` (docs/sync.md)."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from ragapp.core.errors import LooksUnknown
from ragapp.engine.engine import Engine
from ragapp.engine.sync import Sync, SyncError
from ragapp.serve.api.auth import Caller, KeyCheck
from ragapp.serve.api.errors import ApiError, ApiRoute


class SourceIn(BaseModel):
    name: str = Field(description="The source's name: letters, digits and - _ .")
    kind: Literal["folder", "git", "web"] = Field(description="A folder of the server, a git repository, a website.")
    location: str = Field(
        description="The folder's absolute path, the repository's path or URL, or the website's start page or "
        "sitemap (http or https: the pages under its folder are followed)."
    )
    kb: str = Field(description="The knowledge base it fills (one source per knowledge base).")
    include: list[str] = Field(default_factory=list, description="Globs of the files to take (none: every file).")
    exclude: list[str] = Field(default_factory=list, description="Globs of the files to leave out.")
    interval_s: float | None = Field(None, description="Seconds between syncs (default: the server's).")
    branch: str = Field("", description="git: the branch to follow (default: the remote's default branch).")


class SaidOut(BaseModel):
    code: str = Field(description="What happened, as a code (docs/sync.md lists a website's).")
    values: dict[str, str | int | float] = Field(description="The values its words are filled with.")


class RefusalOut(BaseModel):
    path: str
    reason: str
    said: SaidOut | None = Field(None, description="The reason as a code and values, where it has one.")


class ReportOut(BaseModel):
    started_at: str
    finished_at: str
    commit: str
    seen: int
    ignored: int = Field(description="Files the patterns take but of a type the app does not read.")
    added: list[str]
    updated: list[str]
    renamed: list[list[str]]
    removed: list[str]
    refused: list[RefusalOut]
    retrying: list[str]
    unchanged: int
    hashed: int
    ingested: int
    error: str
    stopped: str
    error_said: SaidOut | None = None
    stopped_said: SaidOut | None = None
    requests: int = Field(0, description="A website: the HTTP requests the crawl made (robots.txt included).")
    downloaded: int = Field(0, description="A website: the bytes it read.")


class SourceOut(BaseModel):
    name: str
    kind: str
    location: str
    kb: str
    include: list[str]
    exclude: list[str]
    interval_s: float
    branch: str
    paused: bool
    state: str = Field(description="new, idle, running, busy elsewhere, paused or failed.")
    progress: dict[str, int] = Field(description="While running: files ingested (done) of those to ingest (total).")
    last_run_at: str
    commit: str
    last_report: ReportOut | None


def source_out(sync: Sync, name: str, caller: Caller) -> dict[str, Any]:
    try:
        s = sync.source(name, actor=caller.actor)
    except (SyncError, LooksUnknown):  # another base's source reads as unknown
        raise ApiError(404, f"No source {name!r}; GET /v1/sources lists them.", "unknown_source") from None
    src = s.source
    return {"name": src.name, "kind": src.kind, "location": src.location, "kb": src.kb,
            "include": list(src.include), "exclude": list(src.exclude), "interval_s": src.interval_s,
            "branch": src.branch, "paused": src.paused, "state": s.state,
            "progress": {"done": s.done, "total": s.total}, "last_run_at": s.last_run_at, "commit": s.commit,
            "last_report": s.report.to_json() if s.report else None}  # fmt: skip


def router(engine: Engine, check: KeyCheck) -> APIRouter:
    api = APIRouter(prefix="/v1", route_class=ApiRoute, tags=["sources"])

    def facet() -> Sync:
        if engine.sync is None:
            raise ApiError(503, "This server was built without sync.", "no_sync")
        return engine.sync

    @api.get("/sources", response_model=list[SourceOut], summary="The sources of the bases you may edit")
    def sources(caller: Caller = Depends(check)) -> list[dict[str, Any]]:
        sync = facet()
        return [source_out(sync, s.source.name, caller) for s in sync.sources(actor=caller.actor)]

    @api.get("/sources/{name}", response_model=SourceOut, summary="One source: its state and last report")
    def source(name: str, caller: Caller = Depends(check)) -> dict[str, Any]:
        return source_out(facet(), name, caller)

    @api.post(
        "/sources", status_code=201, response_model=SourceOut, summary="Follow a folder, repository or site (admins)"
    )
    def add(body: SourceIn, caller: Caller = Depends(check)) -> dict[str, Any]:
        sync = facet()
        sync.add(body.name, body.kind, body.location, body.kb, body.include, body.exclude, body.interval_s,
                 body.branch, actor=caller.actor)  # fmt: skip
        return source_out(sync, body.name.strip(), caller)

    @api.post("/sources/{name}/sync", status_code=202, response_model=SourceOut, summary="Sync a source now")
    def sync_now(name: str, caller: Caller = Depends(check)) -> Any:
        sync = facet()
        source_out(sync, name, caller)  # 404 first
        sync.sync_now(name, actor=caller.actor)
        return JSONResponse(source_out(sync, name, caller), status_code=202)

    @api.post("/sources/{name}/pause", response_model=SourceOut, summary="Stop syncing a source")
    def pause(name: str, caller: Caller = Depends(check)) -> dict[str, Any]:
        sync = facet()
        source_out(sync, name, caller)
        sync.pause(name, actor=caller.actor)
        return source_out(sync, name, caller)

    @api.post("/sources/{name}/resume", response_model=SourceOut, summary="Sync a source again (starts one now)")
    def resume(name: str, caller: Caller = Depends(check)) -> dict[str, Any]:
        sync = facet()
        source_out(sync, name, caller)
        sync.resume(name, actor=caller.actor)
        return source_out(sync, name, caller)

    @api.delete("/sources/{name}", summary="Stop following a source (admins); its documents stay unless asked")
    def remove(
        name: str,
        delete_documents: bool = Query(False, description="Delete the documents it added, too."),
        caller: Caller = Depends(check),
    ) -> dict[str, Any]:
        sync = facet()
        source_out(sync, name, caller)
        deleted = sync.remove(name, delete_documents, actor=caller.actor)
        return {"name": name, "removed": True, "documents_deleted": deleted}

    return api
