"""The LLM seam: every backend (local llama.cpp, OpenAI-compatible HTTP, a scripted test double) implements
``LLM`` and registers a factory in ``LLMS``. Callers only ever see this protocol.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ragapp.config import Settings
from ragapp.core.errors import LLMError
from ragapp.core.types import ChatTurn, ToolCall
from ragapp.models.model_queue import listen
from ragapp.models.pool import MODEL_CALLS
from ragapp.registry import Registry


class LLM(Protocol):
    """A chat model that streams text."""

    @property
    def name(self) -> str:
        """Short label for the UI and traces, e.g. 'llama.cpp · qwen2.5-coder-1.5b'."""
        ...

    def stream_chat(
        self,
        messages: list[ChatTurn],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        json: bool = False,
        prefix_slot: str | None = None,
        grammar: str | None = None,
        scores: bool = False,
    ) -> Iterator[str]:
        """Yield the reply piece by piece. Raises ``LLMError`` with a message that says what to do.

        ``json=True`` asks for a JSON object (a grammar for the local model, ``response_format`` for servers
        that accept it); callers still parse defensively, since not every backend can enforce it.
        ``prefix_slot`` names a family of calls that share a long, fixed prompt prefix: a backend may keep
        that prefix processed between them (the local model does; servers cache prefixes on their own).
        ``grammar`` (GBNF) holds the reply to a language, where the backend can (the local model); others
        reply freely, so callers parse the reply all the same. ``scores=True`` asks for each piece as a
        ``ScoredPiece`` (the likeliest tokens of its step, with their log-probabilities) where the backend
        can; plain strings otherwise."""
        ...


def holds_grammar(llm: LLM) -> bool:
    """The backend holds a reply to ``stream_chat``'s ``grammar`` (an optional ``holds_grammar`` attribute: the
    local model's); others reply freely."""
    return bool(getattr(llm, "holds_grammar", False))


class ScoredPiece(str):
    """A piece of a reply that also carries ``top``: the model's likeliest tokens at the step that wrote it,
    each with its log-probability, best first (what OpenAI calls ``top_logprobs``)."""

    top: tuple[tuple[str, float], ...]

    def __new__(cls, text: str, top: tuple[tuple[str, float], ...] = ()) -> ScoredPiece:
        piece = super().__new__(cls, text)
        piece.top = top
        return piece

    @property
    def logprob(self) -> float | None:
        """The log-probability of this piece's own token (None: a piece of several tokens, or one outside
        ``top``)."""
        return next((lp for text, lp in self.top if text == self), None)


@dataclass(frozen=True)
class ToolReply:
    """A model turn under native function calling: text, tool calls, or both."""

    content: str
    calls: tuple[ToolCall, ...] = ()


