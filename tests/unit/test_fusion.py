"""Weighted reciprocal rank fusion on hand-built rankings: exact formula values, ties, edge cases."""

from __future__ import annotations

import copy

import pytest

from ragapp.retrieval.fusion import to_hits, weighted_rrf
from ragapp.types import ChannelHit


def hits(*ids: str) -> list[ChannelHit]:
    """Hits ranked 1..n in the given order, with recognisable raw scores (10 * rank)."""
    return [ChannelHit(chunk_id=cid, rank=rank, score=10.0 * rank) for rank, cid in enumerate(ids, start=1)]


def test_scores_follow_the_formula_with_k_and_weights() -> None:
    rankings = {"vector": hits("a", "b", "c"), "keyword": hits("c", "a")}
    fused = weighted_rrf(rankings, k=10, weights={"vector": 2.0, "keyword": 0.5})

    scores = {c.chunk_id: c.fused_score for c in fused}
    assert scores == {
        "a": 2.0 / (10 + 1) + 0.5 / (10 + 2),
        "b": 2.0 / (10 + 2),
        "c": 2.0 / (10 + 3) + 0.5 / (10 + 1),
    }
    assert [c.chunk_id for c in fused] == ["a", "c", "b"]  # 0.2235 > 0.1993 > 0.1667


def test_k_changes_the_order_not_just_the_scale() -> None:
    # "solo" is first in one channel only; "both" is fourth in two channels.
    rankings = {"vector": hits("solo", "x", "w", "both"), "keyword": hits("y", "z", "v", "both")}
    small_k = [c.chunk_id for c in weighted_rrf(rankings, k=1)]
    large_k = [c.chunk_id for c in weighted_rrf(rankings, k=60)]
    assert small_k.index("solo") < small_k.index("both")  # 1/2 > 2/5
    assert large_k.index("both") < large_k.index("solo")  # 2/64 > 1/61


def test_channels_missing_from_weights_weigh_one() -> None:
    fused = weighted_rrf({"vector": hits("a"), "keyword": hits("a")}, k=60, weights={"vector": 3.0})
    assert fused[0].fused_score == 3.0 / 61 + 1.0 / 61


def test_default_k_is_60() -> None:
    assert weighted_rrf({"vector": hits("a")})[0].fused_score == 1 / 61


def test_keeps_every_channels_rank_and_raw_score() -> None:
    rankings = {
        "vector": [ChannelHit("a", 1, 0.91), ChannelHit("b", 2, 0.85)],
        "keyword": [ChannelHit("b", 1, 7.5)],
    }
    by_id = {c.chunk_id: c for c in weighted_rrf(rankings, k=60)}
    assert by_id["a"].channel_ranks == {"vector": 1}
    assert by_id["a"].channel_scores == {"vector": 0.91}
    assert by_id["b"].channel_ranks == {"vector": 2, "keyword": 1}
    assert by_id["b"].channel_scores == {"vector": 0.85, "keyword": 7.5}


def test_exact_ties_break_by_best_single_rank_then_chunk_id() -> None:
    # k=1: "a" is 3rd in vector with weight 2 -> 2/4 = 0.5; "b" is 1st in keyword -> 1/2 = 0.5.
    # Same fused score; "b" has the better best rank, so it wins although "a" < "b".
    rankings = {"vector": hits("x", "y", "a"), "keyword": hits("b")}
    fused = weighted_rrf(rankings, k=1, weights={"vector": 2.0, "keyword": 1.0})
    by_id = {c.chunk_id: c for c in fused}
    assert by_id["a"].fused_score == by_id["b"].fused_score == 0.5
    order = [c.chunk_id for c in fused]
    assert order.index("b") < order.index("a")

    # Mirror images: same score and same best rank -> chunk id decides.
    mirrored = weighted_rrf({"vector": hits("q", "p"), "keyword": hits("p", "q")}, k=60)
    assert mirrored[0].fused_score == mirrored[1].fused_score
    assert [c.chunk_id for c in mirrored] == ["p", "q"]


