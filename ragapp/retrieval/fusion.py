"""Weighted reciprocal rank fusion, keyed by chunk id.

Cormack, Clarke & Buettcher (2009), "Reciprocal Rank Fusion outperforms Condorcet and individual rank
learning methods": score(d) = sum over channels c of w_c / (k + rank_c(d)).

Unlike LlamaIndex's ``QueryFusionRetriever`` (k fixed at 60, weights ignored in RRF mode, dedup by text),
this honours per-channel weights and k, keys by chunk id, and never mutates its inputs. Every fused
candidate keeps each channel's rank and raw score so a trace can show why it landed where it did.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ragapp.types import ChannelHit, FusedCandidate


def weighted_rrf(
    rankings: Mapping[str, Sequence[ChannelHit]],
    k: int = 60,
    weights: Mapping[str, float] | None = None,
) -> list[FusedCandidate]:
    """Fuse per-channel rankings into one list, best first.

    Args:
        rankings: channel name -> hits (their ``rank`` is 1-based; a chunk listed twice in one channel
            counts once, at its best rank).
        k: the RRF constant; larger k flattens the difference between top and lower ranks.
        weights: channel name -> weight; channels not listed weigh 1.0. A weight of 0 mutes a channel's
            contribution but its ranks are still recorded.

    Ties on fused score are broken by the best single-channel rank, then by chunk id, so the order is
    deterministic.
    """
    if k <= 0:
        raise ValueError("rrf k must be positive")
    weights = weights or {}
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    raw: dict[str, dict[str, float]] = {}
    for channel, hits in rankings.items():
        weight = float(weights.get(channel, 1.0))
        for hit in hits:
            seen = ranks.setdefault(hit.chunk_id, {})
            if channel in seen and seen[channel] <= hit.rank:
                continue
            if channel in seen:  # a better rank for a chunk already seen in this channel: replace it
                scores[hit.chunk_id] -= weight / (k + seen[channel])
            seen[channel] = hit.rank
            raw.setdefault(hit.chunk_id, {})[channel] = hit.score
            scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + weight / (k + hit.rank)
    order = sorted(scores, key=lambda cid: (-scores[cid], min(ranks[cid].values()), cid))
    return [
        FusedCandidate(
            chunk_id=cid,
            fused_score=scores[cid],
            channel_ranks=dict(ranks[cid]),
            channel_scores=dict(raw[cid]),
        )
        for cid in order
    ]


def to_hits(pairs: Sequence[tuple[str, float]]) -> list[ChannelHit]:
    """(chunk_id, score) pairs, best first -> hits with 1-based ranks."""
    return [ChannelHit(chunk_id=cid, rank=i, score=score) for i, (cid, score) in enumerate(pairs, start=1)]
