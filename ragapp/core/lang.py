"""Language detection, just enough to tell Chinese from everything else."""

from __future__ import annotations

import re
from typing import Literal

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")

Language = Literal["zh", "en"]
LANGUAGES: tuple[Language, ...] = ("zh", "en")


def is_chinese(text: str) -> bool:
    """True when the text is mostly Chinese (a few CJK characters in an English text don't count)."""
    cjk = len(_CJK.findall(text))
    return cjk > 0 and cjk >= len(_LATIN_WORD.findall(text))


def language_of(text: str) -> Language:
    return "zh" if is_chinese(text) else "en"


def said_as(question: str, english: str, chinese: str) -> str:
    """What the engine says about a turn, in the language of the question (as its answer is)."""
    return chinese if is_chinese(question) else english
