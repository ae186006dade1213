"""Question -> the chunks that go into the prompt.

channels (concurrent, each within its time budget) -> fusion by chunk id -> candidate cut -> rerank
-> relevance gate (``relevance.decide``) -> context_top_k. A channel that fails or runs out of time
contributes nothing and is named in ``degraded``; the other channels still answer. Results are cached per
(question, scope, documents, settings, catalog version), so any upload, delete or tag makes every cached result
stale. A document filter (``docs``, resolved from a ``DocumentFilter`` by the caller) is applied inside each
channel, before fusion; when it admits no document nothing is searched, and the result says so. The
version a search reads is also the one it catches up to first (``catch_up``): a write that has returned, here
or in another replica, is seen by the next search.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import replace

from ragapp.config import RetrievalSettings
from ragapp.core.filters import DocumentFilter
from ragapp.core.said import english_of
from ragapp.core.types import REMOTE_PREFIX, ChannelResult, Docs, RetrievalResult, RetrievedChunk, Said, Scope
from ragapp.rerank.base import Reranker
from ragapp.retrieval.channels import Channel
from ragapp.retrieval.fusion import FUSIONS, contributions, standardised
from ragapp.retrieval.relevance import RelevanceRules, candidates_of, decide
from ragapp.retrieval.relevance import is_relevant as is_relevant  # where tests and tools have imported it
from ragapp.store.catalog import Catalog
from ragapp.tracing.context import report

log = logging.getLogger(__name__)


class RetrievalCache:
    """A small LRU of results. Keys carry the catalog version, so writes invalidate without bookkeeping."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[tuple[object, ...], RetrievalResult] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[object, ...]) -> RetrievalResult | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: tuple[object, ...], result: RetrievalResult) -> None:
        if self._size <= 0:
            return
        with self._lock:
            self._items[key] = result
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


def normalise_query(query: str) -> str:
    """Case and spacing do not change what a question means to the channels."""
    return re.sub(r"\s+", " ", query).strip().casefold()


