"""The model's second look at its own answer (``ragapp.qa.verify``): what the call shows the model, and how its
one-word reply's scores become P(yes)."""

from __future__ import annotations

import math

from ragapp.core.types import Chunk, RetrievedChunk
from ragapp.models.llm import ScoredPiece
from ragapp.qa.verify import (
    PASSAGE_CHARS,
    VERIFY_SYSTEM,
    is_verify_call,
    read_verdict,
    verified_passages,
    verify_messages,
)


def _kept(*texts: str) -> list[RetrievedChunk]:
    return [RetrievedChunk(Chunk(f"c{i}", "d", i, text, "a.md"), 0.5, {}, {}, 0.5) for i, text in enumerate(texts)]


def _top(*pairs: tuple[str, float]) -> tuple[tuple[str, float], ...]:
    return tuple((token, math.log(p)) for token, p in pairs)


def test_yes_is_weighed_against_no_among_the_likeliest_first_tokens() -> None:
    piece = ScoredPiece("yes", _top(("yes", 0.6), ("no", 0.2), ("The", 0.1), (" Yes", 0.05)))
    assert math.isclose(read_verdict([piece]) or 0.0, 0.65 / 0.85)
    chinese = ScoredPiece("否", _top(("否", 0.5), ("是", 0.25)))
    assert math.isclose(read_verdict([chinese]) or 0.0, 1 / 3)


def test_a_reply_without_scores_or_without_either_word_gives_no_verdict() -> None:
    assert read_verdict(["yes"]) is None  # a server that scores nothing
    assert read_verdict([]) is None
    assert read_verdict([ScoredPiece("The", _top(("The", 0.7), ("It", 0.3)))]) is None


def test_the_check_reads_the_cited_passages_in_the_answers_order_else_the_first() -> None:
    kept = _kept("The lamp is green.", "The keeper was Brandt.", "Tickets cost four euros.")
    assert verified_passages("Brandt [2], green [1], again [2], four [3].", kept) == [
        "The keeper was Brandt.",
        "The lamp is green.",
    ]
    assert verified_passages("No marker at all.", kept) == ["The lamp is green."]
    assert verified_passages("Out of range [7].", kept) == ["The lamp is green."]


def test_the_call_shows_the_passages_cut_the_question_and_the_answer_without_markers() -> None:
    long = "x" * (PASSAGE_CHARS + 50)
    system, user = verify_messages("What colour is the lamp?", "Green [1].", ["The lamp is green.", long])
    assert system.content == VERIFY_SYSTEM and system.role == "system"
    assert "[1] The lamp is green." in user.content and f"[2] {'x' * PASSAGE_CHARS}\n" in user.content
    assert "x" * (PASSAGE_CHARS + 1) not in user.content
    assert "Question: What colour is the lamp?\nProposed answer: Green.\n" in user.content
    assert is_verify_call([{"role": "system", "content": VERIFY_SYSTEM}])
    assert not is_verify_call([{"role": "system", "content": "You answer questions."}]) and not is_verify_call([])


def test_the_page_says_how_likely_the_check_found_the_answer_stated() -> None:
    from ragapp.core.events import StageEvent
    from ragapp.core.stages import VERIFIED_YES
    from ragapp.ui.step_views import stage_summary

    said = stage_summary(StageEvent("verify", "finished", 1.2, {"reply": "yes", VERIFIED_YES: 0.834}))
    assert "the passages state it: 83% likely" in said and "原文支持该回答的可能性：83%" in said
