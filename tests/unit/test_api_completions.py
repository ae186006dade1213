"""Engine events -> OpenAI completions (ragapp.serve.api.completions), with synthetic events: no server, no model."""

from __future__ import annotations

import pytest

from ragapp.core.events import (
    AnswerEvent,
    CheckedTextEvent,
    ClarifyEvent,
    ModeEvent,
    NoticeEvent,
    TokenEvent,
    TraceEvent,
)
from ragapp.core.types import Chunk, Citation, LeafScore
from ragapp.serve.api.completions import Clarifications, Turn, completion, conversation, last_chunk, mode_of
from ragapp.serve.api.errors import ApiError
from ragapp.serve.api.schemas import MessageIn

CHUNK = Chunk("doc1:0", "doc1", 0, "The kettle boils in 3 minutes.", "kettle.pdf", page=3, heading="Speed")
CLARIFY = ClarifyEvent(
    "How long does the battery last?",
    ("How long does the battery last?",),
    "How long does the battery last?",
    (
        LeafScore("alpha.specs", "Alpha > Specs", "KB", "alpha", 0.9),
        LeafScore("beta.specs", "Beta > Specs", "KB", "beta", 0.8),
    ),
)


def _messages(*pairs: tuple[str, str]) -> list[MessageIn]:
    return [MessageIn(role=role, content=text) for role, text in pairs]  # type: ignore[arg-type]


def test_the_last_message_is_the_question_and_the_turns_before_it_the_recent_history() -> None:
    messages = _messages(
        ("system", "be brief"), ("user", "q1"), ("assistant", "a1"), ("user", "q2"), ("assistant", "a2"), ("user", "q3")
    )
    question, history = conversation(messages, recent_turns=1)
    assert question == "q3" and [(t.role, t.content) for t in history] == [("user", "q2"), ("assistant", "a2")]
    assert conversation(messages, recent_turns=0)[1] == []
    with pytest.raises(ApiError, match="must be the user's question"):
        conversation(_messages(("user", "q"), ("assistant", "a")), 3)
    with pytest.raises(ApiError, match="no text"):
        conversation(_messages(("user", "  ")), 3)
    with pytest.raises(ApiError) as unknown:
        mode_of("gpt-4")
    assert unknown.value.status == 404 and mode_of("ragapp-agent") == "agent"


def test_an_answer_becomes_a_completion_with_citations_and_the_turns_facts() -> None:
    turn = Turn("auto")
    for event in (
        TraceEvent("t1"),
        ModeEvent("agent", "a comparison"),
        NoticeEvent("keyword search was slow"),
        TokenEvent("Three minutes "),
        TokenEvent("[1]. It"),
        CheckedTextEvent("Three minutes [1]."),
        AnswerEvent("Three minutes [1].", (Citation(1, CHUNK, 0.8, ("boils in 3 minutes",)),), grounded=True),
    ):
        turn.apply(event)
    reply = completion(turn, "ragapp-auto", 1).model_dump()
    message = reply["choices"][0]["message"]
    assert message["content"] == "Three minutes [1]." and message["clarification"] is None
    assert message["citations"][0] | {"text": ""} == {
        "number": 1, "document": "kettle.pdf", "doc_id": "doc1", "chunk_id": "doc1:0", "location": "p. 3 · Speed",
        "page": 3, "heading": "Speed", "text": "", "score": 0.8, "highlights": ["boils in 3 minutes"],
        "ocr_confidence": None, "figure_url": None, "caption": None,
    }  # fmt: skip
    assert reply["ragapp"] == {
        "trace_id": "t1", "mode": "agent", "grounded": True, "abstained": False,
        "notices": ["keyword search was slow"], "answered_before": None,  # answered now, not from the cache
        "memories_used": [],  # no memory of the asker's recalled
        "answered": True, "reason": None, "guess": None,  # an answer stated
        "suggestions": [],  # no next questions came
    }  # fmt: skip
    last = last_chunk(turn, "ragapp-auto", 1)
    assert last["choices"][0]["finish_reason"] == "stop" and "content" not in last["choices"][0]["delta"]
    assert "content" not in last["ragapp"]  # the stream already said it all


