"""Where a passage is on a PDF page: a chunk's text (or a sentence quoted from it) found among the page's
characters, each with its box, so that the page image can mark it.

A chunk's text is not the page's text as PDFium reads it: pypdf read it, words broken at line ends were joined
("man-\\nagement"), a ligature is one character on one side and two on the other ("ﬁ"), spaces and line breaks
differ, a table became Markdown, and a quote is shown with its whitespace collapsed. Searching its lines on the
page (as the app did) missed a third of the sentences of some manuals. Both sides are compared here as
*skeletons* instead: NFKC-normalised, case-folded letters and digits, nothing else, each page skeleton character
remembering the page character it came from. A passage is found whole when it can be; else it is tiled from the
longest stretches it shares with the page (difflib's longest match, ``MIN_TILE`` characters or more, in any
order), which survives a reading order that differs, text the chunker changed, and a passage of which only a
part is on this page (the rest on the next one). Written here: PDFium's own search matches exact text only.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import cached_property
from itertools import pairwise
from typing import Any

Box = tuple[float, float, float, float]  # x0, y0 (bottom), x1, y1 (top), in PDF points

MIN_TILE = 10  # skeleton characters: a shorter stretch shared with the page is chance ("thefunction")
MIN_TILE_CJK = 4  # Chinese characters carry more each
FOUND_SHARE = 0.5  # a passage is said to be on the page when this share of its skeleton is
_GAP_CHARS = 3  # page characters (spaces, punctuation) bridged between two marked ones on a line
EDGE = 80  # skeleton characters of a running header or footer between a page's edge and its text
_FILLED_GAP = 12  # skeleton characters of a difference between two tiles marked with them (a misread symbol)


@dataclass(frozen=True)
class PageText:
    """A page's characters as PDFium reads them: the text, each character's box, and the skeleton."""

    text: str
    boxes: tuple[Box, ...]
    skeleton: str
    origin: tuple[int, ...]  # the page character each skeleton character came from

    @cached_property
    def matcher(self) -> SequenceMatcher[str]:
        """The page as difflib's second sequence: indexed once (its b2j), searched again for each tile."""
        return SequenceMatcher(None, "", self.skeleton, autojunk=False)


@dataclass(frozen=True)
class Located:
    """Where a passage is: one box per stretch of a line, the share of the passage found, and whether that is
    the passage (``FOUND_SHARE`` of it or more, or its part on this page of one that runs over the page's edge)."""

    rects: tuple[Box, ...] = ()
    share: float = 0.0
    found: bool = False


def skeleton(text: str) -> tuple[str, list[int]]:
    """The letters and digits of ``text``, NFKC-normalised and case-folded, each with the index it came from."""
    out: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        if char.isascii():  # the common case, without the normalisation's cost
            if char.isalnum():
                out.append(char.lower())
                origin.append(index)
            continue
        for piece in unicodedata.normalize("NFKC", char).casefold():
            if piece.isalnum():
                out.append(piece)
                origin.append(index)
    return "".join(out), origin


def page_text(textpage: Any) -> PageText:
    """``textpage`` (a pypdfium2 text page; the caller holds ``PDFIUM_LOCK``) read character by character."""
    import pypdfium2.raw as pdfium_c

    count = textpage.count_chars()
    # One character per index (get_text_range may join a surrogate pair): what each box belongs to.
    text = "".join(chr(pdfium_c.FPDFText_GetUnicode(textpage, i) or 32) for i in range(count))
    boxes = tuple(textpage.get_charbox(i, loose=True) for i in range(count))
    skel, origin = skeleton(text)
    return PageText(text, boxes, skel, tuple(origin))


