"""Mapping [n] markers in an answer back to the chunks numbered n in the prompt."""

from __future__ import annotations

import pytest

from ragapp.core.types import Chunk, RetrievedChunk
from ragapp.qa.citations import citations_for, cited_numbers


def retrieved(n: int) -> list[RetrievedChunk]:
    return [
        RetrievedChunk(
            Chunk(f"d-{i:04d}", "d", i, f"passage {i}", "doc.md"), 1.0 / (i + 1), {}, {}, rerank_score=i / 10
        )
        for i in range(n)
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The battery lasts 120 minutes [1].", [1]),
        ("Both apply [1, 2].", [1, 2]),
        ("Both apply [1][2].", [1, 2]),
        ("续航120分钟[2]，保修一年[1]。", [2, 1]),
        ("见资料 [1，3]。", [1, 3]),
        ("见资料 [2、3]。", [2, 3]),
        ("Repeated [2] and again [2] then [1].", [2, 1]),
        ("[1 , 2 ,3]", [1, 2, 3]),
        ("No markers at all.", []),
        ("Not citations: [a], [], [1.5], (1).", []),
    ],
)
def test_cited_numbers(text: str, expected: list[int]) -> None:
    assert cited_numbers(text) == expected


def test_citations_point_at_the_chunk_numbered_n() -> None:
    chunks = retrieved(3)
    citations = citations_for("First [3], then [1].", chunks)
    assert [(c.number, c.chunk.chunk_id, c.score) for c in citations] == [(3, "d-0002", 0.2), (1, "d-0000", 0.0)]


def test_out_of_range_numbers_are_ignored() -> None:
    chunks = retrieved(2)
    citations = citations_for("Real [2], invented [0] [3] [99] [1, 7].", chunks)
    assert [c.number for c in citations] == [2, 1]


def test_no_chunks_means_no_citations() -> None:
    assert citations_for("[1] [2]", []) == ()


def test_full_width_brackets_count_as_citations() -> None:
    assert cited_numbers("电池保修 12 个月【2】，整机 24 个月【1，3】。") == [2, 1, 3]
