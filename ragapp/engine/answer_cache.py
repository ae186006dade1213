"""The answer cache: a question asked again is answered at once with the checked answer kept the first time.

Built beside the retrieval cache (``ragapp.retrieval.pipeline.RetrievalCache``, in memory, per process), which
only saves the search: this one saves the model's answer too, and keeps it in the relational store
(``ragapp.store.answer_cache``) so every replica, and the next start, serve it.

An answer is found again only under the same key, a digest of everything that changes it:
- the question, normalised (case, spacing and the closing punctuation do not count); with
  ``answer_cache.paraphrase_min_similarity`` set, a question the embedder finds at least that similar to one
  kept in the same context (everything below the same) is served that one's answer, saying so;
- the mode asked for (workflow, agent, auto);
- the knowledge bases searched *as narrowed to what the asker may read* (so it never crosses access rules: a
  user who reads other knowledge bases has another key) and the documents a filter admits;
- the versions of the knowledge bases in that scope (``Catalog.kb_versions``: every one when none was picked
  and accounts are off), which the catalog's triggers bump whenever a document of theirs is added, replaced,
  deleted, renamed, moved in or out, re-indexed or re-tagged, whatever path wrote it; and the intent tree's
  version (routing decides where to search);
- the settings that shape answers (model, retrieval, workflow, agent, reranker, embedder).
So a change to a document of knowledge base "a" makes the answers over scopes that include "a" miss, and keeps
those over the others. A question asked over every knowledge base (none picked, accounts off) depends on all of
them, and on the ones not made yet: its scope's version lists every knowledge base ever written to, so a new one
changes it too.

Only a question that stands alone is cached: the first of a chat, or a later one that needs nothing from the
conversation (the rewriting's own rule: it names its subject and no word points back; ``stands_alone``), never a
follow-up ("and the V2?": it means something else in another conversation) nor a reply to a question back. Only a
complete, checked answer is kept: grounded, not abstained, its confidence assessed and not low, nothing degraded
or warned about on the way, no passage from a remote source (another ragapp's documents change without this
catalog's version moving), the stream read to its end (a stopped answer never reaches the end). "Not in the
documents" is not kept: it is cheap to say again, and the same question may be asked because a document was just
added elsewhere.
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
from ragapp.core.types import REMOTE_PREFIX, Docs, Scope
from ragapp.qa.rewrite import looks_multi_part
from ragapp.qa.rewrite import stands_alone as question_stands_alone
from ragapp.retrieval.pipeline import normalise_query
from ragapp.store.answer_cache import AnswerCacheStore, StoredAnswer

log = logging.getLogger(__name__)

# The settings groups whose change changes answers (the cache's own, the UI's, accounts... do not).
_ANSWERING = ("llm", "embedding", "rerank", "retrieval", "workflow", "agent")


def cache_question(question: str) -> str:
    """``question`` as the cache compares it: as the search does (case, spacing), without its closing
    punctuation ("Battery life?" and "battery life" are one question)."""
    return re.sub(r"[\s?？!！.。]+$", "", normalise_query(question))


@dataclass(frozen=True)
class Lookup:
    """Where a question's answer is kept (``key``, within ``context``: the key without the question), what was
    kept for it (``hit``; None: nothing yet), and the question's embedding (with paraphrase matching on)."""

    key: str
    hit: tuple[CachedEvent, AnswerEvent] | None
    context: str = ""
    vector: tuple[float, ...] | None = None


Embed = Callable[[str], Sequence[float]]  # a question's normalised embedding


