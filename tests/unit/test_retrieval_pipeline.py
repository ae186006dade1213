"""The retrieval pipeline's own logic, with scripted channels over a real SQLite catalog.

Channels here return fixed rankings (and count their calls), so every step after them is checked exactly:
fusion by the configured method and weights, the candidate cut, reranking and its failure, the relevance
gate, ``context_top_k``, the cache and the settings recorded in the result. Real channels are covered by
the integration tests.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from ragapp.config import RetrievalSettings
from ragapp.core.types import (
    DEFAULT_KB,
    ChannelHit,
    Chunk,
    Docs,
    DocumentRecord,
    RetrievalResult,
    RetrievedChunk,
    Scope,
)
from ragapp.retrieval.channels import Channel
from ragapp.retrieval.fusion import FUSIONS, to_hits
from ragapp.retrieval.pipeline import RetrievalPipeline, normalise_query
from ragapp.store.catalog import Catalog, utc_now

CHUNK_IDS = ("a", "b", "c", "d", "e", "f")


class ScriptedChannel(Channel):
    """Returns a fixed ranking (cut to ``top_k``), raises, or stalls; records every call."""

    def __init__(self, name: str, pairs: Sequence[tuple[str, float]] = (), *, error: Exception | None = None) -> None:
        self.name = name
        self.pairs = list(pairs)
        self.error = error
        self.calls: list[tuple[str, int, Scope]] = []

    def _retrieve(self, query: str, top_k: int, kbs: Scope, docs: Docs = None) -> list[ChannelHit]:
        self.calls.append((query, top_k, kbs))
        if self.error is not None:
            raise self.error
        return to_hits(self.pairs[:top_k])


class ScriptedReranker:
    """Scores candidates from a table (unknown ids score 0), best first; records what it was given."""

    name = "scripted-reranker"
    enabled = True

    def __init__(self, scores: dict[str, float] | None = None, error: Exception | None = None) -> None:
        self.scores = scores or {}
        self.error = error
        self.seen: list[list[str]] = []

    def rerank(self, query: str, candidates: Sequence[RetrievedChunk]) -> list[RetrievedChunk]:
        self.seen.append([c.chunk.chunk_id for c in candidates])
        if self.error is not None:
            raise self.error
        scored = [replace(c, rerank_score=self.scores.get(c.chunk.chunk_id, 0.0)) for c in candidates]
        return sorted(scored, key=lambda c: -(c.rerank_score or 0.0))


class PassThrough:
    name = "off"
    enabled = False

    def rerank(self, query: str, candidates: Sequence[RetrievedChunk]) -> list[RetrievedChunk]:
        return list(candidates)


def add_document(catalog: Catalog, doc_id: str, chunk_ids: Sequence[str], kb: str = DEFAULT_KB) -> None:
    chunks = [
        Chunk(chunk_id=cid, doc_id=doc_id, ordinal=i, text=f"text of chunk {cid}", source=f"{doc_id}.txt")
        for i, cid in enumerate(chunk_ids)
    ]
    record = DocumentRecord(
        doc_id=doc_id,
        name=f"{doc_id}.txt",
        file_type="txt",
        content_hash=hashlib.sha256(doc_id.encode()).hexdigest(),
        size_bytes=10,
        pages=None,
        chunk_count=len(chunks),
        added_at=utc_now(),
        kb=kb,
    )
    with catalog.transaction() as conn:
        catalog.add_document(conn, record, chunks)


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[Catalog]:
    catalog = Catalog(tmp_path / "catalog.sqlite3").start()
    add_document(catalog, "doc", CHUNK_IDS)
    yield catalog
    catalog.close()


# Keyword scores of 9 pass the gate on their own (min_keyword_score 6), so without a reranker every fused
# candidate is relevant and the order seen in ``chunks`` is the fused order.
VECTOR = [("a", 0.95), ("b", 0.90), ("c", 0.85), ("d", 0.80), ("e", 0.75), ("f", 0.70)]
KEYWORD = [("c", 9.0), ("a", 8.5), ("f", 8.0)]


@pytest.fixture
def make_pipeline(catalog: Catalog) -> Callable[..., RetrievalPipeline]:
    def make(
        channels: Sequence[Channel] | None = None, reranker: object | None = None, **knobs: object
    ) -> RetrievalPipeline:
        if channels is None:
            channels = [ScriptedChannel("vector", VECTOR), ScriptedChannel("keyword", KEYWORD)]
        return RetrievalPipeline(
            list(channels),
            catalog,
            reranker or PassThrough(),  # type: ignore[arg-type]
            # The expected orders below are worked out for RRF (other fusions say so) and the reranker's own order.
            RetrievalSettings(**({"fusion": "rrf", "rerank_weight": 1.0} | knobs)),  # type: ignore[arg-type]
        )

    return make


def ids(chunks: Sequence[RetrievedChunk]) -> list[str]:
    return [c.chunk.chunk_id for c in chunks]


def problems(result: RetrievalResult) -> list[str]:
    """What went wrong, per degradation message: the part before any '; ...' about what the answer used."""
    return [message.split(";")[0] for message in result.degraded]


# -- fusion, candidate cut, rerank, gate ------------------------------------------------------------


def test_channels_get_the_recall_budget_and_the_scope(make_pipeline: Callable[..., RetrievalPipeline]) -> None:
    vector, keyword = ScriptedChannel("vector", VECTOR), ScriptedChannel("keyword", KEYWORD)
    pipeline = make_pipeline([vector, keyword], recall_budget=4)
    result = pipeline.retrieve("question", frozenset({"default"}))
    assert vector.calls == keyword.calls == [("question", 4, frozenset({"default"}))]
    assert [len(r.hits) for r in result.channel_results] == [4, 3]
    assert "e" not in ids(result.candidates)  # 5th in vector: beyond the budget
    assert result.kbs == ("default",)


def test_candidate_limit_cuts_the_fused_list_before_the_reranker(
    make_pipeline: Callable[..., RetrievalPipeline],
) -> None:
    # RRF k=60, equal weights: a = 1/61 + 1/62, c = 1/63 + 1/61, b = 1/62, f = 1/66 + 1/63, d = 1/64, e = 1/65.
    full = make_pipeline().retrieve("question")
    assert ids(full.candidates) == ["a", "c", "f", "b", "d", "e"]

    reranker = ScriptedReranker({"f": 3.0, "a": 2.0, "c": 1.0, "e": 9.0})
    result = make_pipeline(reranker=reranker, candidate_limit=3).retrieve("question")
    assert reranker.seen == [["a", "c", "f"]]  # the top three fused, in fused order; "e" never reaches it
    assert ids(result.candidates) == ["f", "a", "c"]
    assert [c.rerank_score for c in result.candidates] == [3.0, 2.0, 1.0]


def test_context_top_k_takes_the_best_relevant_chunks(make_pipeline: Callable[..., RetrievalPipeline]) -> None:
    result = make_pipeline(context_top_k=2).retrieve("question")
    assert ids(result.chunks) == ["a", "c"]
    assert len(result.candidates) == 6  # the trace still sees every candidate


def test_min_rerank_score_drops_low_scores_after_reranking(make_pipeline: Callable[..., RetrievalPipeline]) -> None:
    scores = {"a": 0.9, "b": 0.15, "c": -2.0, "d": 0.1, "e": 0.05, "f": 1.5}
    # The threshold alone: the agreement rule (both channels' top 3, tested in test_relevance) would keep "c",
    # the margin rule would drop "a" (0.6 below "f").
    only = {"min_rerank_score": 0.1, "agreement_top_n": 0, "rerank_margin": None}
    result = make_pipeline(reranker=ScriptedReranker(scores), **only).retrieve("question")
    assert ids(result.candidates) == ["f", "a", "b", "d", "e", "c"]
    assert ids(result.chunks) == ["f", "a", "b", "d"]  # 0.1 itself passes: the bound is inclusive
    # With a reranker its score decides, not the channel scores: "c" was keyword's best (9.0) and is out.
    top_two = make_pipeline(reranker=ScriptedReranker(scores), context_top_k=2, **only)
    assert ids(top_two.retrieve("question").chunks) == ["f", "a"]


def test_both_channels_agreeing_keep_a_chunk_the_reranker_scored_low(
    make_pipeline: Callable[..., RetrievalPipeline],
) -> None:
    scores = {"a": 0.9, "b": 0.15, "c": -2.0, "d": 0.1, "e": 0.05, "f": 1.5}
    knobs = {"min_rerank_score": 0.1, "agreement_top_n": 3, "agreement_max_fused_rank": 3, "rerank_margin": None}
    result = make_pipeline(reranker=ScriptedReranker(scores), **knobs).retrieve("question")
    # "c": vector 3, keyword 1, fused rank 2 -> kept at -2.0; "e" (vector only) falls below 0.1.
    assert ids(result.chunks) == ["f", "a", "b", "d", "c"]
    assert set(result.decisions) == set(CHUNK_IDS)  # one decision per candidate
    assert result.decisions["c"].reason == "both channels agree (keyword 1, vector 3; fused rank 2)"
    assert not result.decisions["e"].kept and result.decisions["e"].reason == "rerank score below 0.1"
    # Without a reranker the channel thresholds decide, and say so.
    plain = make_pipeline(**knobs).retrieve("question")
    assert plain.decisions["c"].reason == "keyword score ≥ 6"  # vector 0.85 < 0.875, BM25 9.0
    assert plain.decisions["a"].reason == "vector similarity ≥ 0.875"


def test_a_failing_reranker_keeps_the_fused_order_and_says_so(
    make_pipeline: Callable[..., RetrievalPipeline],
) -> None:
    reranker = ScriptedReranker(error=RuntimeError("CUDA out of memory"))
    pipeline = make_pipeline(reranker=reranker)
    result = pipeline.retrieve("question")
    assert problems(result) == ["reranker failed (RuntimeError)"]
    assert "fused order" in result.degraded[0]
    assert ids(result.candidates) == ["a", "c", "f", "b", "d", "e"]
    assert all(c.rerank_score is None for c in result.candidates)
    # The gate falls back to channel scores: d (vector 0.80) and e (0.75), which keyword did not find, fall
    # below min_vector_similarity (0.875); the rest pass on vector >= 0.875 or keyword >= 6...
    assert ids(result.chunks) == ["a", "c", "f", "b"]
    # ...and a degraded result is not cached: the next request tries the reranker again.
    again = pipeline.retrieve("question")
    assert again.cached is False
    assert len(reranker.seen) == 2


def test_channel_weights_change_the_final_order(make_pipeline: Callable[..., RetrievalPipeline]) -> None:
    def first(**weights: float) -> str:
        channels = [ScriptedChannel("vector", [("a", 0.9), ("b", 0.8)]), ScriptedChannel("keyword", [("b", 9.0)])]
        # a is first in vector only; b is second in vector and first in keyword.
        return ids(make_pipeline(channels, weights=weights).retrieve("question").candidates)[0]

    assert first(vector=1.0, keyword=1.0) == "b"  # 1/62 + 1/61 > 1/61
    assert first(vector=1.0, keyword=0.0) == "a"  # keyword muted
    assert first(vector=5.0, keyword=0.1) == "b"  # 5/62 + 0.1/61 ≈ 0.0823 > 5/61 ≈ 0.0820
    assert first(vector=10.0, keyword=0.1) == "a"  # 10/61 ≈ 0.1639 > 10/62 + 0.1/61 ≈ 0.1629


@pytest.mark.parametrize("fusion", ["rrf", "minmax", "zscore"])
def test_the_configured_fusion_decides_the_order(make_pipeline: Callable[..., RetrievalPipeline], fusion: str) -> None:
    # Ranks and score gaps disagree about "b": 2nd in both channels, but close to the top of keyword's scores.
    vector = [("a", 0.9), ("b", 0.1), ("c", 0.0)]
    keyword = [("c", 5.0), ("b", 4.9), ("a", 0.1)]
    channels = [ScriptedChannel("vector", vector), ScriptedChannel("keyword", keyword)]
    result = make_pipeline(channels, fusion=fusion).retrieve("question")

    expected = FUSIONS.get(fusion)({"vector": to_hits(vector), "keyword": to_hits(keyword)}, RetrievalSettings())
    assert ids(result.candidates) == [c.chunk_id for c in expected]
    assert [c.fused_score for c in result.candidates] == [c.fused_score for c in expected]
    # RRF: a = c = 1/61 + 1/63 > b = 2/62; min-max: b = (0.1/0.9 + 4.8/4.9) / 2 ≈ 0.545 > a = c = 0.5.
    assert ids(result.candidates).index("b") == (2 if fusion == "rrf" else 0)
    assert result.settings["fusion"] == fusion


def test_ids_the_catalog_no_longer_has_are_dropped(make_pipeline: Callable[..., RetrievalPipeline]) -> None:
    channels = [ScriptedChannel("vector", [("gone", 0.99), ("a", 0.9)]), ScriptedChannel("keyword", [("b", 9.0)])]
    result = make_pipeline(channels).retrieve("question")
    assert set(ids(result.candidates)) == {"a", "b"}
    assert ids(result.chunks) == ids(result.candidates)
    assert result.candidates[0].chunk.text.startswith("text of chunk")


def test_the_result_records_every_knob(make_pipeline: Callable[..., RetrievalPipeline]) -> None:
    knobs = {
        "recall_budget": 7,
        "fusion": "zscore",
        "rrf_k": 11,
        "weights": {"vector": 0.3, "keyword": 2.0},
        "candidate_limit": 5,
        "context_top_k": 3,
        "min_rerank_score": -1.5,
        "channel_timeout_s": 2.5,
        "cache_size": 9,
    }
    result = make_pipeline(reranker=ScriptedReranker(), **knobs).retrieve("question")
    assert set(RetrievalSettings.model_fields) | {"reranker"} <= set(result.settings)
    assert {k: result.settings[k] for k in knobs} == knobs
    assert result.settings["reranker"] == "scripted-reranker"
    assert result.settings["channels"] == ["vector", "keyword"]  # the default
    assert len(result.candidates) == 5 and len(result.chunks) == 3


# -- the cache -----------------------------------------------------------------------------------


@pytest.fixture
def counted(
    make_pipeline: Callable[..., RetrievalPipeline],
) -> Callable[..., tuple[RetrievalPipeline, ScriptedChannel]]:
    """A pipeline and its keyword channel, whose ``calls`` tell whether a request reached the channels."""

    def make(**knobs: object) -> tuple[RetrievalPipeline, ScriptedChannel]:
        keyword = ScriptedChannel("keyword", KEYWORD)
        return make_pipeline([ScriptedChannel("vector", VECTOR), keyword], **knobs), keyword

    return make


def test_case_and_spacing_do_not_miss_the_cache(
    counted: Callable[..., tuple[RetrievalPipeline, ScriptedChannel]],
) -> None:
    pipeline, keyword = counted()
    first = pipeline.retrieve("How do I  start the service?")
    second = pipeline.retrieve("  how do i start\tthe SERVICE? ")
    assert (first.cached, second.cached) == (False, True)
    assert len(keyword.calls) == 1
    assert second.query == "  how do i start\tthe SERVICE? "  # the result answers the question as asked
    assert ids(second.chunks) == ids(first.chunks)
    assert normalise_query(" A\n b ") == "a b"


def test_punctuation_and_wording_do_miss_the_cache(
    counted: Callable[..., tuple[RetrievalPipeline, ScriptedChannel]],
) -> None:
    pipeline, keyword = counted()
    pipeline.retrieve("start the service")
    assert pipeline.retrieve("start the service?").cached is False
    assert pipeline.retrieve("stop the service").cached is False
    assert len(keyword.calls) == 3


def test_a_different_scope_misses_the_cache(counted: Callable[..., tuple[RetrievalPipeline, ScriptedChannel]]) -> None:
    pipeline, keyword = counted()
    pipeline.retrieve("question", frozenset({"manuals", "default"}))
    assert pipeline.retrieve("question", frozenset({"default", "manuals"})).cached is True  # same set
    assert pipeline.retrieve("question", frozenset({"default"})).cached is False
    assert pipeline.retrieve("question").cached is False  # all knowledge bases is a scope of its own
    assert [call[2] for call in keyword.calls] == [frozenset({"default", "manuals"}), frozenset({"default"}), None]


def test_a_catalog_write_invalidates_the_cache(
    counted: Callable[..., tuple[RetrievalPipeline, ScriptedChannel]], catalog: Catalog
) -> None:
    pipeline, keyword = counted()
    pipeline.retrieve("question")
    assert pipeline.retrieve("question").cached is True
    add_document(catalog, "another", ["z"])  # an upload: one transaction, one version bump
    after_upload = pipeline.retrieve("question")
    assert after_upload.cached is False
    assert pipeline.retrieve("question").cached is True
    with catalog.transaction():  # any committed write counts, even one that changes no chunk of the answer
        pass
    assert pipeline.retrieve("question").cached is False
    assert len(keyword.calls) == 3


def test_a_rolled_back_write_keeps_the_cache(
    counted: Callable[..., tuple[RetrievalPipeline, ScriptedChannel]], catalog: Catalog
) -> None:
    pipeline, _ = counted()
    pipeline.retrieve("question")
    with pytest.raises(RuntimeError), catalog.transaction():
        raise RuntimeError("write failed")
    assert pipeline.retrieve("question").cached is True


def test_a_degraded_result_is_not_cached(make_pipeline: Callable[..., RetrievalPipeline]) -> None:
    broken = ScriptedChannel("keyword", error=OSError("index file is truncated"))
    pipeline = make_pipeline([ScriptedChannel("vector", VECTOR), broken])
    first = pipeline.retrieve("question")
    assert problems(first) == ["keyword search failed (OSError)"]
    assert ids(first.candidates) == ["a", "b", "c", "d", "e", "f"]  # the vector channel alone
    assert pipeline.retrieve("question").cached is False
    assert len(broken.calls) == 2


def test_cache_size_zero_turns_the_cache_off(
    counted: Callable[..., tuple[RetrievalPipeline, ScriptedChannel]],
) -> None:
    pipeline, keyword = counted(cache_size=0)
    results = [pipeline.retrieve("question") for _ in range(3)]
    assert [r.cached for r in results] == [False, False, False]
    assert len(keyword.calls) == 3


def test_the_cache_evicts_the_least_recently_used(
    counted: Callable[..., tuple[RetrievalPipeline, ScriptedChannel]],
) -> None:
    pipeline, keyword = counted(cache_size=2)
    for question in ("one", "two", "one", "three"):  # "two" is the least recently used when "three" comes
        pipeline.retrieve(question)
    assert pipeline.retrieve("one").cached is True
    assert pipeline.retrieve("three").cached is True
    assert pipeline.retrieve("two").cached is False
    assert [call[0] for call in keyword.calls] == ["one", "two", "three", "two"]


def test_a_cached_result_is_the_same_answer(counted: Callable[..., tuple[RetrievalPipeline, ScriptedChannel]]) -> None:
    pipeline, _ = counted()
    first = pipeline.retrieve("question", frozenset({"default"}))
    second = pipeline.retrieve("QUESTION", frozenset({"default"}))

    def essence(r: RetrievalResult) -> tuple[object, ...]:
        return (r.chunks, r.candidates, r.channel_results, r.degraded, r.settings, r.kbs)

    assert essence(second) == essence(first)


def test_concurrent_requests_all_get_an_answer(
    counted: Callable[..., tuple[RetrievalPipeline, ScriptedChannel]],
) -> None:
    pipeline, _ = counted(cache_size=4)
    results: list[RetrievalResult] = []
    lock = threading.Lock()

    def ask(i: int) -> None:
        result = pipeline.retrieve(f"question {i % 6}")
        with lock:
            results.append(result)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(results) == 24
    assert all(ids(r.candidates) == ["a", "c", "f", "b", "d", "e"] for r in results)


def test_a_timed_out_channel_is_named_and_its_result_not_cached(
    make_pipeline: Callable[..., RetrievalPipeline],
) -> None:
    release = threading.Event()

    class Stalling(ScriptedChannel):
        def _retrieve(self, query: str, top_k: int, kbs: Scope, docs: Docs = None) -> list[ChannelHit]:
            release.wait(5.0)
            return super()._retrieve(query, top_k, kbs)

    stalling = Stalling("keyword", KEYWORD)
    pipeline = make_pipeline([ScriptedChannel("vector", VECTOR), stalling], channel_timeout_s=0.2)
    try:
        result = pipeline.retrieve("question")
        assert problems(result) == ["keyword search timed out after 0.2 s"]
        assert [r.channel for r in result.channel_results] == ["vector"]
        assert ids(result.candidates) == ["a", "b", "c", "d", "e", "f"]
        release.set()  # the channel recovers: the next request is not served the poorer cached answer
        again = pipeline.retrieve("question")
        assert (again.cached, again.degraded) == (False, ())
        assert ids(again.candidates)[:3] == ["a", "c", "f"]
    finally:
        release.set()


def test_a_channel_waiting_for_a_worker_is_not_timed_out_by_others_using_them(
    make_pipeline: Callable[..., RetrievalPipeline],
) -> None:
    """16 questions at once on a pool of 8 workers: each channel takes 0.3 s against a 0.5 s budget, so the
    later ones wait longer than their budget for a worker. Their budgets count from when they start: every
    question gets both channels, as it would alone."""

    class Slow(ScriptedChannel):
        def _retrieve(self, query: str, top_k: int, kbs: Scope, docs: Docs = None) -> list[ChannelHit]:
            threading.Event().wait(0.3)
            return super()._retrieve(query, top_k, kbs)

    pipeline = make_pipeline([Slow("vector", VECTOR), Slow("keyword", KEYWORD)], channel_timeout_s=0.5, cache_size=0)
    alone = ids(pipeline.retrieve("question 0").candidates)
    results: list[RetrievalResult] = []
    threads = [
        threading.Thread(target=lambda i=i: results.append(pipeline.retrieve(f"question {i}"))) for i in range(16)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(results) == 16
    assert [problems(r) for r in results] == [[]] * 16
    assert all(ids(r.candidates) == alone for r in results)


def test_blend_order_trusts_the_reranker_as_far_as_its_weight() -> None:
    from ragapp.core.types import Chunk, RetrievedChunk
    from ragapp.retrieval.pipeline import blend_order

    def chunk(cid: str, fused: float, score: float | None = None) -> RetrievedChunk:
        return RetrievedChunk(Chunk(cid, "d", 0, cid, "d.md"), fused, {}, {}, rerank_score=score)

    fused = [chunk("a", 4.0), chunk("b", 3.0), chunk("c", 2.0), chunk("d", 1.0)]
    # the reranker is sure of d, unsure between c and b, sure a is not relevant
    reranked = [chunk("d", 1.0, 0.99), chunk("c", 2.0, 0.50), chunk("b", 3.0, 0.45), chunk("a", 4.0, 0.01)]
    ids = lambda chunks: [c.chunk.chunk_id for c in chunks]  # noqa: E731
    assert ids(blend_order(fused, reranked, 1.0)) == ["d", "c", "b", "a"]
    assert ids(blend_order(fused, reranked, 0.0)) == ["a", "b", "c", "d"]
    assert ids(blend_order(fused, reranked, 0.6)) == ["d", "b", "c", "a"]  # d: a sure jump; b, c: a close call
    assert ids(blend_order(fused, reranked, 0.2)) == ["a", "b", "c", "d"]
    assert [c.rerank_score for c in blend_order(fused, reranked, 0.0)] == [0.01, 0.45, 0.50, 0.99]  # scores kept


def test_blend_order_keeps_the_fused_standing_of_chunks_the_reranker_did_not_judge() -> None:
    from ragapp.core.types import Chunk, RetrievedChunk
    from ragapp.retrieval.pipeline import blend_order

    def chunk(cid: str, fused: float, score: float | None = None) -> RetrievedChunk:
        return RetrievedChunk(Chunk(cid, "d", 0, cid, "d.md"), fused, {}, {}, rerank_score=score)

    fused = [chunk("zh", 5.0), chunk("a", 3.0), chunk("b", 1.0)]
    reranked = [chunk("zh", 5.0), chunk("b", 1.0, 0.9), chunk("a", 3.0, 0.1)]  # "zh": another language, not judged
    assert next(c.chunk.chunk_id for c in blend_order(fused, reranked, 0.3)) == "zh"
    assert blend_order([], [], 0.3) == []
