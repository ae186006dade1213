"""Condensing the answer prompt: the best passage whole, the others cut to the sentences sharing the question's
words, in order, with the gaps shown; nothing changes for a single passage or ``keep`` 0."""

from __future__ import annotations

from ragapp.core.types import Chunk, RetrievedChunk
from ragapp.qa.condense import condense


def _passage(n: int, text: str) -> RetrievedChunk:
    return RetrievedChunk(Chunk(f"d-{n}", "d", n, text, "manual.pdf", page=n), 0.1, {}, {})


BEST = _passage(1, "The kettle boils 1.7 litres in 3 minutes. It has a blue light. The lid opens wide.")
OTHER = _passage(
    2,
    "Safety comes first. Never fill the kettle above the MAX mark. The filter is rinsed every 14 days. "
    "Descale the kettle monthly. Keep the base dry.",
)


def test_the_best_passage_stays_whole_and_the_others_keep_their_best_sentences_in_order() -> None:
    best, other = condense("How often is the kettle filter rinsed?", [BEST, OTHER], keep=2)
    assert best == BEST
    assert other.chunk.text == "… Never fill the kettle above the MAX mark. The filter is rinsed every 14 days. …"
    assert other.chunk.chunk_id == OTHER.chunk.chunk_id and other.chunk.page == 2  # the citation still maps


def test_left_out_sentences_between_kept_ones_are_marked() -> None:
    (_, other) = condense("When is the kettle descaled, and what about safety?", [BEST, OTHER], keep=2)
    assert other.chunk.text == "Safety comes first. … Descale the kettle monthly. …"


def test_a_passage_sharing_no_word_keeps_its_first_sentence() -> None:
    (_, other) = condense("Which colour is the light?", [BEST, OTHER], keep=2)
    assert other.chunk.text == "Safety comes first. …"


def test_nothing_is_cut_with_one_passage_with_keep_zero_or_a_short_passage() -> None:
    assert condense("filter?", [OTHER], keep=1) == [OTHER]
    assert condense("filter?", [BEST, OTHER], keep=0) == [BEST, OTHER]
    assert condense("filter?", [OTHER, BEST], keep=3) == [OTHER, BEST]  # BEST has only 3 sentences
