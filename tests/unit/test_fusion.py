"""Fusion on hand-built rankings: weighted RRF and the min-max / z-score blends against values worked out by
hand, ties, edge cases, and the ``FUSIONS`` registry."""

from __future__ import annotations

import copy
import math

import pytest

from ragapp.config import RetrievalSettings
from ragapp.core.errors import UnknownComponentError
from ragapp.core.types import ChannelHit
from ragapp.retrieval.fusion import FUSIONS, score_blend, to_hits, weighted_rrf


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


# -- score blends (min-max and z-score) ------------------------------------------------------------


def scored(*pairs: tuple[str, float]) -> list[ChannelHit]:
    """Hits ranked 1..n in the given order, with the given raw scores."""
    return to_hits(list(pairs))


def blend(rankings: dict[str, list[ChannelHit]], norm: str, **weights: float) -> dict[str, float]:
    return {c.chunk_id: c.fused_score for c in score_blend(rankings, weights or None, norm)}


def order(rankings: dict[str, list[ChannelHit]], norm: str, **weights: float) -> list[str]:
    return [c.chunk_id for c in score_blend(rankings, weights or None, norm)]


# vector: a 0.9, b 0.7, c 0.5      keyword: b 8.0, d 2.0
MINMAX_CASE = {
    "vector": scored(("a", 0.9), ("b", 0.7), ("c", 0.5)),
    "keyword": scored(("b", 8.0), ("d", 2.0)),
}


def test_minmax_blend_by_hand() -> None:
    # min-max per channel: vector a 1, b 0.5, c 0; keyword b 1, d 0; a chunk a channel lacks gets 0.
    # Equal weights -> 1/2 each: a = (1 + 0)/2, b = (0.5 + 1)/2, c = (0 + 0)/2, d = (0 + 0)/2.
    assert blend(MINMAX_CASE, "minmax") == pytest.approx({"a": 0.5, "b": 0.75, "c": 0.0, "d": 0.0}, abs=1e-12)
    # c and d tie at 0: d's best rank (2nd in keyword) beats c's (3rd in vector).
    assert order(MINMAX_CASE, "minmax") == ["b", "a", "d", "c"]


def test_minmax_weights_are_normalised_and_change_the_order() -> None:
    # vector 3, keyword 1 -> 3/4 and 1/4: a = 0.75 * 1 = 0.75; b = 0.75 * 0.5 + 0.25 * 1 = 0.625.
    assert blend(MINMAX_CASE, "minmax", vector=3.0, keyword=1.0) == pytest.approx(
        {"a": 0.75, "b": 0.625, "c": 0.0, "d": 0.0}, abs=1e-12
    )
    assert order(MINMAX_CASE, "minmax", vector=3.0, keyword=1.0)[:2] == ["a", "b"]
    # Only the ratio matters: 6 and 2 give the same blend as 3 and 1.
    assert blend(MINMAX_CASE, "minmax", vector=6.0, keyword=2.0) == pytest.approx(
        blend(MINMAX_CASE, "minmax", vector=3.0, keyword=1.0), abs=1e-12
    )


# vector: a 3.0, b 1.0      keyword: b 10.0, c 4.0, d 1.0
ZSCORE_CASE = {
    "vector": scored(("a", 3.0), ("b", 1.0)),
    "keyword": scored(("b", 10.0), ("c", 4.0), ("d", 1.0)),
}


def test_zscore_blend_by_hand() -> None:
    # vector: mean 2, population sd 1 -> a +1, b -1; floor = lowest - 1 = -2.
    # keyword: mean 5, deviations +5, -1, -4, variance (25 + 1 + 16) / 3 = 14 -> b 5/√14, c -1/√14, d -4/√14;
    # floor = -4/√14 - 1.
    s = math.sqrt(14)
    expected = {
        "a": (1 + (-4 / s - 1)) / 2,  # ≈ -0.535
        "b": (-1 + 5 / s) / 2,  # ≈ 0.168
        "c": (-2 + -1 / s) / 2,  # ≈ -1.134
        "d": (-2 + -4 / s) / 2,  # ≈ -1.535
    }
    assert blend(ZSCORE_CASE, "zscore") == pytest.approx(expected, abs=1e-12)
    assert order(ZSCORE_CASE, "zscore") == ["b", "a", "c", "d"]