def locate(passage: str, page: PageText) -> Located:
    """Where ``passage`` is on ``page`` (see the module)."""
    wanted, _ = skeleton(passage)
    if not wanted or not page.skeleton:
        return Located()
    start = page.skeleton.find(wanted)
    if start >= 0:
        rects = _rects(page, range(start, start + len(wanted)))
        return Located(rects, 1.0, bool(rects))
    tiles = _tiles(wanted, page)
    if not tiles:
        return Located()
    share = sum(size for _a, _b, size in tiles) / len(wanted)
    rects = _rects(page, _marked(tiles))
    return Located(rects, share, bool(rects) and (share >= FOUND_SHARE or _over_the_edge(tiles, wanted, page)))


def _over_the_edge(tiles: list[tuple[int, int, int]], wanted: str, page: PageText) -> bool:
    """Whether the tiles hold the passage's start at the page's end, or its end at the page's start (a running
    header or footer may stand between): a passage that goes on over a page break."""
    least = 2 * MIN_TILE
    starts = any(a == 0 and size >= least and b + size >= len(page.skeleton) - EDGE for a, b, size in tiles)
    ends = any(a + size == len(wanted) and size >= least and b <= EDGE for a, b, size in tiles)
    return starts or ends


def _tiles(wanted: str, page: PageText) -> list[tuple[int, int, int]]:
    """(passage offset, page offset, size) of the longest stretches shared with the page, longest first, none
    overlapping in the passage."""
    matcher = page.matcher
    matcher.set_seq1(wanted)
    least = min(len(wanted), MIN_TILE_CJK if _cjk(wanted) else MIN_TILE)
    tiles: list[tuple[int, int, int]] = []
    todo = [(0, len(wanted))]
    while todo:
        lo, hi = todo.pop()
        if hi - lo < least:
            continue
        a, b, size = matcher.find_longest_match(lo, hi, 0, len(page.skeleton))
        if size < least:
            continue
        tiles.append((a, b, size))
        todo += [(lo, a), (a + size, hi)]
    return tiles


def _marked(tiles: list[tuple[int, int, int]]) -> list[int]:
    """The page skeleton offsets the tiles cover, and the gap between two tiles that follow each other on the
    page as in the passage when it is short (a character read differently, a symbol the chunk spells out)."""
    ordered = sorted(tiles)
    marked = [b + i for _a, b, size in ordered for i in range(size)]
    for (a1, b1, s1), (a2, b2, _s2) in pairwise(ordered):
        page_gap, text_gap = b2 - (b1 + s1), a2 - (a1 + s1)
        if 0 < page_gap <= _FILLED_GAP and text_gap <= _FILLED_GAP:
            marked += range(b1 + s1, b2)
    return sorted(set(marked))


def _cjk(text: str) -> bool:
    return sum("\u4e00" <= c <= "\u9fff" for c in text) * 2 > len(text)


def _rects(page: PageText, offsets: range | list[int]) -> tuple[Box, ...]:
    """One box per stretch of marked characters on a line: the characters between two marked ones that are
    close (a space, a hyphen) go with them; a new line, or a wide gap (the next cell of a table), starts a box."""
    chars = sorted({page.origin[o] for o in offsets})
    rects: list[list[float]] = []
    last = -10
    for index in chars:
        x0, y0, x1, y1 = page.boxes[index]
        if x1 <= x0 or y1 <= y0:  # a character PDFium made up (a space, a line break): no box of its own
            continue
        current = rects[-1] if rects else None
        height = y1 - y0
        same_line = current is not None and y0 < current[3] and y1 > current[1] and x0 >= current[0] - height
        near = current is not None and x0 - current[2] <= 1.5 * height
        bridged = index - last <= _GAP_CHARS + 1 and "\n" not in page.text[last:index]
        if current is not None and same_line and near and bridged:
            current[0], current[1] = min(current[0], x0), min(current[1], y0)
            current[2], current[3] = max(current[2], x1), max(current[3], y1)
        else:
            rects.append([x0, y0, x1, y1])
        last = index
    return tuple((r[0], r[1], r[2], r[3]) for r in rects)
