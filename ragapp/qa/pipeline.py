"""Question -> streamed, cited answer, top to bottom, as a stream of engine events.

retrieve -> (nothing relevant: say so) -> prompt with numbered passages -> stream tokens -> map [n] back
to chunks. A model that fails, hangs or returns nothing still leaves the user with the passages found.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence

from ragapp.config import LLMSettings
from ragapp.errors import LLMError
from ragapp.lang import is_chinese
from ragapp.models.llm import LLM, stream_within
from ragapp.qa.citations import citations_for
from ragapp.qa.prompts import answer_messages, not_found_message
from ragapp.retrieval.pipeline import RetrievalPipeline
from ragapp.tracing.events import AnswerEvent, EngineEvent, NoticeEvent, RetrievalEvent, StageEvent, TokenEvent
from ragapp.types import ChatTurn, Citation, Scope

log = logging.getLogger(__name__)


class AnswerPipeline:
    def __init__(self, retrieval: RetrievalPipeline, llm: LLM, settings: LLMSettings) -> None:
        self._retrieval = retrieval
        self._llm = llm
        self._settings = settings

    def ask(self, question: str, history: Sequence[ChatTurn] = (), kbs: Scope = None) -> Iterator[EngineEvent]:
        """Answer ``question`` from the knowledge bases ``kbs`` (None: all of them)."""
        question = question.strip()
        yield StageEvent("retrieve", "started")
        start = time.perf_counter()
        result = self._retrieval.retrieve(question, kbs)
        for message in result.degraded:
            yield NoticeEvent(message, level="warning")
        yield StageEvent(
            "retrieve",
            "finished",
            duration_s=time.perf_counter() - start,
            detail={
                "channels": {r.channel: len(r.hits) for r in result.channel_results},
                "candidates": len(result.candidates),
                "relevant": len(result.chunks),
                "fusion": self._retrieval.settings.fusion,
                "reranker": self._retrieval.reranker.name,
                "cached": result.cached,
                "kbs": sorted(kbs) if kbs is not None else "all",
            },
        )
        yield RetrievalEvent(result.chunks, result.degraded)
        if not result.chunks:
            text = not_found_message(question)
            yield TokenEvent(text)
            yield AnswerEvent(text, (), grounded=False)
            return

        messages = answer_messages(question, result.chunks, history)
        yield StageEvent("generate", "started", detail={"model": self._llm.name})
        start = time.perf_counter()
        parts: list[str] = []
        error: str | None = None
        try:
            pieces = stream_within(
                lambda: self._llm.stream_chat(messages, max_tokens=self._settings.max_tokens),
                self._settings.timeout_s,
            )
            for piece in pieces:
                parts.append(piece)
                yield TokenEvent(piece)
        except LLMError as exc:
            error = str(exc)
        except Exception as exc:  # a backend bug must not cost the user the passages we found
            log.exception("LLM backend failed")
            error = f"the language model failed ({type(exc).__name__}: {exc})"
        text = "".join(parts).strip()
        if not text and error is None:
            error = "the language model returned an empty answer"
        duration = time.perf_counter() - start
        if error is not None:
            yield StageEvent("generate", "failed", duration_s=duration, error=error)
            yield NoticeEvent(error[:1].upper() + error[1:], level="warning")
            if not text:
                text = _passages_only(question, len(result.chunks))
                yield TokenEvent(text)
                citations = tuple(Citation(n, c.chunk, c.rerank_score) for n, c in enumerate(result.chunks, start=1))
                yield AnswerEvent(text, citations, grounded=True)
                return
        else:
            yield StageEvent("generate", "finished", duration_s=duration, detail={"chars": len(text)})
        yield AnswerEvent(text, citations_for(text, result.chunks), grounded=True)


def _passages_only(question: str, count: int) -> str:
    markers = " ".join(f"[{n}]" for n in range(1, count + 1))
    if is_chinese(question):
        return f"模型暂时无法生成回答。以下是知识库中最相关的段落：{markers}"
    return f"The model could not produce an answer right now. These are the most relevant passages: {markers}"
