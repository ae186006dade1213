"""Prompt building and the question's language."""

from __future__ import annotations

import pytest

from ragapp.core.types import ChatTurn, Chunk, RetrievedChunk
from ragapp.qa.prompts import (
    NOT_FOUND_EN,
    NOT_FOUND_ZH,
    SYSTEM_EN,
    SYSTEM_ZH,
    answer_messages,
    format_context,
    is_chinese,
    not_found_message,
)


@pytest.mark.parametrize(
    ("text", "chinese"),
    [
        ("流明 V1 扫地机器人充满电能用多久？", True),
        ("流明 V2 Pro 的吸力是多少帕？", True),
        ("What does error code E07 mean on the Lumen V2 Pro?", False),
        ("How long is the warranty of 流明 robots in total, including Care Plus?", False),
        ("今天天气怎么样？", True),
        ("", False),
        ("12345 ???", False),
    ],
)
def test_language_detection(text: str, chinese: bool) -> None:
    assert is_chinese(text) is chinese


def test_not_found_message_follows_the_question_language() -> None:
    assert not_found_message("零件号 LB-5200 的保修期是多久？") == NOT_FOUND_ZH
    assert not_found_message("What's the capital of France?") == NOT_FOUND_EN


def _retrieved() -> list[RetrievedChunk]:
    return [
        RetrievedChunk(
            Chunk("a-0000", "a", 0, "Cliff sensor blocked.", "manual.pdf", page=4, heading="Errors"), 0.1, {}, {}
        ),
        RetrievedChunk(Chunk("b-0003", "b", 3, "保修期为 12 个月。", "warranty.docx"), 0.05, {}, {}),
    ]


def test_context_numbers_passages_from_one_with_their_source() -> None:
    assert format_context(_retrieved()) == (
        "[1] (manual.pdf · p. 4 · Errors)\nCliff sensor blocked.\n\n[2] (warranty.docx)\n保修期为 12 个月。"
    )


def test_english_question_gets_english_prompt_with_history_in_between() -> None:
    history = [ChatTurn("user", "Hi"), ChatTurn("assistant", "Hello!")]
    messages = answer_messages("What does E07 mean?", _retrieved(), history)
    assert [m.role for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[0].content == SYSTEM_EN
    assert messages[1:3] == history
    assert messages[-1].content.startswith("Context:\n[1] (manual.pdf")
    assert messages[-1].content.endswith("\n\nQuestion: What does E07 mean?")


def test_a_single_passage_is_cited_as_one_in_the_rules() -> None:
    one = _retrieved()[:1]
    assert "[2]" not in answer_messages("What does E07 mean?", one)[0].content
    assert "cite the passage(s) it comes from as [1]." in answer_messages("What does E07 mean?", one)[0].content
    assert "[2]" not in answer_messages("保修期多久？", one)[0].content
    assert "[1], [2]" in answer_messages("What does E07 mean?", _retrieved())[0].content


def test_chinese_question_gets_chinese_prompt() -> None:
    messages = answer_messages("保修期多久？", _retrieved())
    assert [m.role for m in messages] == ["system", "user"]
    assert messages[0].content == SYSTEM_ZH
    assert messages[1].content.startswith("参考资料:\n[1]")
    assert messages[1].content.endswith("问题: 保修期多久？")
