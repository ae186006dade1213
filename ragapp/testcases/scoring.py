"""Saved test cases (a question and the documents that should answer it) scored against the retrieval
pipeline: hit rate, MRR and nDCG at the document level, so a settings change can be checked before it is kept.

- hit: an expected document reached the prompt (what the answer actually sees);
- MRR@k and nDCG@k: over the documents in the order of the final (fused, reranked) candidates, each document
  counted once, at its best chunk.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragapp.core.types import Scope
from ragapp.testcases.metrics import mrr_at_k, ndcg_at_k

if TYPE_CHECKING:
    from ragapp.core.types import RetrievalResult
    from ragapp.testcases.case import TestCase


@dataclass(frozen=True)
class CaseResult:
    question: str
    expected: tuple[str, ...]
    ranked: tuple[str, ...]  # documents, best first (top k)
    first_rank: int | None  # rank of the first expected document, None: not in the top k
    hit: bool
    mrr: float
    ndcg: float
    seconds: float


@dataclass(frozen=True)
class CaseReport:
    label: str
    results: tuple[CaseResult, ...]
    k: int
    settings: dict[str, Any] = field(default_factory=dict)

    def _mean(self, values: Sequence[float]) -> float:
        return sum(values) / len(values) if values else 0.0

    @property
    def hit_rate(self) -> float:
        return self._mean([float(r.hit) for r in self.results])

    @property
    def mrr(self) -> float:
        return self._mean([r.mrr for r in self.results])

    @property
    def ndcg(self) -> float:
        return self._mean([r.ndcg for r in self.results])

    def summary(self) -> dict[str, float]:
        return {"hit rate": self.hit_rate, f"MRR@{self.k}": self.mrr, f"nDCG@{self.k}": self.ndcg}


def documents_ranked(result: RetrievalResult) -> list[str]:
    """Document names in the order of their best chunk among the final candidates."""
    return list(dict.fromkeys(c.chunk.source for c in result.candidates))


def evaluate_cases(
    cases: Sequence[TestCase],
    retrieve: Callable[[str, Scope], RetrievalResult],
    label: str,
    k: int = 10,
    settings: dict[str, Any] | None = None,
) -> CaseReport:
    results = []
    for case in (c for c in cases if c.expected):  # an unanswerable case saved without documents: nothing to find
        start = time.perf_counter()
        result = retrieve(case.question, frozenset(case.kbs) if case.kbs is not None else None)
        seconds = time.perf_counter() - start
        ranked = documents_ranked(result)
        qrels = dict.fromkeys(case.expected, 1)
        first = next((i for i, doc in enumerate(ranked[:k], start=1) if doc in qrels), None)
        in_prompt = {c.chunk.source for c in result.chunks}
        results.append(
            CaseResult(
                question=case.question,
                expected=tuple(case.expected),
                ranked=tuple(ranked[:k]),
                first_rank=first,
                hit=bool(in_prompt & set(case.expected)),
                mrr=mrr_at_k(ranked, qrels, k),
                ndcg=ndcg_at_k(ranked, qrels, k),
                seconds=seconds,
            )
        )
    return CaseReport(label, tuple(results), k, settings or {})
