"""An LLM wrapper that reports every call to the current trace: the exact messages, the completion, token
counts (the backend's when it reports them, else estimated), the tokens' log-probabilities where the backend
scores them, and time. Without a trace it only passes through."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ragapp.core.tokens import estimate_tokens
from ragapp.core.types import ChatTurn, LLMCall
from ragapp.models.llm import LLM, ScoredPiece, ToolCallingLLM, ToolReply
from ragapp.tracing.context import current, report


def recording(llm: LLM) -> LLM:
    """``llm`` with its calls recorded; keeps native tool calling only if ``llm`` has it."""
    return RecordingToolLLM(llm) if isinstance(llm, ToolCallingLLM) else RecordingLLM(llm)


class RecordingLLM:
    def __init__(self, inner: LLM) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    def __getattr__(self, attr: str) -> Any:  # warm_up, close, context sizes: whatever the backend offers
        return getattr(self.inner, attr)

    def stream_chat(self, messages: list[ChatTurn], **kwargs: Any) -> Iterator[str]:
        if current() is None:
            yield from self.inner.stream_chat(messages, **kwargs)
            return
        started = time.perf_counter()
        pieces: list[str] = []
        error: str | None = None
        try:
            for piece in self.inner.stream_chat(messages, **kwargs):
                pieces.append(piece)
                yield piece
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            text = "".join(pieces)
            call = _call(self.inner.name, messages, text, started, error, json=bool(kwargs.get("json")))
            call = replace(call, logprobs=_logprobs(pieces))
            report(lambda observer: observer.llm_call(call, started))


class RecordingToolLLM(RecordingLLM):
    def complete_with_tools(self, messages: list[ChatTurn], tools: list[dict[str, Any]], **kwargs: Any) -> ToolReply:
        inner = self.inner
        assert isinstance(inner, ToolCallingLLM)
        started = time.perf_counter()
        error: str | None = None
        reply: ToolReply | None = None
        try:
            reply = inner.complete_with_tools(messages, tools, **kwargs)
            return reply
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            names = [str(t.get("function", t).get("name", "?")) for t in tools]
            calls = [{"name": c.name, "arguments": c.arguments} for c in reply.calls] if reply else []
            call = _call(self.inner.name, messages, reply.content if reply else "", started, error, names, calls)
            report(lambda observer: observer.llm_call(call, started))


def _call(
    model: str,
    messages: list[ChatTurn],
    completion: str,
    started: float,
    error: str | None,
    tools: list[str] | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    json: bool = False,
) -> LLMCall:
    wire = [_message(m) for m in messages]
    return LLMCall(
        model=model,
        messages=wire,
        completion=completion,
        prompt_tokens=sum(estimate_tokens(m.content) + 4 for m in messages),
        completion_tokens=estimate_tokens(completion),
        seconds=time.perf_counter() - started,
        json=json,
        tools=tools or [],
        tool_calls=tool_calls or [],
        error=error,
    )


def _logprobs(pieces: list[str]) -> list[float]:
    """Each scored piece's own log-probability, as the answer writer reads them (none without scores)."""
    return [lp for p in pieces if isinstance(p, ScoredPiece) and (lp := p.logprob) is not None]


def _message(turn: ChatTurn) -> dict[str, Any]:
    out: dict[str, Any] = {"role": turn.role, "content": turn.content}
    if turn.tool_calls:
        out["tool_calls"] = [{"name": c.name, "arguments": c.arguments} for c in turn.tool_calls]
    if turn.tool_call_id:
        out["tool_call_id"] = turn.tool_call_id
    return out