def test_zscore_weights_change_the_order() -> None:
    s = math.sqrt(14)
    # vector 3, keyword 1: a = 0.75 * 1 + 0.25 * (-4/√14 - 1) ≈ 0.233; b = 0.75 * -1 + 0.25 * 5/√14 ≈ -0.416.
    scores = blend(ZSCORE_CASE, "zscore", vector=3.0, keyword=1.0)
    assert scores["a"] == pytest.approx(0.75 + 0.25 * (-4 / s - 1), abs=1e-12)
    assert scores["b"] == pytest.approx(-0.75 + 0.25 * 5 / s, abs=1e-12)
    assert order(ZSCORE_CASE, "zscore", vector=3.0, keyword=1.0)[0] == "a"
    assert order(ZSCORE_CASE, "zscore")[0] == "b"


@pytest.mark.parametrize("norm", ["minmax", "zscore"])
def test_a_chunk_missing_from_a_channel_gets_its_floor(norm: str) -> None:
    # Keyword muted: each score is the vector channel's normalised score, or its floor for "k" (keyword only).
    rankings = {"vector": scored(("a", 0.9), ("b", 0.6), ("c", 0.3)), "keyword": scored(("k", 9.0))}
    scores = blend(rankings, norm, vector=1.0, keyword=0.0)
    if norm == "minmax":
        assert scores == pytest.approx({"a": 1.0, "b": 0.5, "c": 0.0, "k": 0.0}, abs=1e-12)  # floor 0
    else:
        r = math.sqrt(1.5)  # z of 0.9 / 0.6 / 0.3: ±0.3 / sqrt(0.06 / 3) = ±√1.5
        assert scores == pytest.approx({"a": r, "b": 0.0, "c": -r, "k": -r - 1.0}, abs=1e-12)
        assert order(rankings, norm, vector=1.0, keyword=0.0)[-1] == "k"


def test_minmax_single_hit_and_all_equal_channels_count_as_best() -> None:
    # One hit, or every score equal: each hit is the channel's best (1.0), a missing chunk gets 0.
    single = {"vector": scored(("a", 0.9), ("b", 0.5)), "keyword": scored(("b", 3.0))}
    assert blend(single, "minmax") == pytest.approx({"a": 0.5, "b": 0.5}, abs=1e-12)
    flat = {"vector": scored(("a", 0.9), ("b", 0.5)), "keyword": scored(("b", 2.0), ("c", 2.0))}
    assert blend(flat, "minmax") == pytest.approx({"a": 0.5, "b": 0.5, "c": 0.5}, abs=1e-12)
    assert blend({"vector": scored(("x", 0.42))}, "minmax") == {"x": 1.0}


def test_zscore_single_hit_and_all_equal_channels_do_not_divide_by_zero() -> None:
    assert blend({"vector": scored(("x", 0.42))}, "zscore") == {"x": 0.0}
    assert blend({"vector": scored(("x", 0.42), ("y", 0.42))}, "zscore") == {"x": 0.0, "y": 0.0}


def test_zscore_single_hit_and_all_equal_channels_still_rank_their_hits_above_chunks_they_missed() -> None:
    # keyword finds only "b": no spread, so b's z-score is 0, and a chunk it missed gets 0 - 1 = -1.
    # vector: a +1, b -1, floor -2. Equal weights: a = (1 + -1) / 2 = 0; b = (-1 + 0) / 2 = -0.5.
    single = {"vector": scored(("a", 0.9), ("b", 0.5)), "keyword": scored(("b", 3.0))}
    assert blend(single, "zscore") == pytest.approx({"a": 0.0, "b": -0.5}, abs=1e-12)
    # The single exact match counts on its own: with vector muted, b (0) is above a (floor -1).
    assert blend(single, "zscore", vector=0.0, keyword=1.0) == pytest.approx({"a": -1.0, "b": 0.0}, abs=1e-12)
    # All equal: keyword b 2.0, c 2.0 -> both 0, floor -1. a = (1 - 1) / 2 = 0; b = (-1 + 0) / 2; c = (-2 + 0) / 2.
    flat = {"vector": scored(("a", 0.9), ("b", 0.5)), "keyword": scored(("b", 2.0), ("c", 2.0))}
    assert blend(flat, "zscore") == pytest.approx({"a": 0.0, "b": -0.5, "c": -1.0}, abs=1e-12)


@pytest.mark.parametrize("norm", ["minmax", "zscore"])
def test_blend_empty_inputs(norm: str) -> None:
    assert score_blend({}, None, norm) == []
    assert score_blend({"vector": [], "keyword": []}, None, norm) == []
    # An empty channel takes no share of the weights: the other channel's scores come through whole.
    fused = score_blend({"vector": scored(("a", 0.9), ("b", 0.1)), "keyword": []}, {"keyword": 5.0}, norm)
    expected = {"minmax": [1.0, 0.0], "zscore": [1.0, -1.0]}[norm]
    assert [c.chunk_id for c in fused] == ["a", "b"]
    assert [c.fused_score for c in fused] == pytest.approx(expected, abs=1e-12)
    assert all(c.channel_ranks.keys() == {"vector"} for c in fused)


