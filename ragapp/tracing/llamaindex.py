"""LlamaIndex's own instrumentation, folded into our traces: each LlamaIndex span (the sentence splitter at
ingestion, any retriever, embedding or LLM component a plug-in brings) becomes a span of the request that ran it.

Spans are only tracked while a trace is being recorded (``current()`` is set), so untraced work costs nothing,
and nothing accumulates between requests (LlamaIndex's ``SimpleSpanHandler`` keeps every span forever).
"""

from __future__ import annotations

import inspect
import threading
import time
from typing import Any

from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.span.simple import SimpleSpan
from llama_index.core.instrumentation.span_handlers import BaseSpanHandler

from ragapp.tracing.context import current, report

_installed = threading.Lock()
_done = False


class TraceSpanHandler(BaseSpanHandler[SimpleSpan]):
    @classmethod
    def class_name(cls) -> str:
        return "RagappTraceSpanHandler"

    def new_span(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any | None = None,
        parent_span_id: str | None = None,
        tags: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> SimpleSpan | None:
        if current() is None:
            return None
        return SimpleSpan(id_=id_, parent_id=parent_span_id, tags={"started": time.perf_counter()})

    def prepare_to_exit_span(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any | None = None,
        result: Any | None = None,
        **kwargs: Any,
    ) -> SimpleSpan | None:
        return self._report(id_, None)

    def prepare_to_drop_span(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any | None = None,
        err: BaseException | None = None,
        **kwargs: Any,
    ) -> SimpleSpan | None:
        return self._report(id_, f"{type(err).__name__}: {err}" if err else "dropped")

    def _report(self, id_: str, error: str | None) -> SimpleSpan | None:
        span = self.open_spans.get(id_)
        if span is None:
            return None
        started = float(span.tags.get("started", time.perf_counter()))
        seconds = time.perf_counter() - started
        name = "llamaindex " + id_.split("-", 1)[0]  # "SentenceSplitter.split_text-<uuid>"
        report(lambda trace: trace.library_span(name, started, seconds, error))
        return span


def install() -> None:
    """Attach the handler to LlamaIndex's root dispatcher, once per process."""
    global _done
    with _installed:
        if not _done:
            get_dispatcher().add_span_handler(TraceSpanHandler())
            _done = True
