"""Tokenisation for keyword search: jieba for Chinese runs, lower-cased words for the rest.

Scikit-style ``\\w\\w+`` patterns turn a whole Chinese clause into one token, so keyword search on
Chinese needs a real segmenter; ``lcut_for_search`` also emits the sub-words of long compounds.
"""

from __future__ import annotations

import logging
import re
import threading
from functools import lru_cache

_CJK_OR_WORD = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)|([a-z0-9]+(?:\.[0-9]+)?)")
_jieba_lock = threading.Lock()

# Bump when tokenisation changes: a persisted keyword index built with another version is rebuilt.
TOKENIZER_VERSION = 1

# Function words that match everything and would give off-topic questions keyword hits.
_EN_STOP = frozenset(
    """a about above after again all am an and any are as at be been before being below between both but by
    can could did do does doing down during each few for from further had has have having he her here hers
    him his how i if in into is it its itself just me more most my no nor not now of off on once only or
    other our ours out over own same she should so some such than that the their theirs them then there
    these they this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours s t don tell please""".split()
)
_ZH_STOP = frozenset(
    """的 了 是 在 和 与 及 或 吗 呢 吧 啊 呀 嘛 么 什么 怎么 怎样 如何 哪 哪些 哪个 多少 几 请问 请
    我 你 他 她 它 我们 你们 他们 这 那 这个 那个 有 没有 会 能 可以 要
    就 都 也 还 被 把 对 给 从 到 为 为了 一个 一下 是否 告诉""".split()
)
STOPWORDS = _EN_STOP | _ZH_STOP


@lru_cache(maxsize=1)
def _jieba():  # type: ignore[no-untyped-def]
    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


def tokenize(text: str) -> list[str]:
    """Keyword tokens of ``text``, stopwords removed."""
    tokens: list[str] = []
    for cjk, word in _CJK_OR_WORD.findall(text.lower()):
        if cjk:
            with _jieba_lock:  # jieba's lazy dictionary load is not thread-safe
                pieces = _jieba().lcut_for_search(cjk)
            tokens.extend(p for p in pieces if p.strip() and p not in STOPWORDS)
        elif word not in STOPWORDS:
            tokens.append(word)
    return tokens
