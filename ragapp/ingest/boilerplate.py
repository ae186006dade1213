"""Tell boilerplate pages (tables of contents, back-of-book indexes, licence texts) from content.

Such pages share the words of many questions ("battery", "warranty", "copy") without answering any, so
they crowd real evidence out of the top results. Each rule judges the *share* of a page that looks like
boilerplate, never a single phrase: a title page with a two-line licence notice, or a page that talks
about an "index", stays content. Pure functions of the text; no I/O. ``split_boilerplate`` applies the rules
to a parsed document at ingest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any

from ragapp.core.said import Said
from ragapp.core.types import ParsedDocument, Section, SkippedSection

TABLE_OF_CONTENTS = "table of contents"
INDEX = "index"

# Dot leaders: runs of dots (spaced or not), ellipses, middle dots or underscores before a page number.
_LEADER = re.compile(r"(?:\s?[.．·・。_]){3,}|…{2,}")
# A line that ends in a page number (arabic, or roman for front matter) after a title with a letter in it.
_ENDS_WITH_PAGE = re.compile(r"^(?P<title>.*[^\W\d_].*?)(?:[\s.．·・…。_]+)(?P<page>\d{1,4}|[ivxlcdm]{1,7})$", re.I)
# An index entry: a term, then page references ("Battery, 12, 45-47" / "电池，12、45" / "Battery 12").
_REFS = r"\d{1,4}(?:\s?[-–]\s?\d{1,4})?(?:\s?[,，、;]\s?\d{1,4}(?:\s?[-–]\s?\d{1,4})?)*"
_INDEX_ENTRY = re.compile(rf"^(?P<term>[^\W\d_][^\n]{{0,60}}?)(?P<sep>\s?[,，、:]\s?|\s)(?P<refs>{_REFS})$")
_SEE_ALSO = re.compile(r"^[^\W\d_].{0,60}?[,.]?\s\(?(?:see also|see)\s", re.I)
_TOC_TITLE = re.compile(r"^(?:table of contents|contents|目\s*录|目\s*次)$", re.I)
_INDEX_TITLE = re.compile(r"^(?:index|alphabetical index|subject index|索\s*引)$", re.I)

# Licence families, most specific first (the LGPL and the FDL mention the GPL), each with phrases that
# only its text uses, so that the later pages of a long licence (which no longer name it) are known too.
# Other legal text (a product's own terms, warranty, EULA) is content: questions are asked about it.
_LICENCES: Sequence[tuple[str, Sequence[str]]] = (
    (
        "GNU FDL",
        (
            "gnu free documentation license",
            "permission is granted to copy, distribute and/or modify this document",
            "invariant sections",
            "cover texts",
            "modified version of the document",
        ),
    ),
    ("GNU LGPL", ("gnu lesser general public license", "gnu library general public license", "combined work")),
    (
        "GNU GPL",
        (
            "gnu general public license",
            "this program is free software; you can redistribute it",
            "without even the implied warranty of merchantability",
            "corresponding source",
        ),
    ),
    ("Creative Commons", ("creative commons", "attribution-sharealike", "attribution-noncommercial")),
    ("MIT", ("permission is hereby granted, free of charge, to any person obtaining a copy",)),
    ("Apache", ("apache license, version 2.0", "licensed under the apache license")),
)
# Words of legal boilerplate: a sentence with one of them counts towards the licence share of a page.
_LEGAL = re.compile(
    r"licen[cs]|copyright|copyleft|permission|distribut|redistribut|modif|verbatim|warrant|merchantab|liabil|"
    r"sublicens|royalt|patent|invariant|cover texts?|free software|gnu|derivative|\bterms\b|cop(?:y|ies|ying)\b|"
    r"\bthe (?:document|program|library|work)\b|"
    r"许可|版权|授权|复制|分发|修改|担保",
    re.I,
)
_SENTENCE = re.compile(r"[^.;。；!?！？\n]+[.;。；!?！？]?")

_ENTRY_CHARS = 300  # longer lines are never a table-of-contents entry
_MIN_ENTRIES = 3  # fewer entry lines than this never make a table of contents or an index
_LICENCE_SHARE = 0.5  # the part of a page's characters in legal sentences that makes it licence text


def boilerplate_reason(text: str, heading: str | None = None) -> str | None:
    """Why a page (or section) is boilerplate to keep out of retrieval, or None for content.

    Args:
        text: the page's text, lines as extracted.
        heading: the section's heading path, if the parser found one ("Appendix > Index").

    Returns:
        "table of contents", "index", "licence text (GNU FDL)" (or another licence), or None.
    """
    lines = [" ".join(line.split()) for line in text.splitlines()]
    lines = [line for line in lines if line]
    if not lines:
        return None
    title = _last_heading(heading)
    titled_toc = bool(_TOC_TITLE.match(title)) or any(_TOC_TITLE.match(line) for line in lines[:3])
    titled_index = bool(_INDEX_TITLE.match(title)) or any(_INDEX_TITLE.match(line) for line in lines[:3])
    body = [line for line in lines if not (_TOC_TITLE.match(line) or _INDEX_TITLE.match(line))]
    # An index first: its lines end in page numbers too, but only its terms are in alphabetical order.
    if body and _is_index(body, titled_index):
        return INDEX
    if body and _is_toc(body, titled_toc):
        return TABLE_OF_CONTENTS
    licence = _licence(" ".join(lines), title)
    return f"licence text ({licence})" if licence else None


def _last_heading(heading: str | None) -> str:
    return " ".join((heading or "").split(" > ")[-1].split())


def _is_toc(lines: list[str], titled: bool) -> bool:
    # Only short lines are tried: an entry is a title and a page number, and the pattern backtracks
    # quadratically on a long line (a 49 MB one-line text file never finished).
    entries = [m for m in (_ENDS_WITH_PAGE.match(line) for line in lines if len(line) <= _ENTRY_CHARS) if m]
    if len(entries) < _MIN_ENTRIES:
        return False
    led = sum(1 for m in entries if _LEADER.search(m.group(0)[: m.start("page")]))
    share = len(entries) / len(lines)
    if led >= _MIN_ENTRIES and led / len(lines) >= 0.4:
        return True
    if titled and share >= 0.5:
        return True
    # Leaders drawn as graphics vanish from the text: then the page numbers must rise, as a TOC's do.
    pages = [int(m.group("page")) for m in entries if m.group("page").isdigit()]
    return len(pages) >= 6 and share >= 0.6 and _rising(pages) >= 0.9


def _is_index(lines: list[str], titled: bool) -> bool:
    entries = [m for m in (_INDEX_ENTRY.match(line) for line in lines if len(line) <= _ENTRY_CHARS) if m]
    see = sum(1 for line in lines if _SEE_ALSO.match(line))
    letters = sum(1 for line in lines if len(line) == 1 and not line.isdigit())  # "A", "B" group headers
    if len(entries) < _MIN_ENTRIES or (len(entries) + see + letters) / len(lines) < 0.6:
        return False
    if titled:
        return True
    # Untitled (an index's later pages): most entries are "term, 12" and the terms are in order.
    comma = [m for m in entries if m.group("sep").strip() or re.search(r"[,，、]", m.group("refs"))]
    if len(comma) < 5 or len(comma) / len(lines) < 0.6:
        return False
    terms = [m.group("term").casefold() for m in comma]
    if all(term.isascii() for term in terms):
        return _rising(terms) >= 0.8
    return len(comma) >= 8 and len(comma) / len(lines) >= 0.8  # CJK indexes sort by pinyin: not checked


def _rising(values: Sequence[Any]) -> float:
    """The share of neighbouring pairs in non-decreasing order (page numbers, or index terms)."""
    pairs = list(pairwise(values))
    return sum(1 for a, b in pairs if a <= b) / len(pairs) if pairs else 0.0


def _licence(text: str, title: str) -> str | None:
    # Compared without spaces: a scan's OCR may run words together ("GNUFreeDocumentationLicense") or break
    # them, and the verdict must be the one the text layer gets.
    flat, titled = _unspaced(text), _unspaced(title)
    family = next((name for name, phrases in _LICENCES if any(_unspaced(p) in flat for p in phrases)), None)
    if family is None:
        family = next((name for name, phrases in _LICENCES if any(_unspaced(p) in titled for p in phrases)), None)
    if family is None:
        return None
    sentences = [s.strip() for s in _SENTENCE.findall(text) if s.strip()]
    total = sum(len(s) for s in sentences)
    legal = sum(len(s) for s in sentences if _LEGAL.search(s))
    return family if total and legal / total >= _LICENCE_SHARE else None


def _unspaced(text: str) -> str:
    return "".join(text.casefold().split())


_PREVIEW_CHARS = 160


@dataclass(frozen=True)
class BoilerplateSplit:
    """A parsed document with its boilerplate taken out: what to index, and what was left out and why."""

    doc: ParsedDocument
    skipped: tuple[SkippedSection, ...] = ()
    all_boilerplate: tuple[str, ...] = ()  # the reasons, when every section was boilerplate and all are kept

    @property
    def note(self) -> Said | None:
        """What to tell the user: '3 pages left out: table of contents and licence text (GNU FDL)', or None."""
        if self.all_boilerplate:
            return Said("note.all_boilerplate", {"reasons": list(self.all_boilerplate)})
        if not self.skipped:
            return None
        pages = all(s.page is not None for s in self.skipped)
        count = len(self.skipped)
        code = _LEFT_OUT_NOTE[pages, count == 1]
        return Said(code, {"count": count, "reasons": list(dict.fromkeys(s.reason for s in self.skipped))})


# (every part has a page, one part only) -> the note's code
_LEFT_OUT_NOTE = {
    (True, False): "note.boilerplate_pages",
    (True, True): "note.boilerplate_page",
    (False, False): "note.boilerplate_sections",
    (False, True): "note.boilerplate_section",
}


def split_boilerplate(doc: ParsedDocument, doc_id: str) -> BoilerplateSplit:
    """``doc`` without its boilerplate sections, and those sections with their reasons.

    A document that is nothing but boilerplate (a LICENSE file uploaded on purpose) is kept whole, with a
    note: leaving all of it out would store a document that no question can ever find.
    """
    kept: list[Section] = []
    skipped: list[SkippedSection] = []
    for ordinal, section in enumerate(doc.sections):
        # A table's rows (a price list, a spec sheet) can look like an index's "term, number" lines: kept.
        reason = None if section.has_table else boilerplate_reason(section.text, section.heading)
        if reason is None:
            kept.append(section)
            continue
        preview = " ".join(section.text.split())
        if len(preview) > _PREVIEW_CHARS:
            preview = preview[:_PREVIEW_CHARS].rstrip() + "…"
        skipped.append(SkippedSection(doc_id, ordinal, section.page, section.heading, reason, preview))
    if not kept:
        return BoilerplateSplit(doc, all_boilerplate=tuple(dict.fromkeys(s.reason for s in skipped)))
    return BoilerplateSplit(replace(doc, sections=tuple(kept)), tuple(skipped))
