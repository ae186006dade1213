"""Does the answer answer the question: the kind a question asks for, and replies that give no value."""

from __future__ import annotations

import pytest

from ragapp.qa.answer_fit import asked_kind, has_kind, leaves_slot


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How many bits long are the interface identifiers?", "number"),
        ("What is the maximum size of a page?", "number"),
        ("Which firmware version added pet mode?", "version"),
        ("In which year was the S language awarded?", "year"),
        ("Does camlidl generate a C header by default?", "yes-no"),
        ("Is the pointer unique or ref by default?", None),  # a choice, not a yes/no
        ("Which option makes it also generate a C header file?", None),  # wording says nothing checkable
        ("R 一共有几种基本向量类型？", "number"),
        ("默认的页面大小是多少？", "number"),
        ("hello 软件包样例写的是哪个版本？", "version"),
        ("S 语言哪一年获奖？", "year"),
        ("dpkg 能直接安装 .rpm 软件包吗？", "yes-no"),
        ("用 dpkg 还是 apt 安装？", None),
    ],
)
def test_the_kind_a_question_asks_for(question: str, kind: str | None) -> None:
    assert asked_kind(question) == kind


def test_a_reply_holds_the_kind_or_not() -> None:
    assert has_kind("They are 128 bits long [1].", "number")
    assert has_kind("六种 [2]", "number")
    assert not has_kind("Com.opaque [1]", "number")  # a name where a count was asked
    assert not has_kind("Rinse the OK-FLT-77 filter of the K9 regularly [1].", "number", "How often is the K9's?")
    assert has_kind("每 14 天冲洗一次 [1]", "number") and has_kind("每14天 [1]", "number")
    assert not has_kind("The V2 Pro firmware [1].", "version", "Which V2 Pro firmware version?")
    assert has_kind("Version 2.5.0 added it [1].", "version")
    assert not has_kind("The pet mode firmware [1].", "version")
    assert has_kind("In 1998 [1].", "year") and not has_kind("In the ACM award [1].", "year")
    assert has_kind("No, only with -header [2].", "yes-no")
    assert not has_kind("2.4 [3]", "yes-no")  # a bare value does not answer a yes/no question


def test_a_marker_where_the_value_belongs_is_no_answer() -> None:
    assert leaves_slot("The type assigned to X is [3].")
    assert leaves_slot("该选项是 [2]。")
    assert leaves_slot("It is called [1] [2]")
    assert not leaves_slot("The type assigned to X is integer [3].")
    assert not leaves_slot("Use -header [1].")
