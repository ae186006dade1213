"""What a parser is told beyond the file: the options (OCR, PDF tables) and where to report how far it has got
(an OCR'd document takes seconds a page). Set for the duration of one ``parse_file`` call, so parsers keep
their plain ``(path, name)`` signature."""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ragapp.core.errors import IngestCancelled
from ragapp.core.types import ParsedDocument

log = logging.getLogger(__name__)

# (phase, fraction of the parse done, what is happening, pages done, pages in all): phase "parse", "tables" while
# a PDF's pages are searched for tables, or "ocr" while pages are OCR'd; the counts None where not counted.
ParseProgress = Callable[[str, float, str, int | None, int | None], None]


@dataclass(frozen=True)
class ParseOptions:
    ocr: bool = True
    ocr_dpi: int = 200
    ocr_max_pages: int = 300
    pdf_tables: bool = True
    ocr_latin: bool = True  # Tesseract reads Latin-script pages (ragapp.models.ocr)
    ocr_threads: int | None = None  # PP-OCRv4's CPU threads (None: one per physical core)
    join_broken_words: bool = True  # "man-\nagement" -> "management" (ragapp.ingest.hyphens)
    figures: bool = True  # figures become passages of their own (ragapp.ingest.parsers.pdf_figures and the others)
    # Characters of text past which a parser that reads as a stream may stop: a document with that much is refused
    # anyway (too many chunks), so reading the rest would only keep a hostile file's refusal waiting. None: all.
    text_budget: int | None = None


class TextBudgetReached(Exception):
    """A parser stopped at ``ParseOptions.text_budget``: ``partial`` is what it had read. The caller refuses the
    file when that alone makes too many chunks, and otherwise reads it again without the budget."""

    def __init__(self, partial: ParsedDocument) -> None:
        super().__init__(f"{partial.name}: text past the budget")
        self.partial = partial


@dataclass(frozen=True)
class _Context:
    options: ParseOptions
    progress: ParseProgress | None


_DEFAULT = _Context(ParseOptions(), None)  # frozen: safe to share
_CURRENT: contextvars.ContextVar[_Context | None] = contextvars.ContextVar("ragapp_parse", default=None)


@contextmanager
def parsing(options: ParseOptions, progress: ParseProgress | None) -> Iterator[None]:
    token = _CURRENT.set(_Context(options, progress))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def _current() -> _Context:
    return _CURRENT.get() or _DEFAULT


def options() -> ParseOptions:
    return _current().options


def report(phase: str, fraction: float, message: str, done: int | None = None, total: int | None = None) -> None:
    """Tell whoever parses how far it has got (``done`` of ``total`` pages, where counted); never raises into the
    parser, except to stop a cancelled upload."""
    progress = _current().progress
    if progress is None:
        return
    try:
        progress(phase, min(1.0, max(0.0, fraction)), message, done, total)
    except IngestCancelled:  # the user stopped the upload: the parse stops here
        raise
    except Exception:  # a progress display must never fail a parse
        log.debug("parse progress report failed", exc_info=True)
