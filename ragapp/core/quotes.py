"""A passage's sentence as a quote on screen: it ends where a sentence ends.

A sentence taken from a chunk may not: the page (so the chunk) ended in the middle of it ("…on a very dark"),
or it is too long to show whole (a table read as one sentence). Such a quote is shortened to its last sentence
end or clause boundary, whichever comes last, with an ellipsis, never cut mid-phrase; a cut-off sentence with neither is
no quote at all (``None``: the caller shows another, or none). English and Chinese punctuation alike.
"""

from __future__ import annotations

import re

from ragapp.core.markers import MARKER

QUOTE_CHARS = 400  # a longer quote is shortened
MIN_KEPT = 0.3  # a shortened quote keeps at least this share of what it was cut from (else: no boundary found)
ELLIPSIS = "…"
_CJK = r"\u3000-\u303f\u4e00-\u9fff\uff00-\uffef"
_CLOSERS = "\"'”’」』)）】》]*_"
# A sentence's end: a full stop (not after a lone capital, nor in "e.g."), ! ? or … before a space, or 。！？,
# with the closing quotes or brackets after it; a clause's: , ; : before a space, or ，；：、.
_SENTENCE_END = re.compile(
    rf"(?:(?<!\b[A-Z])(?<!\be\.g)(?<!\bi\.e)[.!?…][{re.escape(_CLOSERS)}]*(?=\s|$)|[。！？][{re.escape(_CLOSERS)}]*)"
)
_CLAUSE_END = re.compile(r"[,;:](?=\s)|[，；：、]")
_ENDS_LINE = 60  # a last piece on one line shorter than this is an item, a heading or a table row, not cut off


def collapsed(text: str) -> str:
    """``text`` on one line: runs of whitespace made one space, none between two Chinese characters."""
    flat = " ".join(text.split())
    return re.sub(rf"(?<=[{_CJK}]) (?=[{_CJK}])", "", flat)


def _width(text: str) -> int:
    """How wide ``text`` is set, a Chinese character counting as two letters."""
    return len(text) + len(re.findall(rf"[{_CJK}]", text))


def ends_sentence(text: str) -> bool:
    """Whether ``text`` (its [n] markers aside) ends with a sentence's end mark."""
    body = MARKER.sub("", text).rstrip().rstrip(_CLOSERS).rstrip()
    return body.endswith((".", "!", "?", "。", "！", "？", ELLIPSIS))


def quote(sentence: str, passage: str = "", limit: int = QUOTE_CHARS) -> str | None:
    """``sentence`` (a piece of ``passage``) as a quote to show (see the module), or None.

    It counts as cut off when it has no end mark, closes ``passage``, and ``passage`` is prose (it ends other
    sentences: a table has no end marks at all), unless it is a short line of its own (a list item, a heading,
    a row: complete as they are)."""
    raw = sentence.strip()
    flat = collapsed(raw)
    if not flat:
        return None
    whole = passage.rstrip()
    cut_off = (
        whole.endswith(raw)
        and not ends_sentence(flat)
        and ("\n" in raw or _width(raw) >= _ENDS_LINE)
        and _SENTENCE_END.search(whole[:-1]) is not None
    )
    if len(flat) <= limit and not cut_off:
        return flat
    head = flat[:limit]
    # The last boundary, a sentence's or a clause's, that keeps enough: as much of the quote as can stand.
    least = MIN_KEPT * min(len(flat), limit)
    ends = [(m.end(), True) for m in _SENTENCE_END.finditer(head) if m.end() >= least]
    ends += [(m.end(), False) for m in _CLAUSE_END.finditer(head) if m.end() >= least]
    if ends:
        end, full_stop = max(ends)
        kept = head[:end].rstrip()
        if not full_stop:
            kept = kept[:-1].rstrip()  # "…, …" reads badly: the comma goes
        return kept + ("" if re.search(rf"[{_CJK}]$", kept) else " ") + ELLIPSIS
    if cut_off:
        return None
    # A long run without any punctuation (a table read as one sentence): its start, at a space.
    space = head.rfind(" ")
    return (head[:space] if space > 0 else head).rstrip() + " " + ELLIPSIS
