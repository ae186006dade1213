"""How an early quote is settled by the answer's events (``qa/early_evidence``)."""

from __future__ import annotations

from ragapp.core.events import AnswerEvent, EvidenceEvent, EvidenceWithdrawnEvent, NoticeEvent, TokenEvent
from ragapp.core.turn import Turn
from ragapp.core.types import Chunk, Citation
from ragapp.qa.early_evidence import EarlyEvidence

CHUNK = Chunk("c1", "d1", 0, "The battery lasts 90 minutes.", "manual.md")
QUOTE = EvidenceEvent("The battery lasts 90 minutes.", Citation(1, CHUNK), early=True)
SAME = EvidenceEvent("The battery lasts 90 minutes.", Citation(1, CHUNK))


def shown() -> EarlyEvidence:
    return EarlyEvidence(None, searched=True, shown=QUOTE)


def test_the_same_quote_is_not_shown_twice() -> None:
    events = [NoticeEvent("note"), SAME, TokenEvent("90 minutes [1]."), AnswerEvent("90 minutes [1].", (), True)]
    assert list(shown().settling(events)) == [events[0], *events[2:]]


def test_a_different_quote_replaces_it() -> None:
    other = EvidenceEvent("The battery lasts 90 minutes.", Citation(2, CHUNK))  # same words, another number
    assert list(shown().settling([other])) == [other]


def test_an_answer_without_a_quote_withdraws_it_before_its_first_token() -> None:
    token, answer = TokenEvent("Not in the documents."), AnswerEvent("Not in the documents.", (), False, True)
    out = list(shown().settling([token, answer]))
    assert isinstance(out[0], EvidenceWithdrawnEvent) and out[1:] == [token, answer]
    assert Turn.of([QUOTE, *out]).evidence is None


def test_nothing_to_settle_without_an_early_quote() -> None:
    events = [TokenEvent("x"), AnswerEvent("x", (), True)]
    assert list(EarlyEvidence(None).settling(events)) == events
    assert list(EarlyEvidence(None).withdrawn("asked back")) == []
