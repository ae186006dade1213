"""Map the [n] markers in an answer back to the chunks that were numbered n in the prompt."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragapp.core.types import Citation, RetrievedChunk

# [1], [1, 2] and the full-width 【1】 that models often write in Chinese answers.
MARKER = re.compile(r"[\[【](\d{1,3}(?:\s*[,，、]\s*\d{1,3})*)[\]】]")


def cited_numbers(text: str) -> list[int]:
    """Numbers cited in ``text`` in order of first appearance; handles [1], [1, 2], [1][2] and 【1】."""
    seen: dict[int, None] = {}
    for group in MARKER.findall(text):
        for part in re.split(r"[,，、]", group):
            seen.setdefault(int(part), None)
    return list(seen)


def citations_for(text: str, chunks: Sequence[RetrievedChunk]) -> tuple[Citation, ...]:
    """Citations for the markers that point at a real passage (out-of-range numbers are ignored)."""
    return tuple(
        Citation(number=n, chunk=chunks[n - 1].chunk, score=chunks[n - 1].rerank_score)
        for n in cited_numbers(text)
        if 1 <= n <= len(chunks)
    )
