"""Mapping [n] markers in an answer back to the chunks numbered n in the prompt, and numbering an answer's
citations 1..n in the order it cites them, its streamed draft alike."""

from __future__ import annotations

import itertools

import pytest

from ragapp.core.events import AnswerEvent
from ragapp.core.markers import cited_numbers, draft_numbers
from ragapp.core.types import Chunk, Citation, RetrievedChunk, SentenceSupport
from ragapp.qa.citations import citations_for, renumbered


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


def test_an_answer_is_numbered_from_one_in_the_order_it_cites() -> None:
    chunks = retrieved(4)
    support = (
        SentenceSupport("Sensors [4]. ", "supported", (4,), (4,), ("sensors",)),
        SentenceSupport("Clean them [2, 4].", "supported", (3,), (2, 4), ("clean",)),
    )
    answer = AnswerEvent(
        "Sensors [4]. Clean them [2, 4].", citations_for("Sensors [4]. Clean them [2, 4].", chunks), True,
        support=support,
    )  # fmt: skip
    shown = renumbered(answer)
    assert shown.text == "Sensors [1]. Clean them [1, 2]."
    assert [(c.number, c.chunk.chunk_id) for c in shown.citations] == [(1, "d-0003"), (2, "d-0001")]
    assert [(s.text, s.cited, s.passages) for s in shown.support] == [
        ("Sensors [1]. ", (1,), (1,)),
        ("Clean them [1, 2].", (3,), (1, 2)),  # a number the model wrote for a passage not cited stays as written
    ]
    assert renumbered(shown) == shown  # already 1..n


def test_a_refusals_nearest_passages_are_numbered_in_their_order() -> None:
    chunks = retrieved(3)
    nearest = (Citation(3, chunks[2].chunk), Citation(1, chunks[0].chunk))
    refusal = renumbered(AnswerEvent("The documents do not say this.", nearest, False, abstained=True))
    assert [(c.number, c.chunk.chunk_id) for c in refusal.citations] == [(1, "d-0002"), (2, "d-0000")]


def test_a_draft_is_numbered_as_the_answer_will_be_and_only_grows() -> None:
    draft = "续航14小时【3】，保修一年[1，3]; see [2"
    assert draft_numbers(draft) == "续航14小时【1】，保修一年[1, 2]; see "  # the marker being written waits
    assert draft_numbers("a [7][7] b [1,2]") == "a [1][1] b [2, 3]"
    assert draft_numbers("x [1] y [2,3]") == "x [1] y [2,3]"  # already in order: kept as written
    assert draft_numbers("an array[i") == "an array"
    assert draft_numbers("a [" + "long text " * 3) == "a [" + "long text " * 3  # a bracket, not a marker
    text = "Sensors [4]. Clean them [2][4]; see also [4, 1]."
    shown = [draft_numbers(text[:n]) for n in range(len(text) + 1)]
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(shown))
    assert shown[-1] == "Sensors [1]. Clean them [2][1]; see also [1, 3]."


def test_a_passage_under_a_heading_highlights_its_own_sentence() -> None:
    """The check reads a passage with its heading on the line above (as the prompt shows it); the heading is not
    glued to the first sentence, so the sentence that supports the answer is highlighted in the passage."""
    from ragapp.qa.answer_check import checked_answer

    sentence = "The Alpha robot battery lasts 90 minutes on a full charge."
    chunk = Chunk("d-0001", "d", 0, sentence, "robots.md", heading="Robots")
    answer = checked_answer("How long does the Alpha battery last?", "The Alpha battery lasts 90 minutes [1].",
                            [RetrievedChunk(chunk, 1.0, {}, {}, rerank_score=0.9)])  # fmt: skip
    (citation,) = answer.citations
    assert citation.highlights == (sentence,)