class RetrievalPipeline:
    def __init__(
        self,
        channels: Sequence[Channel],
        catalog: Catalog,
        reranker: Reranker,
        settings: RetrievalSettings,
        catch_up: Callable[[int], bool] | None = None,
        owns_channels: bool = True,
    ) -> None:
        """``catch_up(version)`` runs before each search that is not cached, with the catalog version the
        search reads: it brings what the process keeps of the stores up to that version and says whether they
        are there (``KnowledgeStore.catch_up``; None: the channels are always current). ``owns_channels``:
        ``close`` closes them too (a variant shares its parent's)."""
        self._channels = list(channels)
        self._owns_channels = owns_channels
        self._catch_up = catch_up
        self._catalog = catalog
        self._reranker = reranker
        self._settings = settings
        self._fuse = FUSIONS.get(settings.fusion)
        self._cache = RetrievalCache(settings.cache_size)
        # A bounded pool shared by all requests, sized for the UI's 4 requests at a time with every channel
        # each; a hung channel occupies one worker, never the request.
        self._pool = ThreadPoolExecutor(max_workers=max(8, 4 * len(self._channels)), thread_name_prefix="channel")

    @property
    def reranker(self) -> Reranker:
        return self._reranker

    @property
    def settings(self) -> RetrievalSettings:
        return self._settings

    def documents_matching(self, where: DocumentFilter, kbs: Scope = None) -> Docs:
        """The documents of ``kbs`` that ``where`` admits, to pass as ``docs``; None for an empty filter."""
        return None if where.is_empty() else self._catalog.matching(where, kbs)

    def variant(self, settings: RetrievalSettings, reranker: Reranker | None = None) -> RetrievalPipeline:
        """The same channels and catalog with other settings (and reranker), for trying a change before
        keeping it. Uncached; ``close`` it when done."""
        return RetrievalPipeline(
            self._channels,
            self._catalog,
            reranker or self._reranker,
            settings.model_copy(update={"cache_size": 0}),
            self._catch_up,
            owns_channels=False,
        )

    def close(self) -> None:
        """Stop the channel workers (a channel still running past its budget finishes on its own)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        for channel in self._channels if self._owns_channels else ():
            channel.close()

    def retrieve(
        self,
        query: str,
        kbs: Scope = None,
        top_k: int | None = None,
        channels: Sequence[str] | None = None,
        docs: Docs = None,
    ) -> RetrievalResult:
        """The chunks for ``query`` from the knowledge bases ``kbs`` (None: all) and the documents ``docs`` (None:
        any; see ``Catalog.matching``); at most ``top_k`` of them (None: ``context_top_k``), found by the named
        ``channels`` (None: all). Never raises for a failing channel or reranker: what failed is listed in
        ``degraded``."""
        started = time.perf_counter()
        if docs is not None and not docs:
            result = RetrievalResult(
                query, (), (), (), degraded=(NO_MATCH,), kbs=tuple(sorted(kbs)) if kbs is not None else None,
                filtered=0, settings=self._settings.model_dump(),
            )  # fmt: skip
        else:
            result = self._retrieve_cached(query, kbs, top_k, channels, docs)
        seconds = time.perf_counter() - started
        report(lambda trace: trace.retrieval(result, seconds))  # the request's trace, if it has one
        return result

    def _retrieve_cached(
        self, query: str, kbs: Scope, top_k: int | None, channels: Sequence[str] | None, docs: Docs = None
    ) -> RetrievalResult:
        scope = tuple(sorted(kbs)) if kbs is not None else None
        top_k = top_k or self._settings.context_top_k
        names = tuple(sorted(channels)) if channels is not None else None
        version = self._catalog.version
        key = (normalise_query(query), scope, top_k, names, docs, version)
        hit = self._cache.get(key)
        if hit is not None:
            return replace(hit, query=query, cached=True)
        current = self._catch_up(version) if self._catch_up is not None else True
        result = self._retrieve(query, kbs, scope, top_k, names, docs)
        if current and not result.degraded:  # a timeout is transient: do not remember its poorer answer
            self._cache.put(key, result)
        return result

    def _retrieve(
        self,
        query: str,
        kbs: Scope,
        scope: tuple[str, ...] | None,
        top_k: int,
        names: tuple[str, ...] | None,
        docs: Docs = None,
    ) -> RetrievalResult:
        s = self._settings
        timings: dict[str, float] = {}
        results, degraded = self._run_channels(query, kbs, names, docs)
        start = time.perf_counter()
        rankings = {r.channel: r.hits for r in results}
        fused = self._fuse(rankings, s)[: s.candidate_limit]
        carried = {h.chunk_id: h.chunk for r in results for h in r.hits if h.chunk is not None}  # remote passages
        chunks = self._catalog.chunks(c.chunk_id for c in fused if c.chunk_id not in carried) | carried
        candidates = [
            RetrievedChunk(chunks[c.chunk_id], c.fused_score, c.channel_ranks, c.channel_scores)
            for c in fused
            if c.chunk_id in chunks  # the catalog is the truth: an id it no longer has is dropped
        ]
        timings["fusion"] = time.perf_counter() - start

        start = time.perf_counter()
        reranked = self._reranker.enabled
        try:
            ranked = self._reranker.rerank(query, candidates)
        except Exception as exc:  # a broken reranker must not cost the user an answer
            log.warning("reranker failed, keeping fused order: %r", exc)
            degraded.append((Said("degraded.reranker", {"error": type(exc).__name__}),))
            ranked, reranked = candidates, False
        if self._reranker.enabled and s.rerank_weight < 1.0:
            ranked = blend_order(candidates, ranked, s.rerank_weight)
        timings["rerank"] = time.perf_counter() - start

        decisions = decide(candidates_of(query, ranked), RelevanceRules.from_settings(s), reranked)
        relevant = [c for c, d in zip(ranked, decisions, strict=True) if d.kept]
        return RetrievalResult(
            query=query,
            chunks=tuple(relevant[:top_k]),
            candidates=tuple(ranked),
            channel_results=tuple(results),
            degraded=tuple(english_of(d) for d in degraded),
            degraded_said={english_of(d): d for d in degraded},
            timings=timings | _channel_timings(results),
            settings=s.model_dump() | {"reranker": self._reranker.name, "top_k": top_k},
            kbs=scope,
            filtered=len(docs) if docs is not None else None,
            contributions=contributions(rankings, s),
            decisions={c.chunk.chunk_id: d for c, d in zip(ranked, decisions, strict=True)},
        )

    def _run_channels(
        self, query: str, kbs: Scope, names: tuple[str, ...] | None = None, docs: Docs = None
    ) -> tuple[list[ChannelResult], list[tuple[Said, ...]]]:
        budget = self._settings.recall_budget
        timeout = self._settings.channel_timeout_s
        chosen = [c for c in self._channels if names is None or c.name in names]
        started: dict[str, float] = {}  # channel -> when a worker took it up (its budget counts from then)

        def run(channel: Channel) -> ChannelResult:
            started[channel.name] = time.monotonic()
            return channel.retrieve(query, budget, kbs, docs)

        submitted = time.monotonic()
        futures: dict[Future[ChannelResult], Channel] = {self._pool.submit(run, c): c for c in chosen}
        pending = set(futures)
        late: list[Future[ChannelResult]] = []
        while pending:
            now = time.monotonic()
            # A channel still queued for a worker (other requests hold them all) is not timed out by its
            # budget, only by QUEUE_WAITS budgets in all; one that runs gets its budget from its start.
            deadlines = {
                f: started[futures[f].name] + timeout
                if futures[f].name in started
                else submitted + QUEUE_WAITS * timeout
                for f in pending
            }
            for future in [f for f, deadline in deadlines.items() if deadline <= now and not f.done()]:
                pending.discard(future)
                late.append(future)
            if not pending:
                break
            finished, _ = wait(pending, timeout=min(deadlines[f] for f in pending) - now, return_when=FIRST_COMPLETED)
            pending -= finished
        done = [f for f in futures if f not in late]
        results: list[ChannelResult] = []
        problems: list[Said] = []
        for future in late:
            # Not started yet: it never will be. Running: it cannot be stopped; its late result is ignored.
            future.cancel()
            problems.append(Said("degraded.timed_out", {"channel": futures[future].name, "s": float(timeout)}))
        for future in done:
            name = futures[future].name
            try:
                results.append(future.result())
            except Exception as exc:
                log.warning("channel %s failed: %r", name, exc)
                problems.append(Said("degraded.failed", {"channel": name, "error": type(exc).__name__}))
        answered = [c.name for c in self._channels if any(r.channel == c.name for r in results)]
        outcome = Said("degraded.uses", {"channels": answered}) if answered else Said("degraded.none_answered")
        degraded: list[tuple[Said, ...]] = [(problem, outcome) for problem in problems]
        if docs is not None and any(c.name.startswith(REMOTE_PREFIX) for c in chosen):
            degraded.append((REMOTE_SKIPPED,))
        order = {c.name: i for i, c in enumerate(self._channels)}
        results.sort(key=lambda r: order[r.channel])
        return results, degraded


NO_MATCH = "No document matches the filter; nothing was searched. Loosen the filter or check the tags and paths."
REMOTE_SKIPPED = Said("degraded.remote_skipped")  # a document filter applies to this app's documents only
QUEUE_WAITS = 4  # how many channel budgets a search may wait for a free worker before it gives up


def blend_order(
    fused: Sequence[RetrievedChunk], reranked: Sequence[RetrievedChunk], weight: float
) -> list[RetrievedChunk]:
    """The candidates ordered by (1 - ``weight``) x fused score + ``weight`` x rerank score, each standardised
    (z-score) over this question's candidates: 1 trusts the reranker alone, 0 keeps the fused order.

    Scores rather than ranks, so that a confident reranker (one passage far above the rest) moves it further
    than a hesitant one, and a close call between two passages stays a close call. A chunk the reranker did
    not judge (no rerank score) counts its fused standing twice. Each chunk keeps its rerank score."""
    if weight >= 1.0:
        return list(reranked)
    if not reranked:
        return []
    fused_z = standardised({c.chunk.chunk_id: c.fused_score for c in fused})
    rerank_z = standardised({c.chunk.chunk_id: c.rerank_score for c in reranked if c.rerank_score is not None})

    def blended(c: RetrievedChunk) -> float:
        f = fused_z.get(c.chunk.chunk_id, 0.0)
        return (1.0 - weight) * f + weight * rerank_z.get(c.chunk.chunk_id, f)

    keyed = sorted(enumerate(reranked), key=lambda t: (-blended(t[1]), t[0]))  # ties go to the reranker
    return [c for _, c in keyed]


def _channel_timings(results: Sequence[ChannelResult]) -> dict[str, float]:
    timings: dict[str, float] = {}
    for r in results:
        timings[f"channel:{r.channel}"] = r.duration_s
        timings.update({f"channel:{r.channel}:{stage}": s for stage, s in r.stages.items()})
    return timings
