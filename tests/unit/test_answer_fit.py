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


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        # dev questions the patterns misread: the 么 of a closing 什么 is no yes/no particle...
        ("这个别名用的配置文件叫什么？", None),
        ("Google Earth 在 Debian main 区里的软件包叫什么？", None),
        ("for、while 这类循环语句本身的返回值是什么？", None),
        ("Git 术语里的 octopus 指的是什么？", None),
        # ...哪几 / 好几 ask which ones, or say "several", not how many...
        ("Git 的对象库里一共有哪几种对象？", None),
        ("从镜像下载一个源码包，通常会拿到哪几个文件？各装的是什么？", None),
        ("系统上装了好几个能提供同一功能的软件包，管理员用什么命令挑一个作为首选？", None),
        ("debian 目录里的模板被我误删了几个，怎样让 dh_make 把缺的补回来？", None),
        # ...and 版本号 named is no question for a version
        ("版本号最好控制在几个字符以内？", "number"),
        ("上游只用日期当版本号，我又想以后能平滑过渡到 0.1 这种版本号，上游版本该写成什么格式？", None),
        # what they read right stays so
        ("一个泛型函数里调用了 UseMethod，写在这句后面的代码还会执行吗？", "yes-no"),
        ("这个选项默认是打开的，是么？", "yes-no"),
        ("Debian 软件包名最短要几个字符？", "number"),
        ("这台机器上一共装了几个内核？", "number"),
        ("matio 的文档建议至少用哪个版本的 CMake？", "version"),
        ("hello 软件包的版本号是多少？", "version"),
    ],
)
def test_chinese_wordings_that_read_like_another_kind(question: str, kind: str | None) -> None:
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
