"""The caller's long-term memories over HTTP: ``GET /v1/memories`` lists them, ``DELETE /v1/memories/{id}``
forgets one (it is never recalled again).

A caller's memories are those of the key's user (``user:<name>``), the same the Memory panel shows them when
signed in. With accounts off the browser keeps memories per browser and the API cannot name one, so a request
without a key sees the local owner's. Another user's id is "not found", as an id that never was.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from ragapp.engine.engine import Engine
from ragapp.serve.api.auth import Caller, KeyCheck
from ragapp.serve.api.errors import ApiError, ApiRoute


class MemoryOut(BaseModel):
    id: str
    text: str = Field(description="What is remembered, as kept (instructions to the assistant cut out).")
    source: str = Field(description='"said" (remember that ...), "accepted" (an offer accepted) or "edited".')
    screened: bool = Field(description="Sentences addressed to the assistant were cut out when it was kept.")
    created_at: str
    updated_at: str


class MemoriesOut(BaseModel):
    enabled: bool = Field(description="Memory is on for you (and for the app): memories are recalled and offered.")
    memories: list[MemoryOut]


def router(engine: Engine, check: KeyCheck) -> APIRouter:
    api = APIRouter(prefix="/v1", route_class=ApiRoute, tags=["memories"])
    memories = engine.memories

    @api.get("/memories", response_model=MemoriesOut, summary="What the app remembers about you, newest first")
    def listed(caller: Caller = Depends(check)) -> MemoriesOut:
        kept = memories.list(caller.owner, actor=caller.actor)
        return MemoriesOut(
            enabled=memories.enabled_for(caller.owner),
            memories=[
                MemoryOut(id=m.id, text=m.text, source=m.source, screened=m.screened, created_at=m.created_at,
                          updated_at=m.updated_at)
                for m in kept
            ],
        )  # fmt: skip

    @api.delete(
        "/memories/{memory_id}",
        summary="Forget one of your memories",
        responses={404: {"description": "You have no memory of that id."}},
    )
    def deleted(memory_id: str, caller: Caller = Depends(check)) -> dict[str, str]:
        if not memories.delete(caller.owner, memory_id, actor=caller.actor):
            raise ApiError(404, f"You have no memory with the id {memory_id!r}.", "memory_not_found")
        return {"deleted": memory_id}

    return api
