"""Words a typesetter broke at the end of a line ("man-\\nagement") made whole again, so that search, quotes and
the chunk table see "management". Latin text only; written here because pypdf has no dehyphenation (PyMuPDF's
is not a dependency).

A break is joined without its hyphen unless the document also writes the word hyphenated on one line
("well-known"): then the hyphen is the word's own and stays. Soft hyphens (U+00AD) go everywhere.
"""

from __future__ import annotations

import re

_LETTER = r"A-Za-zÀ-ÖØ-öø-ɏ"
_BROKEN = re.compile(rf"([{_LETTER}]+)-[ \t]*\n[ \t]*([a-zß-öø-ÿ][{_LETTER}]*)")
_HYPHENATED = re.compile(rf"[{_LETTER}]+-[{_LETTER}]+")
_SOFT = "\u00ad"


def hyphenated_words(texts: list[str]) -> set[str]:
    """The words written with a hyphen within one line somewhere in ``texts``, lower-cased."""
    return {w.lower() for text in texts for w in _HYPHENATED.findall(text)}


def join_broken_words(text: str, hyphenated: set[str]) -> str:
    """``text`` with each word broken over a line end joined (see the module)."""
    text = text.replace(_SOFT + "\n", "").replace(_SOFT, "")

    def joined(match: re.Match[str]) -> str:
        head, tail = match.group(1), match.group(2)
        return f"{head}-{tail}" if f"{head}-{tail}".lower() in hyphenated else head + tail

    return _BROKEN.sub(joined, text)
