"""The checked answer's beginning while the model writes (``ragapp.qa.checked_draft``): fed the reply token by
token, what it gives is always the beginning of the answer the check makes of the whole reply (``checked_answer``
then ``renumbered``, as the writer does), sentence by sentence; it waits where the whole reply decides."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest

from ragapp.core.types import Chunk, RetrievedChunk
from ragapp.qa.answer_check import as_shown, checked_answer
from ragapp.qa.checked_draft import CheckedDraft
from ragapp.qa.citations import renumbered
from ragapp.qa.grounding import SupportRules

PASSAGES = [
    "The Lumen V2 Pro battery lasts 150 minutes on a full charge. Charging takes 4 hours.",
    "The Lumen V2 Pro has a suction power of 5000 Pa and a 250 ml water tank.",
    "Error E07 means the cliff sensors are dirty: wipe the 4 cliff sensors with a dry cloth.",
]
KEPT = [RetrievedChunk(Chunk(f"d{i}-0000", f"d{i}", 0, text, f"d{i}.md"), 1.0, {}, {}, 0.9)
        for i, text in enumerate(PASSAGES)]  # fmt: skip
QUESTION = "How long does the V2 Pro battery last?"


def _tokens(reply: str) -> list[str]:
    """The reply in model-like pieces: words and spaces, a marker split in two."""
    return [p for p in re.split(r"(\s+|\[|\])", reply) if p]


def _given(question: str, reply: str, check: bool = True) -> tuple[list[str], str]:
    """What the draft gave along the way, and the answer the check makes of the whole reply."""
    draft = CheckedDraft(question, [as_shown(c) for c in KEPT], SupportRules(), [False] * len(KEPT), check)
    given = [text for piece in _tokens(reply) if (text := draft.add(piece)) is not None]
    answer = renumbered(checked_answer(question, reply.strip(), KEPT))
    return given, answer.text


REPLIES = [
    # The supported first sentence goes as soon as the next begins; the unsupported second is dropped.
    "The battery lasts 150 minutes [1]. It is described in the context passage [1]. It charges in 4 hours [1].",
    "The battery lasts 150 minutes [3]. Charging takes 4 hours [3]. The water tank holds 250 ml [2].",
    "The battery lasts 150 minutes [1]. The battery lasts 900 minutes on eco mode [1]. Charging takes 4 hours.",
    "Sure. The battery lasts 150 minutes [1].\n\nCharging takes 4 hours [1].",
]


@pytest.mark.parametrize("reply", REPLIES)
def test_what_it_gives_is_always_the_beginning_of_the_checked_answer(reply: str) -> None:
    given, answer = _given(QUESTION, reply)
    assert given, "a supported first sentence is given before the reply ends"
    for text in given:
        assert answer.startswith(text), (text, answer)
    assert all(b.startswith(a) and len(b) > len(a) for a, b in pairwise(given))


def test_markers_are_numbered_as_the_answer_numbers_them() -> None:
    given, answer = _given(QUESTION, "The battery lasts 150 minutes [3]. Its tank holds 250 ml [2]. And more.")
    assert given[0] == "The battery lasts 150 minutes [1]." and answer.startswith(given[-1])


def test_it_waits_where_the_whole_reply_decides() -> None:
    # The first sentence it can judge is unsupported: the answer may be a refusal as a whole.
    given, answer = _given(QUESTION, "The battery lasts 900 minutes [1]. It charges in 4 hours [1]. Done.")
    assert given == [] and answer
    # A sentence that only says what the question said may be an echo, replaced by a quote.
    given, _answer = _given("How long does the battery last?", "The battery lasts [1]. ")
    assert given == []
    # An address may be removed from the whole reply: nothing more is given after one.
    given, answer = _given(QUESTION, "The battery lasts 150 minutes [1]. See https://x.example/a for more. Bye.")
    assert given == ["The battery lasts 150 minutes [1]."] and answer.startswith(given[0])
    # The last sentence, still being written, is never given.
    draft = CheckedDraft(QUESTION, PASSAGES, SupportRules())
    assert draft.add("The battery lasts 150 minutes [1].") is None
    assert draft.add(" It") == "The battery lasts 150 minutes [1]."


def test_with_the_check_off_the_reply_goes_as_written_sentence_by_sentence() -> None:
    draft = CheckedDraft(QUESTION, PASSAGES, SupportRules(), check=False)
    given = [t for piece in _tokens("Whatever it says [2]. And more [1]. End") if (t := draft.add(piece))]
    assert given == ["Whatever it says [1].", "Whatever it says [1]. And more [2]."]