@runtime_checkable
class ToolCallingLLM(Protocol):
    """A backend with native function calling (OpenAI-compatible servers). Optional: the agent falls back
    to its JSON protocol for backends without it."""

    def complete_with_tools(
        self,
        messages: list[ChatTurn],
        tools: list[dict[str, Any]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> ToolReply:
        """One reply (not streamed). Raises ``LLMError`` like ``stream_chat``."""
        ...


log = logging.getLogger(__name__)

LLMFactory = Callable[[Settings], LLM]
LLMS: Registry[LLMFactory] = Registry("LLM backend")


def complete(llm: LLM, messages: list[ChatTurn], **kwargs: float | int | bool | None) -> str:
    """Convenience: the whole reply as one string."""
    return "".join(llm.stream_chat(messages, **kwargs))  # type: ignore[arg-type]


@dataclass(frozen=True)
class ShortReply:
    """A short step's reply (``short_reply``): its text, or why there is none, and the seconds it took."""

    text: str | None
    error: str | None
    seconds: float


def short_reply(llm: LLM, messages: list[ChatTurn], max_tokens: int, timeout_s: float) -> ShortReply:
    """One short reply at temperature 0 within ``timeout_s``, never raising: a step before the answer
    (translating the question, its likely answer) that fails or hangs only means going on without it."""
    start = time.perf_counter()
    try:
        pieces = stream_within(lambda: llm.stream_chat(messages, max_tokens=max_tokens, temperature=0.0), timeout_s)
        return ShortReply("".join(pieces), None, time.perf_counter() - start)
    except LLMError as exc:
        return ShortReply(None, str(exc), time.perf_counter() - start)
    except Exception as exc:  # a backend bug must not cost the question its answer
        log.exception("a short model call failed")
        return ShortReply(None, f"{type(exc).__name__}: {exc}", time.perf_counter() - start)


class LLMTimeoutError(LLMError):
    """The model did not finish within its time budget."""


_DONE = object()


@dataclass(frozen=True)
class Waiting:
    """Not a piece of the reply: where the call stands before its first piece. ``ahead`` calls come before it
    in the model's queue (0: its turn came, the model is reading the prompt); ``seconds`` since it was made."""

    ahead: int
    seconds: float


def stream_within(start: Callable[[], Iterator[str]], timeout_s: float) -> Iterator[str]:
    """Yield the pieces of ``start()`` until it ends or ``timeout_s`` has passed, then raise ``LLMTimeoutError``.

    The model runs on a worker of the bounded ``MODEL_CALLS`` pool (``ragapp.models.pool``), so a backend that
    hangs (before its first token or between two) can not hold the request past its budget. When the consumer
    stops early or time runs out, the worker is told to stop and closes the backend's stream at its next piece,
    which frees the model for the next request.
    """
    for piece in stream_with_waits(start, timeout_s):
        if isinstance(piece, str):
            yield piece


def stream_with_waits(
    start: Callable[[], Iterator[str]], timeout_s: float, tick_s: float | None = None
) -> Iterator[str | Waiting]:
    """``stream_within``, also yielding a ``Waiting`` each time the call's place in the model's queue changes
    and, with ``tick_s``, every ``tick_s`` seconds until the first piece (for a live timer). Time spent in the
    queue does not count against ``timeout_s``: the budget starts when the call's turn comes."""
    pieces: queue.Queue[object] = queue.Queue()
    stop = threading.Event()
    began = time.monotonic()

    def work() -> None:
        if stop.is_set():  # the caller gave up while it waited for a worker: nobody would read the reply
            return
        try:
            with listen(lambda ahead: pieces.put(Waiting(ahead, time.monotonic() - began))):
                stream = start()
                try:
                    for piece in stream:
                        if stop.is_set():
                            break
                        pieces.put(piece)
                finally:
                    close = getattr(stream, "close", None)
                    if close is not None:
                        close()
            pieces.put(_DONE)
        except BaseException as exc:  # handed to the consumer, which raises it in the request's thread
            pieces.put(exc)

    MODEL_CALLS.run(work)  # in the caller's context: a model call inside a traced request reports to its trace
    deadline = began + timeout_s
    received = False
    ahead = 0
    try:
        while True:
            if ahead > 0:  # in line: the backend bounds its own wait for a turn, the budget starts after it
                deadline = time.monotonic() + timeout_s
            wait = max(0.0, deadline - time.monotonic())
            if tick_s is not None and not received:
                wait = min(wait, tick_s)
            try:
                item = pieces.get(timeout=wait)
            except queue.Empty:
                if ahead > 0 or time.monotonic() < deadline:  # in line, or a tick: say so when asked to
                    if tick_s is not None and not received:
                        yield Waiting(ahead, time.monotonic() - began)
                    continue
                if received:
                    raise LLMTimeoutError(
                        f"the model ran past its {timeout_s:g} s budget; the answer was cut"
                    ) from None
                raise LLMTimeoutError(f"the model did not start answering within {timeout_s:g} s") from None
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            if isinstance(item, Waiting):
                ahead = item.ahead
                deadline = time.monotonic() + timeout_s  # queued time is not the model's
                yield item
                continue
            received = True
            yield item if isinstance(item, str) else str(item)  # a ``ScoredPiece`` keeps its scores
    finally:
        stop.set()
