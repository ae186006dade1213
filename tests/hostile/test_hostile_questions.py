"""Questions that should never reach the model or the search: blank ones, and ones too long to embed (a
100,000-character question took 32 s to embed and overflowed the reranker). Real engine, scripted model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ragapp.core.events import AnswerEvent, NoticeEvent, RetrievalEvent, StageEvent


@pytest.mark.parametrize("mode", ["workflow", "agent", "auto"])
@pytest.mark.parametrize(
    ("question", "says"),
    [
        ("", "Type a question"),
        ("  \n\t ", "Type a question"),
        ("battery " * 20_000, "limited to 2,000"),
        ("电池续航多久" * 5_000, "问题太长"),
    ],
)
def test_a_blank_or_huge_question_gets_a_message_and_no_model_call(
    make_engine: Callable[..., Any], question: str, says: str, mode: str
) -> None:
    rig = make_engine()
    events = list(rig.engine.chat.ask(question, mode=mode))
    (answer,) = [e for e in events if isinstance(e, AnswerEvent)]
    assert says in answer.text and not answer.grounded
    assert any(isinstance(e, NoticeEvent) and says in e.message for e in events)
    assert not [e for e in events if isinstance(e, StageEvent | RetrievalEvent)]  # no search, no model
    assert rig.llm.calls == []


def test_a_question_at_the_limit_is_asked(make_engine: Callable[..., Any]) -> None:
    rig = make_engine(workflow={"max_question_chars": 40})
    events = list(rig.engine.chat.ask("How long does the battery last, really?"))  # 39 characters: searched
    assert any(isinstance(e, StageEvent) and e.stage == "retrieve" for e in events)
