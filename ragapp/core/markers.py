"""Citation markers in an answer's text: [1], [1, 2], [1][2] and the full-width 【1】 that models often write in
Chinese answers. Read (``cited_numbers``), renumbered (``with_numbers``), and a streamed draft's numbered as the
checked answer's are (``draft_numbers``): the engine and the pages that show its answers use the same rules."""

from __future__ import annotations

import re
from collections.abc import Mapping

# [1], [1, 2] and the full-width 【1】 that models often write in Chinese answers.
MARKER = re.compile(r"[\[【](\d{1,3}(?:\s*[,，、]\s*\d{1,3})*)[\]】]")


def cited_numbers(text: str) -> list[int]:
    """Numbers cited in ``text`` in order of first appearance; handles [1], [1, 2], [1][2] and 【1】."""
    seen: dict[int, None] = {}
    for group in MARKER.findall(text):
        for part in re.split(r"[,，、]", group):
            seen.setdefault(int(part), None)
    return list(seen)


def with_numbers(text: str, mapping: Mapping[int, int]) -> str:
    """``text`` with each marker's numbers mapped (numbers not in ``mapping`` kept), in order within a marker."""

    def one(match: re.Match[str]) -> str:
        parts = [int(p) for p in re.split(r"[,，、]", match.group(1))]
        mapped = sorted(dict.fromkeys(mapping.get(p, p) for p in parts))
        if mapped == parts:
            return match.group(0)  # unchanged, as written
        inside = ", ".join(str(n) for n in mapped)
        return f"{match.group(0)[0]}{inside}{match.group(0)[-1]}"

    return MARKER.sub(one, text)


def draft_numbers(text: str) -> str:
    """A streamed draft's markers numbered 1..n in the order it first cites them, as ``renumbered`` numbers
    the checked answer (the same whenever the check keeps the model's markers). A marker still being written
    at the end is held back, so what this returns for a longer draft always begins with what it returned for a
    shorter one."""
    opened = max(text.rfind("["), text.rfind("【"))
    if opened >= 0 and not re.search(r"[\]】]", text[opened:]) and len(text) - opened <= _OPEN_MARKER_CHARS:
        text = text[:opened]
    order = cited_numbers(text)
    return with_numbers(text, {old: new for new, old in enumerate(order, start=1)})


_OPEN_MARKER_CHARS = 16  # an unclosed "[" further back than this is text, not a marker being written
