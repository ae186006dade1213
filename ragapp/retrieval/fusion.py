"""Fusion: per-channel rankings -> one list keyed by chunk id. Pluggable through ``FUSIONS``.

- ``rrf``: weighted reciprocal rank fusion (Cormack, Clarke & Buettcher, 2009):
  score(d) = sum over channels c of w_c / (k + rank_c(d)). Uses ranks only.
- ``minmax`` / ``zscore``: a convex combination of each channel's scores after normalising them per query
  (min-max to [0, 1], or standard scores). Uses how far apart the scores are, not just their order.

Unlike LlamaIndex's ``QueryFusionRetriever`` (k fixed at 60, weights ignored in RRF mode, dedup by text,
scores overwritten in place), these honour per-channel weights and k, key by chunk id, and never mutate
their inputs. Every fused candidate keeps each channel's rank and raw score for the trace.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence

from ragapp.config import RetrievalSettings
from ragapp.core.types import ChannelHit, FusedCandidate
from ragapp.registry import Registry

Rankings = Mapping[str, Sequence[ChannelHit]]
Fusion = Callable[[Rankings, RetrievalSettings], list[FusedCandidate]]
FUSIONS: Registry[Fusion] = Registry("fusion method")


def _best_hits(rankings: Rankings) -> dict[str, dict[str, ChannelHit]]:
    """channel -> chunk id -> its best hit (a chunk listed twice in one channel counts once, at its best rank)."""
    best: dict[str, dict[str, ChannelHit]] = {}
    for channel, hits in rankings.items():
        mine = best.setdefault(channel, {})
        for hit in hits:
            if hit.chunk_id not in mine or hit.rank < mine[hit.chunk_id].rank:
                mine[hit.chunk_id] = hit
    return best


def _ranked(best: dict[str, dict[str, ChannelHit]], scores: dict[str, float]) -> list[FusedCandidate]:
    """Candidates best first. Ties go to the best single-channel rank, then the chunk id (deterministic)."""
    ranks: dict[str, dict[str, int]] = {}
    raw: dict[str, dict[str, float]] = {}
    for channel, hits in best.items():
        for cid, hit in hits.items():
            ranks.setdefault(cid, {})[channel] = hit.rank
            raw.setdefault(cid, {})[channel] = hit.score
    order = sorted(scores, key=lambda cid: (-scores[cid], min(ranks[cid].values()), cid))
    return [FusedCandidate(cid, scores[cid], dict(ranks[cid]), dict(raw[cid])) for cid in order]


def weighted_rrf(rankings: Rankings, k: int = 60, weights: Mapping[str, float] | None = None) -> list[FusedCandidate]:
    """Fuse per-channel rankings (1-based ranks) by weighted RRF, best first.

    ``k``: larger flattens the difference between top and lower ranks. ``weights``: channel -> weight,
    unlisted channels weigh 1.0; a weight of 0 mutes a channel's contribution but its ranks are still recorded.
    """
    if k <= 0:
        raise ValueError("rrf k must be positive")
    weights = weights or {}
    best = _best_hits(rankings)
    scores: dict[str, float] = {}
    for channel, hits in best.items():
        weight = float(weights.get(channel, 1.0))
        for cid, hit in hits.items():
            scores[cid] = scores.get(cid, 0.0) + weight / (k + hit.rank)
    return _ranked(best, scores)


def _minmax(values: dict[str, float]) -> tuple[dict[str, float], float]:
    low, high = min(values.values()), max(values.values())
    span = high - low
    # One hit, or all equal: every hit is this channel's best.
    return {cid: (v - low) / span if span > 0 else 1.0 for cid, v in values.items()}, 0.0


def standardised(values: dict[str, float]) -> dict[str, float]:
    """Each value's z-score among ``values`` (all 0.0 when they are equal)."""
    if not values:
        return {}
    mean = statistics.fmean(values.values())
    spread = statistics.pstdev(values.values())
    return {cid: (v - mean) / spread if spread > 0 else 0.0 for cid, v in values.items()}


