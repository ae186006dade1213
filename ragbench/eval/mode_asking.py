"""The one-token test call an answering benchmark makes before it asks anything (``python -m ragbench.answers``),
so a model that cannot answer stops the run before its documents are indexed."""

from __future__ import annotations

import time

from ragapp.core.errors import LLMError
from ragapp.core.types import ChatTurn
from ragapp.models.llm import LLM, stream_within


def preflight(llm: LLM, timeout_s: float) -> float:
    """Load the model (a local one) and ask for one token; returns the seconds it took. Raises ``LLMError``
    saying nothing was measured when the model cannot answer (no server, wrong model, no model file)."""
    start = time.perf_counter()
    try:
        load = getattr(llm, "load", None)
        if callable(load):
            load()
        messages = [ChatTurn("user", "Reply with the word OK.")]
        for _ in stream_within(lambda: llm.stream_chat(messages, max_tokens=1, temperature=0.0), timeout_s):
            pass
    except LLMError as exc:
        raise LLMError(f"the model ({llm.name}) failed a one-token test call, so nothing was measured: {exc}") from exc
    return time.perf_counter() - start
