"""Ranking metrics over one query's ranked ids and its relevance judgements (qrels), as in BEIR / trec_eval.

Pure functions on plain lists and dicts; averaging over queries is the caller's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def ndcg_at_k(ranked: Sequence[str], qrels: Mapping[str, int], k: int = 10) -> float:
    """Normalised discounted cumulative gain with graded relevance: gain = grade, discount = log2(rank + 1).

    Ids without a judgement count as grade 0; duplicates in ``ranked`` count once, at their first rank.
    """
    seen: set[str] = set()
    dcg = 0.0
    position = 0
    for doc_id in ranked:
        if doc_id in seen:
            continue
        seen.add(doc_id)
        position += 1
        if position > k:
            break
        grade = qrels.get(doc_id, 0)
        if grade > 0:
            dcg += grade / math.log2(position + 1)
    ideal = sorted((g for g in qrels.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at_k(ranked: Sequence[str], qrels: Mapping[str, int], k: int = 10) -> float:
    """Share of the relevant ids found in the top ``k``."""
    relevant = {d for d, g in qrels.items() if g > 0}
    if not relevant:
        return 0.0
    return len(relevant & set(ranked[:k])) / len(relevant)


def mrr_at_k(ranked: Sequence[str], qrels: Mapping[str, int], k: int = 10) -> float:
    """Reciprocal rank of the first relevant id within the top ``k`` (0 when none is there)."""
    for rank, doc_id in enumerate(ranked[:k], start=1):
        if qrels.get(doc_id, 0) > 0:
            return 1.0 / rank
    return 0.0


def all_found_at_k(ranked: Sequence[str], qrels: Mapping[str, int], k: int) -> bool:
    """True when every relevant id is in the top ``k`` (multi-hop sets need both supporting paragraphs)."""
    relevant = {d for d, g in qrels.items() if g > 0}
    return bool(relevant) and relevant <= set(ranked[:k])
