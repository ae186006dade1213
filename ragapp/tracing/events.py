"""The one family of events the engine emits. The chat, the logs and (later) the Traces tab all read these.

The engine never formats for a UI: it yields these records and the UI decides how they look.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ragapp.types import Citation, RetrievedChunk


@dataclass(frozen=True)
class StageEvent:
    """A stage (rewrite, a channel, fusion, rerank, an LLM call) started, finished or failed."""

    stage: str
    status: Literal["started", "finished", "failed"]
    duration_s: float | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


@dataclass(frozen=True)
class NoticeEvent:
    """Something the user should know: a degraded channel, reranking off, a fallback taken."""

    message: str
    level: Literal["info", "warning"] = "info"


@dataclass(frozen=True)
class RetrievalEvent:
    """The chunks that reached the prompt, with the channel ranks that brought them."""

    chunks: tuple[RetrievedChunk, ...]
    degraded: tuple[str, ...] = ()


@dataclass(frozen=True)
class TokenEvent:
    """A piece of the streamed answer."""

    text: str


@dataclass(frozen=True)
class AnswerEvent:
    """The finished answer; ``grounded`` is False when nothing relevant was found."""

    text: str
    citations: tuple[Citation, ...]
    grounded: bool


EngineEvent = StageEvent | NoticeEvent | RetrievalEvent | TokenEvent | AnswerEvent
