"""Tokenisation for keyword search: jieba for Chinese runs, stemmed lower-cased words for the rest.

Scikit-style ``\\w\\w+`` patterns turn a whole Chinese clause into one token, so keyword search on
Chinese needs a real segmenter; ``lcut_for_search`` also emits the sub-words of long compounds.

Other words are Snowball-stemmed (English, PyStemmer) so "running" finds "runs": +0.02 nDCG@10 on SciFact
whole documents and +0.05 on our chunks (docs/benchmarks.md, "Keyword search"). Text is NFKC-normalised first, so
full-width ``Ｖ２`` reads as ``v2`` and accented or Greek letters stay inside their word. Queries and
documents go through the same function.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from functools import lru_cache

from ragapp.core.chunks import index_text
from ragapp.core.facts import ocr_fold
from ragapp.core.types import Chunk

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# A Chinese run, or a run of other letters/digits with optional ".digits" groups (decimals, versions).
_CJK_OR_WORD = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+(?:\.[0-9]+)*)")
_ASCII_WORD = re.compile(r"()([a-z0-9]+(?:\.[0-9]+)*)")  # the same on ASCII text, and faster
_jieba_lock = threading.Lock()
_local = threading.local()  # a PyStemmer instance must not be used by two threads at once
_stems: dict[str, str] = {}  # word -> stem; dict reads and writes are atomic, a race only stems twice
_MAX_STEMS = 200_000  # a vocabulary bound: past it the cache starts over

# Bump when tokenisation changes: a persisted keyword index built with another version is rebuilt.
# 2: Snowball stemming, NFKC + Unicode letters, "2.5.0" kept whole (plus "2.5").
# 3: chunks read by OCR are indexed by their folded tokens (``chunk_tokens``).
TOKENIZER_VERSION = 3
# Marks a token folded through OCR's confusions: such tokens come only from OCR'd chunks and from queries.
OCR_MARK = "~"

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


def _stem(word: str) -> str:
    """Snowball English stem of a lower-cased word (uncached: ``tokenize`` looks in ``_stems`` first)."""
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        import Stemmer

        stemmer = _local.stemmer = Stemmer.Stemmer("english", 0)  # our cache is in front of it
    stem = str(stemmer.stemWord(word))
    if len(_stems) >= _MAX_STEMS:
        _stems.clear()
    _stems[word] = stem
    return stem


def tokenize(text: str) -> list[str]:
    """Keyword tokens of ``text``, stopwords removed, English words stemmed.

    Chinese runs are segmented by jieba and kept as they are. Words with digits ("v2", "e07") are not
    stemmed. A dotted number stays one token ("2.5"); a version "2.5.0" gives "2.5.0" and "2.5", so a
    question about 2.5 still finds it.
    """
    if text.isascii():
        words = _ASCII_WORD.findall(text.lower())
    else:
        words = _CJK_OR_WORD.findall(unicodedata.normalize("NFKC", text).lower())
    tokens: list[str] = []
    for cjk, word in words:
        if cjk:
            with _jieba_lock:  # jieba's lazy dictionary load is not thread-safe
                pieces = _jieba().lcut_for_search(cjk)
            tokens.extend(p for p in pieces if p.strip() and p not in STOPWORDS)
        elif word in STOPWORDS:  # checked on the surface form, before stemming, as Lucene does
            continue
        elif word.isalpha():
            tokens.append(_stems.get(word) or _stem(word))
        elif "." in word:
            tokens.append(word)
            parts = word.split(".")
            tokens.extend(".".join(parts[:n]) for n in range(len(parts) - 1, 1, -1))
        else:
            tokens.append(word)
    return tokens


def chunk_tokens(chunk: Chunk) -> list[str]:
    """The tokens ``chunk`` is indexed by. A chunk read by OCR is indexed by its tokens folded through OCR's
    usual confusions (l/1/I, O/0, rn/m), and by those alone, so a query naming ``asn1`` finds the scan's
    ``asnl`` without a scanned passage counting twice for the words it read right."""
    tokens = tokenize(index_text(chunk))
    return [OCR_MARK + ocr_fold(t) for t in tokens] if chunk.ocr_confidence is not None else tokens


def query_tokens(query: str) -> list[str]:
    """The tokens a query searches by: its own, which text chunks hold, and their folded forms, which OCR'd
    chunks hold (``chunk_tokens``)."""
    tokens = tokenize(query)
    return tokens + [OCR_MARK + ocr_fold(t) for t in tokens]
