"""Does the answer answer the question asked, not only state facts that occur in a passage?

The support check (``grounding``) passes any sentence whose facts are in a passage, so a reply that names the
neighbouring fact, gives no value at all ("The type assigned to X is [3]."), or answers a "how many" with a name
still passes it. These checks read the question and the reply only (no model call):

- ``asked_kind``: the kind of answer a question asks for, from its wording in English or Chinese: a number, a
  version, a year, or a yes/no; None when the wording does not say (most "what"/"which" questions).
- ``has_kind``: the reply holds something of that kind.
- ``leaves_slot``: the reply ends on a citation marker where the value belongs, so it gives no answer.

``confidence`` turns them into the ``fits`` check.

Written here because no library classifies question types for both languages without a model; the patterns are
the common wordings, and a question they do not recognise is not judged (None), never failed.
"""

from __future__ import annotations

import re
from typing import Literal

from ragapp.qa.grounding import strip_markers

AnswerKind = Literal["number", "version", "year", "yes-no"]

_EN_KINDS: tuple[tuple[AnswerKind, re.Pattern[str]], ...] = (
    ("version", re.compile(r"\b(which|what) (\w+ )?version\b|\bversion (number|string)\b", re.I)),
    (
        "year",
        re.compile(r"\b(what|which|in which) year\b|\bwhen was\b.*\b(released|published|written|founded)\b", re.I),
    ),
    (
        "number",
        re.compile(
            r"\bhow (many|much|long|often|large|big|far|old|wide|deep)\b|\bwhat (percentage|fraction|ratio|"
            r"number of|size|length|limit|maximum|minimum|value of the (limit|maximum|minimum))\b|"
            r"\b(maximum|minimum|max|min)(imum)? (number|size|length|value)\b",
            re.I,
        ),
    ),
    (
        "yes-no",
        re.compile(r"^\s*(is|are|was|were|does|do|did|can|could|should|will|would|has|have|had|may|must)\b", re.I),
    ),
)
# Chinese wordings that look like a kind and are not: "版本号" named ("版本号最好控制在几个字符以内？" asks a
# count) asks for a version only as "版本号是多少/什么"; "哪几个" asks which ones and "好几个" says "several", no
# count, nor does "了几个" closing a clause ("模板被我误删了几个，怎样补回来？": a few were deleted); the 么 of a
# closing 什么 / 怎么 / 这么 / 那么 / 多么 / 要么 is no yes/no particle as in "是么？".
_ZH_UNITS = "(个|种|位|次|天|年|项|条|层|字节|比特|秒|分钟|小时|倍|页|行|列|级)"  # 几 counts what these measure
_ZH_KINDS: tuple[tuple[AnswerKind, re.Pattern[str]], ...] = (
    ("version", re.compile(r"(哪个|哪一个|什么|几)版本|版本号(是|为)?(多少|什么|几)")),
    ("year", re.compile(r"哪一?年|(什么|何)时(候)?(发布|推出|出版|成立)")),
    (
        "number",
        re.compile(rf"多少|(?<![哪好了])几{_ZH_UNITS}|了几{_ZH_UNITS}(?![，,；;])|多长|多大|多久|多少?倍"),
    ),
    (
        "yes-no",
        re.compile(r"(吗|(?<![什怎这那多要])么)\s*[？?]?\s*$|是否|能不能|可不可以|有没有|是不是|会不会|要不要"),
    ),
)
_CHOICE = re.compile(r"\bor\b|还是|或者", re.I)  # "is it A or B?" asks for a choice, not a yes/no

_NUMERAL = re.compile(r"(?<![A-Za-z0-9_.-])\d+(?:[.,]\d+)*(?![A-Za-z0-9_])")  # not the 77 of OK-FLT-77
_NUMBER_WORD = re.compile(
    r"\b(zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|hundred|thousand|million|"
    r"once|twice|half|single|double)\b|[零一二两三四五六七八九十百千万亿半]",
    re.I,
)
_VERSION = re.compile(r"\d+(\.\d+)+|\bv\d+\b|\d+-\d+", re.I)
_YEAR = re.compile(r"(?<!\d)(1[89]\d\d|20\d\d)(?!\d)")
_YES_NO = re.compile(
    r"\b(yes|no|not|never|cannot|can't|doesn't|don't|isn't|aren't|won't|only|must|may|can|does|is|are|will|"
    r"should|always|true|false)\b|是|否|不|没有|可以|能|会|需要|必须|应该",
    re.I,
)
# A marker standing where the value belongs, at the end of the reply: "The function to call first is [1]."
_VALUE_SLOT = re.compile(r"(\b(?:is|are|was|were|be|called|named|by|to|of)|[:：是为])\s*(?:\[\d+\]\s*)+[.。]?\s*$")


def asked_kind(question: str) -> AnswerKind | None:
    """The kind of answer ``question`` asks for, or None when its wording does not say."""
    for kind, pattern in (*_ZH_KINDS, *_EN_KINDS):
        if pattern.search(question):
            if kind == "yes-no" and _CHOICE.search(question):
                return None
            return kind
    return None


def has_kind(reply: str, kind: AnswerKind, question: str = "") -> bool:
    """``reply`` (markers aside) holds an answer of ``kind``: for a number or a version, one that is not
    already in ``question`` (the K9 of "How many days should the K9 ..." is no answer)."""
    plain = strip_markers(reply)
    if kind == "number":
        asked = set(_NUMERAL.findall(question))
        return any(n not in asked for n in _NUMERAL.findall(plain)) or bool(_NUMBER_WORD.search(plain))
    if kind == "version":
        asked = {m.group() for m in _VERSION.finditer(question)}
        return any(m.group() not in asked for m in _VERSION.finditer(plain))
    return bool((_YEAR if kind == "year" else _YES_NO).search(plain))


def leaves_slot(reply: str) -> bool:
    """The reply ends with a citation marker where its value belongs ("The type assigned to X is [3].")."""
    return bool(_VALUE_SLOT.search(reply.strip()))
