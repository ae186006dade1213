"""Answer by selection (``ragapp.qa.select``): the candidate sentences, the grammar that holds the model to them,
and reading the pick (with its probabilities when the pieces carry scores, by its words when a backend
ignored the grammar)."""

from __future__ import annotations

import math

import pytest

from ragapp.core.types import Chunk, RetrievedChunk
from ragapp.models.llm import ScoredPiece
from ragapp.qa.select import (
    Candidate,
    asks_bare_fact,
    candidates,
    enough,
    grammar,
    read_pick,
    settled,
    window,
)

FIRST = "The header is 100 bytes. The page size is 4096 bytes by default."
PASSAGES = [
    RetrievedChunk(Chunk("c1", "d", 0, FIRST, "f.html"), 0.9, {}, {}),
    RetrievedChunk(Chunk("c2", "d", 1, "… Pages are numbered from 1. The header is 100 bytes.", "f.html"), 0.5, {}, {}),
]
FOUND = candidates(PASSAGES)


def test_candidates_are_the_passages_sentences_each_once_with_their_passage_number() -> None:
    expected = [
        Candidate(1, "The header is 100 bytes."),
        Candidate(1, "The page size is 4096 bytes by default."),
        Candidate(2, "Pages are numbered from 1."),  # the condensed passage's "…" left out
    ]
    assert candidates(PASSAGES) == expected


def test_the_grammar_allows_each_sentence_word_for_word_or_none() -> None:
    text = grammar([Candidate(1, 'He said "stop" \\ then\nleft.'), Candidate(2, "文档原文。")])
    assert text == 'root ::= "He said \\"stop\\" \\\\ then\\nleft." | "文档原文。" | "none" | "None"'
    llama_cpp = pytest.importorskip("llama_cpp")
    llama_cpp.LlamaGrammar.from_string(text, verbose=False)  # llama.cpp reads it


def test_a_reply_is_settled_once_it_fits_one_sentence() -> None:
    assert not settled("The", FOUND) and not settled("", FOUND)
    assert settled("The page", FOUND) and settled("none", FOUND)
    assert not enough("The", FOUND, 3) and enough("The", FOUND, 12)  # two sentences alike: the first is taken


def top(*pairs: tuple[str, float]) -> tuple[tuple[str, float], ...]:
    return tuple((text, math.log(p)) for text, p in pairs)


def test_the_pick_and_its_probabilities_from_scored_pieces() -> None:
    # step 1: "The" (0.6) or "Pages" (0.2) continue a sentence, "none" (0.1) too; "It" (0.1) does not: left out
    # step 2: " page" (0.5) or " header" (0.25); the lead of the chosen token narrows to 0.67 - 0.33
    pieces = [
        ScoredPiece("The", top(("The", 0.6), ("Pages", 0.2), ("none", 0.1), ("It", 0.1))),
        ScoredPiece(" page", top((" page", 0.5), (" header", 0.25), (" is", 0.25))),
        ScoredPiece(
            " size",
            top(
                (" size", 0.9),
            ),
        ),  # never read: the reply was settled
    ]
    pick = read_pick(pieces, FOUND)
    assert pick.candidate == FOUND[1] and not pick.none and not pick.failed
    assert pick.probability == pytest.approx(6 / 9 * 2 / 3)
    assert pick.margin == pytest.approx(2 / 3 - 1 / 3)
    assert pick.none_probability == pytest.approx(1 / 9)


def test_none_is_no_pick_and_not_a_failure() -> None:
    pick = read_pick([ScoredPiece("none", top(("none", 0.7), ("The", 0.3)))], FOUND)
    assert pick.none and pick.candidate is None and not pick.failed
    assert pick.none_probability == pytest.approx(0.7)


def test_a_free_reply_is_matched_to_the_sentence_it_copied_without_probabilities() -> None:
    pick = read_pick(["Pages are numbered from 1.", " That is all."], FOUND)
    assert pick.candidate == FOUND[2] and pick.probability is None
    assert read_pick(["None."], FOUND).none
    assert read_pick(["Something else entirely."], FOUND).failed


def test_the_window_is_the_sentence_with_its_neighbours_in_its_passage() -> None:
    assert window(FOUND, FOUND[1]) == "The header is 100 bytes. The page size is 4096 bytes by default."
    assert window(FOUND, FOUND[2]) == "Pages are numbered from 1."


@pytest.mark.parametrize(
    ("question", "bare"),
    [
        ("How many bytes is the header?", True),
        ("Which option turns on verbose output?", True),
        ("Which version added big arrays?", True),
        ("哪个命令可以安装软件包？", True),
        ("Why does the page size matter?", False),
        ("Explain how the header is laid out.", False),
    ],
)
def test_a_question_for_a_bare_fact_is_answered_by_the_sentence(question: str, bare: bool) -> None:
    assert asks_bare_fact(question) is bare