class AnswerCache:
    """``version(kbs)``: what moves whenever a document of the knowledge bases ``kbs`` (None: all) or the
    intents change (those knowledge bases' and the intent tree's versions). ``store`` None: the cache is off.
    ``embed``: the question embedder, for paraphrase matching (``answer_cache.paraphrase_min_similarity``; off
    without it)."""

    def __init__(
        self,
        store: AnswerCacheStore | None,
        settings: Settings,
        version: Callable[[Scope], str],
        embed: Embed | None = None,
    ) -> None:
        self._store = store if settings.answer_cache.enabled else None
        self._version = version
        self._min_similarity = settings.answer_cache.paraphrase_min_similarity
        self._embed = embed if self._min_similarity > 0 else None
        answering = {name: getattr(settings, name).model_dump(mode="json") for name in _ANSWERING}
        self._settings_digest = _digest(answering)

    @property
    def enabled(self) -> bool:
        return self._store is not None

    def context(self, mode: str, kbs: Scope, docs: Docs) -> str:
        """Everything but the question that a kept answer must share: ``mode``, ``kbs`` (as readable), ``docs``,
        the version of those knowledge bases' documents and of the intents, and the answering settings."""
        parts = {
            "mode": mode,
            "kbs": sorted(kbs) if kbs is not None else None,
            "docs": sorted(docs) if docs is not None else None,
            "version": self._version(kbs),
            "settings": self._settings_digest,
        }
        return _digest(parts)

    @staticmethod
    def key(question: str, context: str) -> str:
        """The key ``question`` is kept under in ``context``."""
        return _digest({"question": cache_question(question), "context": context})

    def look_up(self, question: str, mode: str, kbs: Scope, docs: Docs) -> Lookup | None:
        """The question's key and what is kept for it (under that key, or with paraphrase matching on, for the
        most similar question of the same context); None when the cache is off or cannot be read (a broken
        cache never costs an answer: the question is answered as if it were off)."""
        if self._store is None:
            return None
        try:
            context = self.context(mode, kbs, docs)
            key = self.key(question, context)
            stored, vector, similarity = self._store.get(key), None, None
            if stored is None and self._embed is not None:
                vector = tuple(float(v) for v in self._embed(question))
                stored, similarity = self._nearest(context, vector)
        except Exception:
            log.warning("the answer cache could not be read; answering without it", exc_info=True)
            return None
        if stored is None:
            return Lookup(key, None, context, vector)
        answer = load(AnswerEvent, stored.answer)
        said = stored.question if similarity is not None else ""
        return Lookup(key, (CachedEvent(stored.answered_at, stored.trace_id, said, similarity), answer), context)

    def _nearest(self, context: str, vector: tuple[float, ...]) -> tuple[StoredAnswer | None, float | None]:
        """The answer kept for the question of ``context`` most similar to ``vector``, if similar enough."""
        assert self._store is not None
        best_key, best = "", -1.0
        for key, other in self._store.nearest(context):
            if len(other) == len(vector):
                similarity = sum(a * b for a, b in zip(vector, other, strict=True))  # both normalised: cosine
                if similarity > best:
                    best_key, best = key, similarity
        if best < self._min_similarity:
            return None, None
        found = self._store.get(best_key)
        return (found, round(best, 4)) if found is not None else (None, None)

    def served(self, hit: tuple[CachedEvent, AnswerEvent]) -> Iterator[EngineEvent]:
        """The events of an answer kept before: that it was, then the answer with its citations."""
        yield from hit

    def kept(self, events: Iterator[EngineEvent], lookup: Lookup, question: str) -> Iterator[EngineEvent]:
        """``events`` passed on as they come; once read to their end, the answer is kept under the lookup's key
        when it is complete and checked (see the module)."""
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
                vector = lookup.vector
                if vector is None and self._embed is not None:  # "Answer again" looked nothing up
                    vector = tuple(float(v) for v in self._embed(question))
                self._store.put(lookup.key, question, dump(answer), trace_id, lookup.context, vector)
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
    taken), passages from a remote source (``retrieval.remotes``: its documents change without bumping this
    catalog's version), or an answer that was itself served from the cache."""
    if isinstance(event, NoticeEvent):
        return event.level == "warning"
    if isinstance(event, RetrievalEvent):  # a passage of another ragapp may change without this one knowing
        remote = any(name.startswith(REMOTE_PREFIX) for c in event.chunks for name in c.channel_ranks)
        return bool(event.degraded) or remote
    return isinstance(event, ClarifyEvent | CachedEvent)


def stands_alone(
    question: str, history: Sequence[object], summary: str, clarified: object, *, parts_rewritten: bool = True
) -> bool:
    """A question whose answer does not depend on the conversation, so it may be served to (and from) anyone
    asking the same: one asked with no earlier turns, or one asked later that needs nothing from them (the rule
    by which it is searched as asked, not rewritten: ``qa.rewrite.stands_alone``, it names its subject and no
    word points back), and never the answer to a question back. ``parts_rewritten``: a question of several
    parts is rewritten with the conversation in view (``workflow.rewrite_multi_part``), so it is not one."""
    if clarified is not None:
        return False
    if not history and not summary.strip():
        return True
    return question_stands_alone(question) and not (parts_rewritten and looks_multi_part(question))


def _digest(value: object) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