def test_order_does_not_depend_on_channel_order() -> None:
    one = weighted_rrf({"vector": hits("a", "b", "c"), "keyword": hits("c", "b", "d")}, k=5)
    two = weighted_rrf({"keyword": hits("c", "b", "d"), "vector": hits("a", "b", "c")}, k=5)
    assert [c.chunk_id for c in one] == [c.chunk_id for c in two]
    assert [c.fused_score for c in one] == pytest.approx([c.fused_score for c in two], rel=1e-12)


def test_one_empty_channel_contributes_nothing() -> None:
    fused = weighted_rrf({"vector": hits("a", "b"), "keyword": []}, k=60)
    assert [(c.chunk_id, c.fused_score) for c in fused] == [("a", 1 / 61), ("b", 1 / 62)]
    assert all(c.channel_ranks.keys() == {"vector"} for c in fused)


def test_no_channels_or_all_empty_gives_nothing() -> None:
    assert weighted_rrf({}) == []
    assert weighted_rrf({"vector": [], "keyword": []}) == []


def test_duplicate_in_one_channel_counts_once_at_its_best_rank() -> None:
    vector = [ChannelHit("a", 1, 0.9), ChannelHit("b", 2, 0.8), ChannelHit("a", 3, 0.7)]
    fused = weighted_rrf({"vector": vector}, k=60)
    by_id = {c.chunk_id: c for c in fused}
    assert by_id["a"].fused_score == 1 / 61
    assert by_id["a"].channel_ranks == {"vector": 1}
    assert by_id["a"].channel_scores == {"vector": 0.9}


def test_duplicate_listed_worse_rank_first_still_uses_best_rank() -> None:
    vector = [ChannelHit("a", 5, 0.5), ChannelHit("a", 2, 0.8)]
    keyword = [ChannelHit("a", 1, 4.0)]
    (only,) = weighted_rrf({"vector": vector, "keyword": keyword}, k=60)
    assert only.fused_score == pytest.approx(1 / 62 + 1 / 61, rel=1e-12)
    assert only.channel_ranks == {"vector": 2, "keyword": 1}
    assert only.channel_scores == {"vector": 0.8, "keyword": 4.0}


def test_weight_zero_mutes_a_channel_but_records_its_ranks() -> None:
    fused = weighted_rrf({"vector": hits("a", "b"), "keyword": hits("b", "c")}, k=60, weights={"keyword": 0.0})
    by_id = {c.chunk_id: c for c in fused}
    assert by_id["a"].fused_score == 1 / 61
    assert by_id["b"].fused_score == 1 / 62
    assert by_id["c"].fused_score == 0.0
    assert by_id["c"].channel_ranks == {"keyword": 2}
    assert by_id["b"].channel_ranks == {"vector": 2, "keyword": 1}
    assert [c.chunk_id for c in fused] == ["a", "b", "c"]


def test_inputs_are_not_mutated() -> None:
    rankings = {"vector": hits("a", "b", "a"), "keyword": hits("b", "c")}
    weights = {"vector": 2.0}
    before_rankings, before_weights = copy.deepcopy(rankings), copy.deepcopy(weights)
    fused = weighted_rrf(rankings, k=60, weights=weights)
    assert rankings == before_rankings
    assert weights == before_weights
    # The per-candidate dicts are fresh: editing one result never leaks into another call's output.
    fused[0].channel_ranks["vector"] = 99
    again = weighted_rrf(rankings, k=60, weights=weights)
    assert again[0].channel_ranks["vector"] != 99


@pytest.mark.parametrize("k", [0, -5])
def test_non_positive_k_is_refused(k: int) -> None:
    with pytest.raises(ValueError, match="k must be positive"):
        weighted_rrf({"vector": hits("a")}, k=k)


def test_to_hits_assigns_one_based_ranks_in_order() -> None:
    assert to_hits([("x", 0.9), ("y", 0.4)]) == [ChannelHit("x", 1, 0.9), ChannelHit("y", 2, 0.4)]
    assert to_hits([]) == []