def _zscore(values: dict[str, float]) -> tuple[dict[str, float], float]:
    normed = standardised(values)
    # A chunk the channel did not return ranks below everything it did return (one standard deviation down).
    return normed, min(normed.values()) - 1.0


_NORMALISERS = {"minmax": _minmax, "zscore": _zscore}


def score_blend(
    rankings: Rankings, weights: Mapping[str, float] | None = None, norm: str = "minmax"
) -> list[FusedCandidate]:
    """Fuse by a weighted average of per-channel scores normalised per query (``minmax`` or ``zscore``).

    A chunk missing from a channel gets that channel's floor (0 for min-max, below the lowest standard
    score for z-score). Weights are divided by their sum, so the result is a convex combination. Hits with
    different ``group``s are normalised apart: multilingual-e5 gives a Chinese question's English answer a
    lower cosine than unrelated Chinese text, so one normalisation over both languages would bury it (the
    same reason the vector channel ranks each language on its own).
    """
    parts = blend_parts(rankings, weights, norm)
    return _ranked(_best_hits(rankings), {cid: sum(p.values()) for cid, p in parts.items()})


def blend_parts(
    rankings: Rankings, weights: Mapping[str, float] | None = None, norm: str = "minmax"
) -> dict[str, dict[str, float]]:
    """chunk id -> channel -> what that channel adds to the chunk's blended score (they sum to the score)."""
    normalise = _NORMALISERS[norm]
    weights = weights or {}
    best = _best_hits(rankings)
    active = {ch: float(weights.get(ch, 1.0)) for ch, hits in best.items() if hits}
    total = sum(active.values()) or 1.0
    every = {cid for hits in best.values() for cid in hits}
    parts: dict[str, dict[str, float]] = {cid: {} for cid in every}
    for channel, weight in active.items():
        groups: dict[str | None, dict[str, float]] = {}
        for cid, hit in best[channel].items():
            groups.setdefault(hit.group, {})[cid] = hit.score
        normed: dict[str, float] = {}
        floors: list[float] = []
        for values in groups.values():
            part, floor = normalise(values)
            normed |= part
            floors.append(floor)
        floor = min(floors)
        for cid in every:
            parts[cid][channel] = weight / total * normed.get(cid, floor)
    return parts


def contributions(rankings: Rankings, settings: RetrievalSettings) -> dict[str, dict[str, float]]:
    """What each channel added to each chunk's fused score under the configured fusion (for traces):
    w / (k + rank) for ``rrf``, the weighted normalised score for the blends."""
    if settings.fusion == "rrf":
        best = _best_hits(rankings)
        out: dict[str, dict[str, float]] = {}
        for channel, hits in best.items():
            weight = float(settings.weights.get(channel, 1.0))
            for cid, hit in hits.items():
                out.setdefault(cid, {})[channel] = weight / (settings.rrf_k + hit.rank)
        return out
    if settings.fusion in _NORMALISERS:
        return blend_parts(rankings, settings.weights, settings.fusion)
    return {}


FUSIONS.register("rrf")(lambda rankings, s: weighted_rrf(rankings, k=s.rrf_k, weights=s.weights))
FUSIONS.register("minmax")(lambda rankings, s: score_blend(rankings, s.weights, "minmax"))
FUSIONS.register("zscore")(lambda rankings, s: score_blend(rankings, s.weights, "zscore"))


def to_hits(pairs: Sequence[tuple[str, float]], groups: Sequence[str | None] | None = None) -> list[ChannelHit]:
    """(chunk_id, score) pairs, best first -> hits with 1-based ranks (and score groups, if given)."""
    labels = groups if groups is not None else [None] * len(pairs)
    return [
        ChannelHit(chunk_id=cid, rank=i, score=score, group=group)
        for i, ((cid, score), group) in enumerate(zip(pairs, labels, strict=True), start=1)
    ]
