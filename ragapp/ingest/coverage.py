"""How much of a file's own text reached the index: measured on every upload against a reference extraction.

The reference is the file's text read by a second, simpler route (``REFERENCES``, next to each parser): all
visible text of an HTML page or EPUB chapter, a PDF's text layer (by PDFium, where the parser reads it with
pypdf; pages read by OCR have no layer to compare), every paragraph and cell of an Office file, the text of a
text file. Coverage is the share of the reference's 5-character shingles (within each of its lines; of its
letters and digits only, lower-cased, so spacing, punctuation and table pipes do not count) found in the chunks
or in the sections left out on purpose (boilerplate pages). A line of the reference with under half of its
shingles found is "unread"; the upload report names the first ones when coverage is under
``COVERAGE_WARN_BELOW`` (``ParseReport.coverage_warning``).

Written here: no library measures extraction coverage across these formats.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ragapp.core.types import Chunk, ParsedDocument, ParseReport, SkippedSection
from ragapp.ingest.parsing import REFERENCES  # with every parser module imported, so each reference registered

log = logging.getLogger(__name__)

SHINGLE = 5
MAX_SHINGLES = 2_000_000  # a larger reference is measured on a fixed sample of its shingles (bounded memory)
MIN_PARAGRAPH = 20  # letters and digits: shorter reference lines are not judged one by one
SHOWN = 3  # unread paragraphs named in the report
_WORD_CHARS = re.compile(r"\w+")


@dataclass(frozen=True)
class Coverage:
    share: float
    unread: tuple[str, ...]  # the first unread paragraphs of the reference, shortened
    unread_count: int


def _letters(text: str) -> str:
    return "".join(_WORD_CHARS.findall(unicodedata.normalize("NFKC", text).lower()))


def _shingles(letters: str, keep: int) -> set[int]:
    pieces = (hash(letters[i : i + SHINGLE]) for i in range(max(0, len(letters) - SHINGLE + 1)))
    return {h for h in pieces if h % keep == 0}


def measure(reference: str, indexed: Iterable[str]) -> Coverage | None:
    """The share of ``reference`` found in ``indexed`` (see the module docstring); None for an empty reference."""
    lines = [_letters(line) for line in reference.splitlines()]  # a shingle never spans two of its lines
    keep = max(1, sum(map(len, lines)) // MAX_SHINGLES + 1)  # every keep-th shingle by hash, on both sides alike
    wanted = set().union(*(_shingles(line, keep) for line in lines)) if lines else set()
    if not wanted:
        return None
    found = set().union(*(_shingles(_letters(text), keep) for text in indexed)) if indexed else set()
    unread: list[str] = []
    count = 0
    for paragraph in reference.splitlines():
        own = _shingles(_letters(paragraph), 1)
        if len(_letters(paragraph)) < MIN_PARAGRAPH or not own:
            continue
        held = own if keep == 1 else {h for h in own if h % keep == 0}
        if held and len(held & found) < len(held) / 2:
            count += 1
            if len(unread) < SHOWN:
                line = " ".join(paragraph.split())
                unread.append(line if len(line) <= 80 else line[:79] + "…")
    return Coverage(round(len(wanted & found) / len(wanted), 4), tuple(unread), count)


def with_coverage(
    path: Path, parsed: ParsedDocument, chunks: Sequence[Chunk], skipped: Sequence[SkippedSection]
) -> ParseReport:
    """``parsed``'s report with the coverage of ``chunks`` (plus the sections left out on purpose) against the
    file's reference text. A type without a reference, or a reference that fails, leaves it unmeasured: this
    is a report, never a reason to refuse the file."""
    report = parsed.report
    ext = Path(parsed.name).suffix.lower()
    if ext not in REFERENCES:
        ext = f".{parsed.file_type}"  # named by something else than a file name: a web page's URL
    if ext not in REFERENCES:
        return report
    try:
        reference = REFERENCES.get(ext)(path, report)
    except Exception:
        log.warning("no reference text for %s; its coverage is not measured", parsed.name, exc_info=True)
        return report
    left_out = {s.ordinal for s in skipped}
    indexed = [f"{c.heading or ''}\n{c.text}" for c in chunks]
    indexed += [s.text for i, s in enumerate(parsed.sections) if i in left_out]
    indexed += [s.heading for s in parsed.sections if s.heading]
    result = measure(reference, indexed)
    if result is None:
        return report
    return replace(report, coverage=result.share, unread=result.unread, unread_count=result.unread_count)
