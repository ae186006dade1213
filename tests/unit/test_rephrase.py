"""When a question is searched again with its likely answer: the search kept passages, none of them strong."""

from __future__ import annotations

from ragapp.core.types import Chunk, RetrievalResult, RetrievedChunk
from ragapp.qa.rephrase import Hypothesis, needs_rephrasing


def kept(*scores: float | None) -> RetrievalResult:
    chunks = tuple(RetrievedChunk(Chunk(f"c{i}", "d", i, "text", "a.md"), 0.1, {}, {}, s) for i, s in enumerate(scores))
    return RetrievalResult("q", chunks, chunks, ())


def test_only_a_search_that_kept_nothing_strong_is_repeated() -> None:
    assert needs_rephrasing(kept(0.3, 0.1), below=0.5)
    assert not needs_rephrasing(kept(), below=0.5)  # nothing near the question: "not found", no model call
    assert not needs_rephrasing(kept(0.3, 0.7), below=0.5)
    assert not needs_rephrasing(kept(None), below=0.5)  # without a reranker a kept passage passed the gate


def test_the_question_is_searched_together_with_its_likely_answer() -> None:
    assert (
        Hypothesis("Which call?", "Mat_VarReadNextInfo reads it.").query == "Which call? Mat_VarReadNextInfo reads it."
    )
    assert Hypothesis("Which call?", None, "down").query == "Which call?"
