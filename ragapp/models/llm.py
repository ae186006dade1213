"""The LLM seam: every backend (local llama.cpp, OpenAI-compatible HTTP, a scripted test double) implements
``LLM`` and registers a factory in ``LLMS``. Callers only ever see this protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol

from ragapp.config import Settings
from ragapp.registry import Registry
from ragapp.types import ChatTurn


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
    ) -> Iterator[str]:
        """Yield the reply piece by piece. Raises ``LLMError`` with a message that says what to do."""
        ...


LLMFactory = Callable[[Settings], LLM]
LLMS: Registry[LLMFactory] = Registry("LLM backend")


def complete(llm: LLM, messages: list[ChatTurn], **kwargs: float | int | None) -> str:
    """Convenience: the whole reply as one string."""
    return "".join(llm.stream_chat(messages, **kwargs))  # type: ignore[arg-type]
