"""The chunk budget of a file (``ragapp.ingest.repetition``): text that says something gets every chunk it
makes, a file that is mostly the same text again gets a hundred and is refused past that."""

from __future__ import annotations

import random

from ragapp.ingest.repetition import FREE_CHUNKS, chunk_budget

WORDS = "kettle lamp battery filter warranty charge minutes litres button display socket cable".split()


def _prose(chunks: int) -> list[str]:
    rng = random.Random(7)
    return [" ".join(rng.choice(WORDS) for _ in range(60)) for _ in range(chunks)]


def test_text_that_says_something_gets_every_chunk() -> None:
    prose = chunk_budget(_prose(2_000), 8)
    assert not prose.over and prose.allowed > 2 * prose.chunks  # twice the headroom, and more
    log = [f"2024-01-{1 + i % 28:02d} 12:{i % 60:02d}:{i * 7 % 60:02d} INFO worker-{i % 4} handled in {i % 97} ms"
           for i in range(20_000)]  # fmt: skip
    lines = ["\n".join(log[i : i + 8]) for i in range(0, len(log), 8)]  # near-identical lines, 8 a chunk
    assert not chunk_budget(lines, 8).over


def test_a_file_of_one_row_again_and_again_is_over_its_budget() -> None:
    row = "| " + " | ".join("7" * 200) + " |"
    same = chunk_budget([row] * 5_000, 8)
    assert same.over and same.distinct < 1_000 and same.allowed < 2 * FREE_CHUNKS
    numbered = chunk_budget([f"| {i} " + row for i in range(5_000)], 8)  # a row number makes each one distinct
    assert numbered.over
    assert not chunk_budget([row] * FREE_CHUNKS, 8).over  # a small file is never refused for it
    assert not chunk_budget([row] * 5_000, 0).over  # 0: no limit
