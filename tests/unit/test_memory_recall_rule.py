"""The memory recall rule (``ragapp.qa.memory_recall``) on hand-made similarities: a message that names nothing
recalls nothing however similar; otherwise the threshold decides, in the hits' order."""

from __future__ import annotations

from ragapp.qa.memory_recall import RecallRule, names_something, recalled

HITS = [("m1", 0.86), ("m2", 0.76), ("m3", 0.70)]


def test_a_message_without_content_words_recalls_nothing() -> None:
    rule = RecallRule(0.75, min_words=3)
    for message in ("hello", "thanks!", "你好", "Who are you?", "good morning", "Tell me a joke"):
        assert not names_something(message, rule), message
        assert recalled(message, HITS, rule) == []


def test_a_question_recalls_the_memories_above_the_threshold() -> None:
    rule = RecallRule(0.75, min_words=3)
    assert recalled("How long does the battery last?", HITS, rule) == [("m1", 0.86), ("m2", 0.76)]
    assert recalled("电池能用多久？", HITS, rule) == [("m1", 0.86), ("m2", 0.76)]
    assert recalled("hello", HITS, RecallRule(0.75)) == [("m1", 0.86), ("m2", 0.76)]  # min_words 0: as before
