"""Documents, knowledge bases and upload jobs: ``/v1/documents``, ``/v1/knowledge-bases``, ``/v1/jobs``."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from ragapp.core.errors import IngestError, LooksUnknown
from ragapp.core.types import DocumentRecord
from ragapp.engine import kb_name
from ragapp.engine.engine import Engine
from ragapp.engine.library import FIGURE_PATH, figure_url
from ragapp.serve.api.auth import Caller, KeyCheck
from ragapp.serve.api.errors import ApiError, ApiRoute
from ragapp.serve.api.jobs import Job, Jobs
from ragapp.serve.api.multipart import read_upload, safe_name, save
from ragapp.serve.api.schemas import (
    ChunkOut,
    Deleted,
    DocumentDetail,
    DocumentOut,
    JobOut,
    KnowledgeBaseOut,
    LeftOutOut,
    TagsIn,
    TagsOut,
)
from ragapp.serve.api.scope import scope_of

WAIT_S = 600.0  # the longest ``wait=true`` holds a request open


def document_out(d: DocumentRecord) -> dict[str, Any]:
    return {"id": d.doc_id, "name": d.name, "kb": d.kb, "file_type": d.file_type, "size_bytes": d.size_bytes,
            "pages": d.pages, "chunks": d.chunk_count, "added_at": d.added_at}  # fmt: skip


def router(engine: Engine, check: KeyCheck, jobs: Jobs) -> APIRouter:
    api = APIRouter(prefix="/v1", route_class=ApiRoute, tags=["documents"])
    library = engine.library
    max_file_mb = engine.settings.ingest.max_file_mb

    def readable(doc_id: str, caller: Caller) -> DocumentRecord:
        record = next((d for d in library.documents(actor=caller.actor) if d.doc_id == doc_id), None)
        if record is None:
            raise ApiError(404, f"No document {doc_id!r}; GET /v1/documents lists them.", "unknown_document")
        return record

    @api.post(
        "/documents",
        status_code=202,
        response_model=JobOut,
        summary="Upload files (multipart: one or more files, and kb) into a knowledge base",
        openapi_extra={"requestBody": {"content": {"multipart/form-data": {"schema": {
            "type": "object", "required": ["files"],
            "properties": {"files": {"type": "array", "items": {"type": "string", "format": "binary"}},
                           "kb": {"type": "string", "default": "default"}},
        }}}}},
    )  # fmt: skip
    async def upload(
        request: Request,
        wait: bool = Query(False, description="Answer when the job has ended (else at once, 202)."),
        caller: Caller = Depends(check),
    ) -> Any:
        await run_in_threadpool(library.check_upload, None, actor=caller.actor)  # before the body is read
        form = await read_upload(request, max_file_mb)
        try:
            kb = kb_name(form.kb)
            await run_in_threadpool(library.check_upload, kb, actor=caller.actor)
            supported = set(library.supported_extensions())
            for upload_file in form.files:
                if Path(safe_name(upload_file.filename)).suffix.lower() not in supported:
                    raise ApiError(
                        415, f"{safe_name(upload_file.filename)!r}: not a supported file type; supported: "
                        f"{', '.join(sorted(supported))}. Nothing was stored.", "unsupported_file",
                    )  # fmt: skip
        except Exception:
            for upload_file in form.files:
                await upload_file.close()
            raise
        folder = Path(tempfile.mkdtemp(prefix="ragapp-api-upload-"))
        try:
            files = await save(form.files, folder)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        job = jobs.start(caller, kb, files, folder)
        if not wait:
            return JSONResponse(job.view().model_dump(), status_code=202, headers={"Location": f"/v1/jobs/{job.id}"})
        await run_in_threadpool(job.done.wait, WAIT_S)
        return JSONResponse(job.view().model_dump(), status_code=200 if job.done.is_set() else 202)

    @api.get("/documents", response_model=list[DocumentOut], summary="The documents you may read")
    def documents(
        kb: str | None = Query(None, description="Only this knowledge base's."), caller: Caller = Depends(check)
    ) -> list[dict[str, Any]]:
        if kb is not None:
            scope_of(engine, [kb], caller.actor)  # 404 for an unknown one
        return [document_out(d) for d in library.documents(actor=caller.actor) if kb is None or d.kb == kb]

    @api.get("/documents/{doc_id}", response_model=DocumentDetail, summary="One document, with its chunks")
    def document(doc_id: str, caller: Caller = Depends(check)) -> DocumentDetail:
        readable(doc_id, caller)
        view = library.document_view(doc_id, actor=caller.actor)
        chunks = [
            ChunkOut(chunk_id=c.chunk_id, ordinal=c.ordinal, text=c.text, location=c.location, page=c.page,
                     heading=c.heading, has_table=c.has_table, ocr_confidence=c.ocr_confidence,
                     figure_url=figure_url(c), caption=c.figure.caption if c.figure is not None else None)
            for c in view.chunks
        ]  # fmt: skip
        left_out = [LeftOutOut(location=s.location, reason=s.reason, preview=s.preview) for s in view.skipped]
        report = view.report.to_dict() if view.report is not None else None
        return DocumentDetail(
            **document_out(view.record), meta=view.meta, tags=list(view.tags), report=report,
            file_kept=view.file_kept, chunk_list=chunks, left_out=left_out,
        )  # fmt: skip

    @api.get(
        FIGURE_PATH.removeprefix(api.prefix),
        response_class=Response,
        responses={
            200: {
                "content": {"image/png": {}},
                "description": "The figure, cropped from its page (a slide's, a Word file's or a book's picture as "
                "embedded).",
            }
        },
        summary="A figure passage's picture, cropped from its page (PNG)",
    )
    def figure(
        chunk_id: str,
        width: int = Query(1000, ge=200, le=1400, description="Pixels wide at most."),
        caller: Caller = Depends(check),
    ) -> Response:
        try:  # the passage's knowledge base is checked as for its page: one not readable is not found
            _chunk, png = library.figure_image(chunk_id, width, actor=caller.actor)
        except (IngestError, LooksUnknown) as exc:
            raise ApiError(404, str(exc), "unknown_figure") from None
        return Response(png, media_type="image/png", headers={"Cache-Control": "private, max-age=3600"})

    @api.put(
        "/documents/{doc_id}/tags", response_model=TagsOut, summary="Set a document's tags (who may edit its base)"
    )
    def set_tags(doc_id: str, body: TagsIn, caller: Caller = Depends(check)) -> TagsOut:
        readable(doc_id, caller)
        return TagsOut(id=doc_id, tags=list(library.set_tags(doc_id, body.tags, actor=caller.actor)))

    @api.delete("/documents/{doc_id}", response_model=Deleted, summary="Remove a document (editors and admins)")
    def delete(doc_id: str, caller: Caller = Depends(check)) -> Deleted:
        readable(doc_id, caller)
        return Deleted(id=doc_id, name=library.delete(doc_id, actor=caller.actor))

    @api.get("/knowledge-bases", response_model=list[KnowledgeBaseOut], summary="The knowledge bases you may read")
    def knowledge_bases(caller: Caller = Depends(check)) -> list[KnowledgeBaseOut]:
        return [
            KnowledgeBaseOut(name=kb.name, documents=kb.documents, chunks=kb.chunks)
            for kb in library.knowledge_bases(actor=caller.actor)
        ]

    def own_job(job_id: str, caller: Caller) -> Job:
        job = jobs.get(caller.owner, job_id)
        if job is None:
            raise ApiError(404, f"No upload job {job_id!r} of yours (jobs are kept in memory, until a restart).")
        return job

    @api.get("/jobs", response_model=list[JobOut], summary="Your recent upload jobs, newest first")
    def job_list(caller: Caller = Depends(check)) -> list[JobOut]:
        return [job.view() for job in jobs.owned(caller.owner)]

    @api.get("/jobs/{job_id}", response_model=JobOut, summary="An upload's progress and, once ended, its results")
    def job(job_id: str, caller: Caller = Depends(check)) -> JobOut:
        return own_job(job_id, caller).view()

    @api.delete("/jobs/{job_id}", response_model=JobOut, summary="Cancel an upload (the files done stay)")
    def cancel(job_id: str, caller: Caller = Depends(check)) -> JobOut:
        found = own_job(job_id, caller)
        found.cancel.set()
        return found.view()

    return api
