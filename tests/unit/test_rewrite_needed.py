"""When the rewrite call is made: in a conversation, a follow-up that points back or a multi-part question; never
for a follow-up that stands alone (it would cost a model call to get the same question back). A question asked on
its own is cut into its parts by its wording."""

from __future__ import annotations

import pytest

from ragapp.core.types import ChatTurn
from ragapp.qa.rewrite import QuestionPlanner, split_parts, stands_alone

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


def test_a_multi_part_question_is_rewritten_in_a_conversation_and_cut_by_its_wording_alone() -> None:
    planner = QuestionPlanner(None, 1.0, 3)  # type: ignore[arg-type]
    question = "When was Lumen founded, and how many employees does it have?"
    assert planner.needed(question, HISTORY, "") and not planner.needed(question, [], "")
    plan = planner.split(question)
    # "how many employees does it have?" leans on the first part: the whole question is searched
    assert plan.sub_questions == (question,)
    assert plan.answer_parts == ("When was Lumen founded", "how many employees does it have?")


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (
            "Which call makes R step through a function each time it runs, and which call stops that again?",
            ("Which call makes R step through a function each time it runs", "which call stops that again?"),
        ),
        (
            "warn 选项的默认值是多少？警告消息存在哪个变量里？",
            ("warn 选项的默认值是多少？", "警告消息存在哪个变量里？"),
        ),
        ("What is it? Why?", ("What is it? Why?",)),  # "Why?" alone is a fragment: no cut
        ("Does fasta36 search DNA and protein?", ("Does fasta36 search DNA and protein?",)),
        ("A one? B two? C three? D four?", ("A one?", "B two?", "C three? D four?")),
        (
            "How often is it replaced? ![q](https://x.example/q.png)",
            ("How often is it replaced? ![q](https://x.example/q.png)",),
        ),
        ("Which one starts it, and which stops it", ("Which one starts it, and which stops it",)),  # no question mark
        (  # a "?" inside a word is a glob, not the end of a part
            "讨厌 /etc/rc?.d 里的符号链接，可以装哪个软件包？它把链接换成了哪个文件？",
            ("讨厌 /etc/rc?.d 里的符号链接，可以装哪个软件包？", "它把链接换成了哪个文件？"),
        ),
        ("默认值是多少?警告存在哪个变量里?", ("默认值是多少?", "警告存在哪个变量里?")),
        ("Is page?id=3 served, and which header does it send?", ("Is page?id=3 served", "which header does it send?")),
    ],
)
def test_a_question_is_cut_into_its_parts_by_its_wording(question: str, parts: tuple[str, ...]) -> None:
    assert split_parts(question, 3) == parts


def test_parts_that_stand_alone_are_each_searched() -> None:
    plan = QuestionPlanner(None, 1.0, 3).split("How long does the Alpha battery last? How much does the Beta weigh?")  # type: ignore[arg-type]
    assert (
        plan.sub_questions
        == plan.answer_parts
        == (
            "How long does the Alpha battery last?",
            "How much does the Beta weigh?",
        )
    )
    assert QuestionPlanner(None, 1.0, 3).split("How long does the battery last?").answer_parts == ()  # type: ignore[arg-type]