def test_the_stream_sends_checked_text_only_and_the_rest_in_the_last_chunk() -> None:
    turn = Turn("workflow")
    assert turn.apply(TokenEvent("It boils fast [4].")) == ""  # the unchecked draft is never sent
    turn.apply(AnswerEvent("It boils in 3 minutes [1].", (), grounded=True))
    last = last_chunk(turn, "ragapp-workflow", 1)
    assert last["choices"][0]["delta"]["content"] == "It boils in 3 minutes [1]." and "content" not in last["ragapp"]
    extended = Turn("workflow")
    assert extended.apply(CheckedTextEvent("It boils.")) == "It boils."
    extended.apply(AnswerEvent("It boils. In 3 minutes.", (), grounded=True))
    assert last_chunk(extended, "m", 1)["choices"][0]["delta"]["content"] == " In 3 minutes."
    # Were the answer not to begin with what was sent, it would come whole in ``ragapp.content``.
    odd = Turn("workflow")
    odd.apply(CheckedTextEvent("It boils."))
    odd.apply(AnswerEvent("It does not say.", (), grounded=False))
    assert last_chunk(odd, "m", 1)["ragapp"]["content"] == "It does not say."


def test_a_clarification_is_numbered_and_a_reply_naming_a_choice_resumes_it() -> None:
    turn = Turn("workflow")
    turn.apply(CLARIFY)
    turn.apply(AnswerEvent("Which one?", (), grounded=False))  # the engine's own words are replaced
    text = turn.message().content
    assert "1. Alpha › Specs" in text and "2. Beta › Specs" in text and "0. None of these" in text
    asked = Clarifications()
    asked.asked("user:ann", text, CLARIFY)

    def reply(said: str, owner: str = "user:ann") -> object:
        return asked.resume(owner, _messages(("user", "battery?"), ("assistant", text), ("user", said)))

    resumed = reply("2")
    assert resumed is not None
    question, picked, before = resumed  # type: ignore[misc]
    assert question == CLARIFY.question and picked.choice == "beta.specs" and before == 0
    assert reply("0")[1].choice == "*"  # type: ignore[index]
    assert reply("alpha › specs")[1].choice == "alpha.specs"  # type: ignore[index]
    assert reply("7") is None and reply("tell me more") is None  # a new question
    assert reply("2", owner="user:bob") is None  # somebody else's clarification is not theirs to resume


def test_the_stream_carries_the_checked_sentences_as_they_are_checked() -> None:
    lamp = Chunk("doc2:0", "doc2", 0, "The lamp runs 14 hours.", "lamp.pdf")
    turn = Turn("workflow")
    events = [
        TokenEvent("The lamp runs 14 hours [3]. The kettle "),
        CheckedTextEvent("The lamp runs 14 hours [1]."),  # [3] is the first passage cited: the answer's [1]
        TokenEvent("boils in 3 minutes [1]."),
    ]
    sent = [turn.apply(event) for event in events]
    assert sent == ["", "The lamp runs 14 hours [1].", ""]
    final = AnswerEvent(
        "The lamp runs 14 hours [1]. The kettle boils in 3 minutes [2].",
        (Citation(1, lamp), Citation(2, CHUNK)),
        grounded=True,
    )
    assert turn.apply(final) == ""
    assert turn.tail() == (" The kettle boils in 3 minutes [2].", False)  # nothing to replace
    last = last_chunk(turn, "ragapp-workflow", 0)
    assert "".join(sent) + last["choices"][0]["delta"]["content"] == final.text
    assert [c["number"] for c in last["choices"][0]["delta"]["citations"]] == [1, 2]
