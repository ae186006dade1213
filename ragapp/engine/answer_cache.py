"""The answer cache: a question asked again is answered at once with the checked answer kept the first time.

Built beside the retrieval cache (``ragapp.retrieval.pipeline.RetrievalCache``, in memory, per process), which
only saves the search: this one saves the model's answer too, and keeps it in the relational store
(``ragapp.store.answer_cache``) so every replica, and the next start, serve it.

An answer is found again only under the same key, a digest of everything that changes it:
- the question, normalised (case, spacing and the closing punctuation do not count; a paraphrase misses);
- the mode asked for (workflow, agent, auto);
- the knowledge bases searched *as narrowed to what the asker may read* (so it never crosses access rules: a
  user who reads other knowledge bases has another key) and the documents a filter admits;
- the catalog's version, which every write bumps (a document added, replaced, deleted, renamed, moved,
  re-indexed or re-tagged anywhere), and the intent tree's (routing decides where to search);
- the settings that shape answers (model, retrieval, workflow, agent, reranker, embedder).
The catalog's version is one counter for all knowledge bases: a change in any of them makes every kept answer
miss. Coarser than a version per knowledge base, but it needs no bookkeeping in the many write paths and can
never serve an answer that a change should have thrown away.

Only a question that stands alone is cached (no earlier turns, no clarification: a follow-up means something
else in another conversation), and only a complete, checked answer is kept: grounded, not abstained, its
confidence assessed and not low, nothing degraded or warned about on the way, the stream read to its end (a
stopped answer never reaches the end). "Not in the documents" is not kept: it is cheap to say again, and the
same question may be asked because a document was just added elsewhere.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from ragapp.config import Settings
from ragapp.core.events import (
    AnswerEvent,
    CachedEvent,
    ClarifyEvent,
    EngineEvent,
    NoticeEvent,
    RetrievalEvent,
    TraceEvent,
)
from ragapp.core.serial import dump, load
from ragapp.core.types import Docs, Scope
from ragapp.retrieval.pipeline import normalise_query
from ragapp.store.answer_cache import AnswerCacheStore

log = logging.getLogger(__name__)

# The settings groups whose change changes answers (the cache's own, the UI's, accounts... do not).
_ANSWERING = ("llm", "embedding", "rerank", "retrieval", "workflow", "agent")


def cache_question(question: str) -> str:
    """``question`` as the cache compares it: as the search does (case, spacing), without its closing
    punctuation ("Battery life?" and "battery life" are one question)."""
    return re.sub(r"[\s?？!！.。]+$", "", normalise_query(question))


@dataclass(frozen=True)
class Lookup:
    """Where a question's answer is kept (``key``), and what was kept there (``hit``; None: nothing yet)."""

    key: str
    hit: tuple[CachedEvent, AnswerEvent] | None


class AnswerCache:
    """``version()``: what moves whenever the documents or the intents change (catalog and intent tree
    versions). ``store`` None: the cache is off."""

    def __init__(self, store: AnswerCacheStore | None, settings: Settings, version: Callable[[], str]) -> None:
        self._store = store if settings.answer_cache.enabled else None
        self._version = version
        answering = {name: getattr(settings, name).model_dump(mode="json") for name in _ANSWERING}
        self._settings_digest = _digest(answering)

    @property
    def enabled(self) -> bool:
        return self._store is not None

    def key(self, question: str, mode: str, kbs: Scope, docs: Docs) -> str:
        """The key ``question`` is kept under, asked in ``mode`` over ``kbs`` (as readable) and ``docs``."""
        parts = {
            "question": cache_question(question),
            "mode": mode,
            "kbs": sorted(kbs) if kbs is not None else None,
            "docs": sorted(docs) if docs is not None else None,
            "version": self._version(),
            "settings": self._settings_digest,
        }
        return _digest(parts)

    def look_up(self, question: str, mode: str, kbs: Scope, docs: Docs) -> Lookup | None:
        """The question's key and what is kept under it; None when the cache is off or cannot be read (a
        broken cache never costs an answer: the question is answered as if it were off)."""
        if self._store is None:
            return None
        try:
            key = self.key(question, mode, kbs, docs)
            stored = self._store.get(key)
        except Exception:
            log.warning("the answer cache could not be read; answering without it", exc_info=True)
            return None
        if stored is None:
            return Lookup(key, None)
        answer = load(AnswerEvent, stored.answer)
        return Lookup(key, (CachedEvent(stored.answered_at, stored.trace_id), answer))

    def served(self, hit: tuple[CachedEvent, AnswerEvent]) -> Iterator[EngineEvent]:
        """The events of an answer kept before: that it was, then the answer with its citations."""
        yield from hit

    def kept(self, events: Iterator[EngineEvent], key: str, question: str) -> Iterator[EngineEvent]:
        """``events`` passed on as they come; once read to their end, the answer is kept under ``key`` when it
        is complete and checked (see the module)."""
        trace_id, answer, clean = "", None, True
        for event in events:
            if isinstance(event, TraceEvent):
                trace_id = event.trace_id
            elif isinstance(event, AnswerEvent):
                answer = event
            elif _spoils(event):
                clean = False
            yield event
        if clean and answer is not None and keepable(answer) and self._store is not None:
            try:
                self._store.put(key, question, dump(answer), trace_id)
            except Exception:
                log.warning("the answer could not be kept in the answer cache", exc_info=True)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


def keepable(answer: AnswerEvent) -> bool:
    """A complete, checked answer: grounded, not abstained, cited, its confidence assessed and not low."""
    confident = answer.confidence is not None and answer.confidence.level != "low"
    return answer.grounded and not answer.abstained and bool(answer.citations) and confident


def _spoils(event: EngineEvent) -> bool:
    """An event after which the answer is not kept: a question back, a warning (a degraded search, a fallback
    taken), or an answer that was itself served from the cache."""
    if isinstance(event, NoticeEvent):
        return event.level == "warning"
    if isinstance(event, RetrievalEvent):
        return bool(event.degraded)
    return isinstance(event, ClarifyEvent | CachedEvent)


def stands_alone(history: Sequence[object], summary: str, clarified: object) -> bool:
    """A question asked with no earlier turns and not answering a question back: its answer does not depend
    on the conversation, so it may be served to (and from) anyone asking the same."""
    return not history and not summary.strip() and clarified is None


def _digest(value: object) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
