"""When the rewrite call is made: a follow-up that points back into the conversation, or a multi-part question;
never for a follow-up that stands alone (it would cost a model call to get the same question back)."""

from __future__ import annotations

import pytest

from ragapp.core.types import ChatTurn
from ragapp.qa.rewrite import QuestionPlanner, stands_alone

HISTORY = [ChatTurn("user", "What does error E07 mean on the V2 Pro?"), ChatTurn("assistant", "A stuck brush [1].")]


@pytest.mark.parametrize(
    "question",
    [
        "How much does it cost?",
        "And what about the V1?",
        "Which -s value would make it behave like BLASTP instead?",
        "How can I change the name of one of those labels?",
        "price?",
        "那 DNA 与 DNA 比对的默认阈值呢？",
        "它的保修期是多久？",
        "多少钱？",
    ],
)
def test_a_follow_up_that_points_back_is_rewritten(question: str) -> None:
    assert not stands_alone(question)
    assert QuestionPlanner(None, 1.0, 3).needed(question, HISTORY, "")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "question", ["What is the default scoring matrix of fasta36?", "擦窗机器人 Glide W3 的安全绳有多长？"]
)
def test_a_follow_up_that_stands_alone_is_searched_as_asked(question: str) -> None:
    assert stands_alone(question)
    planner = QuestionPlanner(None, 1.0, 3)  # type: ignore[arg-type]
    assert not planner.needed(question, HISTORY, "")
    assert not planner.needed(question, [], "the user asked about the V2 Pro")


def test_a_multi_part_question_is_split_with_or_without_a_conversation() -> None:
    planner = QuestionPlanner(None, 1.0, 3)  # type: ignore[arg-type]
    question = "When was Lumen founded, and how many employees does it have?"
    assert planner.needed(question, [], "") and planner.needed(question, HISTORY, "")
