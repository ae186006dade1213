"""Saved chats over HTTP: ``GET /v1/conversations`` lists the caller's, ``GET /v1/conversations/{id}/export``
gives one as Markdown or JSON, ``GET /v1/conversations/export`` all of them as a zip.

A caller's chats are those of the key's user, ``user:<name>``: with accounts on, the chats that user keeps in the
browser too. With accounts off the browser keeps chats per browser and the API cannot name one, so a request
without a key sees the local owner's (none the browser made); see docs/api.md. Another owner's id is "not
found", as an id that never was.
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import quote

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response
from pydantic import BaseModel

from ragapp.engine.engine import Engine
from ragapp.serve.api.auth import Caller, KeyCheck
from ragapp.serve.api.errors import ApiError, ApiRoute


class ConversationOut(BaseModel):
    id: str
    title: str
    updated_at: str


def attachment(name: str) -> str:
    """A ``Content-Disposition`` that names the file in any script: an ASCII ``filename`` for old clients and
    the real name as RFC 5987's ``filename*`` (Starlette does the same only for files on disk)."""
    fallback = "".join(c if c.isascii() and c.isprintable() and c not in '"\\;' else "_" for c in name)
    if fallback == name:
        return f'attachment; filename="{name}"'
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


def router(engine: Engine, check: KeyCheck) -> APIRouter:
    api = APIRouter(prefix="/v1", route_class=ApiRoute, tags=["conversations"])
    conversations = engine.conversations
    files = {"description": "The file, as an attachment.", "content": {"application/octet-stream": {}}}

    @api.get("/conversations", response_model=list[ConversationOut], summary="Your saved chats, newest first")
    def listed(caller: Caller = Depends(check)) -> list[ConversationOut]:
        found = conversations.list(caller.owner, actor=caller.actor)
        return [ConversationOut(id=c.id, title=c.title, updated_at=c.updated_at) for c in found]

    @api.get(
        "/conversations/export",
        summary="All your saved chats as a zip (per chat a .md and a .json file, and an index)",
        response_class=Response,
        responses={200: {"description": "A zip file.", "content": {"application/zip": {}}}},
    )
    def export_all(caller: Caller = Depends(check)) -> Response:
        made = conversations.export_all(caller.owner, actor=caller.actor)
        return Response(made.data, media_type=made.media_type, headers={"Content-Disposition": attachment(made.name)})

    @api.get(
        "/conversations/{conversation_id}/export",
        summary="One of your saved chats as Markdown or JSON (its answers, citations and confidence)",
        response_class=Response,
        responses={200: files, 404: {"description": "You have no chat of that id."}},
    )
    def export(
        conversation_id: str,
        fmt: Literal["markdown", "json"] = Query("markdown", alias="format", description="markdown (.md) or json"),
        caller: Caller = Depends(check),
    ) -> Response:
        made = conversations.export(caller.owner, conversation_id, fmt, actor=caller.actor)
        if made is None:
            raise ApiError(404, f"You have no saved chat with the id {conversation_id!r}.", "conversation_not_found")
        return Response(made.data, media_type=made.media_type, headers={"Content-Disposition": attachment(made.name)})

    return api
