"""Asking the engine one question in one mode and scoring it; what the model did is read from the request's
trace (calls, prompt and completion tokens, the raw replies), so the model is measured as the app runs it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ragapp.core.chunks import doc_of_chunk_id
from ragapp.core.errors import LLMError
from ragapp.core.types import ChatTurn
from ragapp.models.llm import LLM, stream_within
from ragbench.eval.answers import AnswerRow, Usage, collect, score_row
from ragbench.eval.beir import BeirDataset, Query

if TYPE_CHECKING:
    from ragapp.engine.engine import Engine

OWNER = "ragbench"  # whose traces the comparison's questions leave


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


def gold_answers(query: Query) -> list[str]:
    answers = query.metadata.get("answers")
    if isinstance(answers, str):
        return [answers]
    return [str(a) for a in answers] if isinstance(answers, list) else []


def supports_of(dataset: BeirDataset, query_id: str) -> set[str]:
    return {doc for doc, grade in dataset.qrels.get(query_id, {}).items() if grade > 0}


def reply_text(call: Mapping[str, Any]) -> str:
    """A recorded call's reply as the model gave it: the text, then (native function calling) its calls."""
    calls = call.get("tool_calls") or []
    return f"{call.get('completion', '')}\n{json.dumps(calls) if calls else ''}".strip()


def trace_usage(trace: Mapping[str, Any] | None) -> tuple[Usage, list[str]]:
    """The model calls, prompt and completion tokens and raw replies (in call order) of one recorded request."""
    calls = list((trace or {}).get("llm_calls", []))
    usage = Usage(
        len(calls),
        sum(int(c.get("prompt_tokens", 0)) for c in calls),
        sum(int(c.get("completion_tokens", 0)) for c in calls),
    )
    return usage, [reply_text(c) for c in calls]


def ask_once(
    engine: Engine,
    dataset: BeirDataset,
    query: Query,
    mode: str,
    doc_of_source: dict[str, str],
    clock: Callable[[], float] = time.perf_counter,
) -> AnswerRow:
    """One question in one mode, with a fresh conversation, scored; the model's work from its trace (traces
    must be on)."""
    start = clock()
    events = engine.chat.ask(query.text, (), None, mode=mode, owner=OWNER)  # type: ignore[arg-type]
    seen = collect(events, mode, doc_of_source, doc_of_chunk_id)
    seconds = clock() - start
    newest = engine.observability.traces(OWNER, limit=1)
    trace = engine.observability.trace(newest[0].id, OWNER) if newest else None
    usage, seen.replies = trace_usage(trace.to_dict() if trace is not None else None)
    return score_row(
        query.query_id,
        query.text,
        gold_answers(query),
        supports_of(dataset, query.query_id),
        mode,
        seen,
        usage,
        seconds,
    )