def test_blend_keeps_ranks_and_raw_scores_and_does_not_mutate() -> None:
    rankings = {"vector": scored(("a", 0.9), ("b", 0.7)), "keyword": scored(("b", 8.0))}
    before = copy.deepcopy(rankings)
    by_id = {c.chunk_id: c for c in score_blend(rankings, {"vector": 2.0}, "zscore")}
    assert rankings == before
    assert by_id["b"].channel_ranks == {"vector": 2, "keyword": 1}
    assert by_id["b"].channel_scores == {"vector": 0.7, "keyword": 8.0}
    assert by_id["a"].channel_scores == {"vector": 0.9}


def test_blend_duplicate_in_a_channel_counts_once_at_its_best_rank() -> None:
    vector = [ChannelHit("a", 1, 0.9), ChannelHit("b", 2, 0.5), ChannelHit("a", 3, 0.1)]
    # Had the 0.1 duplicate counted, it would become the minimum and b would score 0.4 / 0.8 = 0.5.
    assert blend({"vector": vector}, "minmax") == pytest.approx({"a": 1.0, "b": 0.0}, abs=1e-12)


# -- the registry --------------------------------------------------------------------------------


def test_fusions_registry_names_and_wiring() -> None:
    assert FUSIONS.names() == ["minmax", "rrf", "zscore"]
    knobs = RetrievalSettings(rrf_k=7, weights={"vector": 2.0, "keyword": 0.5})
    rankings = {"vector": scored(("a", 0.9), ("b", 0.7), ("c", 0.5)), "keyword": scored(("c", 8.0), ("a", 2.0))}
    assert FUSIONS.get("rrf")(rankings, knobs) == weighted_rrf(rankings, k=7, weights=knobs.weights)
    assert FUSIONS.get("minmax")(rankings, knobs) == score_blend(rankings, knobs.weights, "minmax")
    assert FUSIONS.get("zscore")(rankings, knobs) == score_blend(rankings, knobs.weights, "zscore")
    # The three really differ on this input (otherwise the wiring checks above would prove little).
    assert len({tuple(c.fused_score for c in FUSIONS.get(n)(rankings, knobs)) for n in FUSIONS.names()}) == 3
    with pytest.raises(UnknownComponentError, match=r"Unknown fusion method 'borda'.*minmax, rrf, zscore"):
        FUSIONS.get("borda")


def test_to_hits_keeps_the_given_order_and_scores() -> None:
    hits_ = to_hits([("b", 0.2), ("a", 0.9), ("b", 0.1)])  # not re-sorted, not deduplicated
    assert [(h.chunk_id, h.rank, h.score) for h in hits_] == [("b", 1, 0.2), ("a", 2, 0.9), ("b", 3, 0.1)]


@pytest.mark.parametrize("norm", ["minmax", "zscore"])
def test_score_groups_are_normalised_apart(norm: str) -> None:
    # The vector channel tags each hit with its language: an English answer to a Chinese question scores
    # lower than unrelated Chinese text, so the best of each language must come out level.
    vector = [
        ChannelHit("zh-1", 1, 0.90, group="zh"),
        ChannelHit("en-1", 2, 0.84, group="en"),
        ChannelHit("zh-2", 3, 0.88, group="zh"),
        ChannelHit("en-2", 4, 0.82, group="en"),
        ChannelHit("zh-3", 5, 0.86, group="zh"),
        ChannelHit("en-3", 6, 0.80, group="en"),
    ]
    by_id = {c.chunk_id: c.fused_score for c in score_blend({"vector": vector}, norm=norm)}
    assert by_id["en-1"] == pytest.approx(by_id["zh-1"])
    assert by_id["en-1"] > by_id["zh-2"]
    pooled = [ChannelHit(h.chunk_id, h.rank, h.score) for h in vector]  # same scores, one group
    assert [c.chunk_id for c in score_blend({"vector": pooled}, norm=norm)][:3] == ["zh-1", "zh-2", "zh-3"]


def test_to_hits_carries_groups() -> None:
    assert [h.group for h in to_hits([("a", 1.0), ("b", 0.5)], ["zh", "en"])] == ["zh", "en"]
    assert [h.group for h in to_hits([("a", 1.0)])] == [None]
