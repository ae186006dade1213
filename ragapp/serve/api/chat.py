"""``POST /v1/chat/completions`` (OpenAI-compatible, streamed or not) and ``GET /v1/models``.

A stream reads the engine's events in worker threads, one ``next()`` at a time. When the client goes away the
response is cancelled; the read in flight is let finish (anyio waits for the thread), then the engine's
generator is closed, in a worker thread too: the trace records the cancel and the model is let go at once
(``TraceRecorder.chat`` passes the close down), as when a browser leaves the chat.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
from fastapi import APIRouter, Depends
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool
from starlette.types import Send

from ragapp.core.events import EngineEvent, WaitEvent
from ragapp.engine.chat import question_refusal
from ragapp.engine.engine import Engine
from ragapp.serve.api.auth import Caller, KeyCheck
from ragapp.serve.api.completions import (
    MODELS,
    Clarifications,
    Turn,
    chunk,
    completion,
    conversation,
    history_of,
    last_chunk,
    mode_of,
    sse,
)
from ragapp.serve.api.errors import ApiError, ApiRoute, describe, error_body
from ragapp.serve.api.schemas import ChatCompletion, ChatCompletionRequest, ModelList, ModelOut
from ragapp.serve.api.scope import scope_of

_END = object()
STARTED = int(time.time())  # the models' "created"


class EventStream(StreamingResponse):
    """Server-sent events whose source is closed however the response ends (a client gone included)."""

    media_type = "text/event-stream"

    async def stream_response(self, send: Send) -> None:
        try:
            await super().stream_response(send)
        finally:
            close = getattr(self.body_iterator, "aclose", None)
            if close is not None:
                with anyio.CancelScope(shield=True):
                    await close()


def router(engine: Engine, check: KeyCheck) -> APIRouter:
    api = APIRouter(prefix="/v1", route_class=ApiRoute, tags=["chat"])
    asked = Clarifications()
    recent_turns = engine.settings.workflow.recent_turns

    @api.get("/models", response_model=ModelList, summary="The answering modes, as models")
    def models(_caller: Caller = Depends(check)) -> ModelList:
        return ModelList(data=[ModelOut(id=k, created=STARTED, description=d) for k, (_m, d) in MODELS.items()])

    @api.post(
        "/chat/completions",
        response_model=ChatCompletion,
        summary="Answer the conversation's last question from the knowledge bases",
        responses={200: {"content": {"text/event-stream": {}}, "description": "A reply, or a stream of chunks."}},
    )
    async def completions(body: ChatCompletionRequest, caller: Caller = Depends(check)) -> Any:
        mode = mode_of(body.model)

        def start() -> tuple[Iterator[EngineEvent], Turn]:
            kbs = scope_of(engine, body.kbs, caller.actor)
            resumed = asked.resume(caller.owner, body.messages)
            if resumed is not None:  # a reply picking one of the choices the API offered
                question, picked, before = resumed
                history = history_of(body.messages[:before], recent_turns)
                events = engine.chat.ask(
                    question, history, kbs, clarified=picked, owner=caller.owner, actor=caller.actor, where=body.filter
                )
                return events, Turn("workflow")
            question, history = conversation(body.messages, recent_turns)
            refusal = question_refusal(question, engine.settings.workflow.max_question_chars)
            if refusal is not None:  # too long to embed: said as an error, not as an answer
                raise ApiError(400, refusal, "invalid_question")
            events = engine.chat.ask(
                question, history, kbs, mode=mode, owner=caller.owner, actor=caller.actor, where=body.filter,
                fresh=body.fresh,
            )  # fmt: skip
            return events, Turn(mode)

        events, turn = await run_in_threadpool(start)
        created = int(time.time())
        if not body.stream:
            await run_in_threadpool(_consume, events, turn)
            _remember(turn, caller, asked)
            return completion(turn, body.model, created)
        return EventStream(_stream(events, turn, body.model, created, caller, asked), headers=_NO_BUFFERING)

    return api


_NO_BUFFERING = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def _consume(events: Iterator[EngineEvent], turn: Turn) -> None:
    for event in events:
        turn.apply(event)


def _remember(turn: Turn, caller: Caller, asked: Clarifications) -> None:
    if turn.clarify is not None:
        asked.asked(caller.owner, turn.message().content, turn.clarify)


async def _stream(
    events: Iterator[EngineEvent], turn: Turn, model: str, created: int, caller: Caller, asked: Clarifications
) -> AsyncIterator[str]:
    try:
        yield sse(chunk(turn, model, created, {"role": "assistant", "content": ""}))
        while True:
            event = await anyio.to_thread.run_sync(next, events, _END)
            if event is _END:
                break
            text = turn.apply(event)  # type: ignore[arg-type]
            if text:
                yield sse(chunk(turn, model, created, {"content": text}))
            elif isinstance(event, WaitEvent):  # a comment: proxies see traffic while the answer waits its turn
                yield f": waiting for the model ({event.ahead} ahead, {event.seconds:.0f} s)\n\n"
        _remember(turn, caller, asked)
        yield sse(last_chunk(turn, model, created))
    except Exception as exc:  # the reply has started: the error goes in the stream, as OpenAI's does
        status, message, code = describe(exc)
        yield sse(error_body(status, message, code))
    finally:
        with anyio.CancelScope(shield=True):  # the client may be gone: the model is let go all the same
            await anyio.to_thread.run_sync(_close, events)
    yield sse("[DONE]")


def _close(events: Iterator[EngineEvent]) -> None:
    close = getattr(events, "close", None)
    if close is not None:
        close()
