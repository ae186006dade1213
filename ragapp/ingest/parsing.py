"""Parse files into sections of text that remember their page and heading (and whether they came from OCR or
hold a table).

The parsers live in ``ragapp.ingest.parsers``, one module per family, each registering its extensions in
``PARSERS``; this module imports them all and is the one entry point (``parse_file``).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from ragapp.core.errors import EmptyDocumentError, IngestError, UnsupportedFileError
from ragapp.core.types import ParsedDocument, Said, Section
from ragapp.ingest.hyphens import hyphenated_words, join_broken_words
from ragapp.ingest.parse_context import ParseOptions, ParseProgress, TextBudgetReached, parsing
from ragapp.ingest.parsers import epub, images, office, pdf, text, xlsx  # noqa: F401  (each registers its file types)
from ragapp.ingest.parsers.base import (
    PARSERS,
    REFERENCES,
    ZIP_MAX_MEMBERS,
    ZIP_MAX_UNPACKED_MB,
    check_zip,
    decode_text,
    markup_flood,
)
from ragapp.ingest.parsers.text import markdown_heading

__all__ = [
    "PARSERS",
    "REFERENCES",
    "ZIP_MAX_MEMBERS",
    "ZIP_MAX_UNPACKED_MB",
    "check_zip",
    "decode_text",
    "markdown_heading",
    "parse_file",
    "supported_extensions",
]

log = logging.getLogger(__name__)


def supported_extensions() -> list[str]:
    return PARSERS.names()


def parse_file(
    path: Path,
    name: str | None = None,
    options: ParseOptions | None = None,
    progress: ParseProgress | None = None,
    file_type: str | None = None,
) -> ParsedDocument:
    """Parse ``path`` by its extension. ``name`` is what the user called the file (uploads arrive renamed);
    ``progress`` hears how far a long parse (OCR) has got; ``file_type`` (an extension without the dot) says
    what the content is when the name does not (a web page named by its URL)."""
    name = name or path.name
    options = options or ParseOptions()
    ext = f".{file_type.lower()}" if file_type else Path(name).suffix.lower()
    if ext not in PARSERS:
        known = ", ".join(supported_extensions())
        raise UnsupportedFileError(
            said=Said("ingest.unsupported", {"name": name, "ext": ext or "(none)", "known": known})
        )
    if path.stat().st_size == 0:
        raise EmptyDocumentError(said=Said("ingest.empty", {"name": name}))
    try:
        with parsing(options, progress):
            doc = PARSERS.get(ext)(path, name)
    except (IngestError, TextBudgetReached):
        raise
    except Exception as exc:  # a library choking on a corrupt file: say so plainly
        flood = _flood_kind(exc)
        if flood is not None:  # not corrupt: XML past the parser's limits, as no document is
            log.warning("parser for %s refused %s's XML: %r", ext, name, exc)
            raise markup_flood(name, flood) from exc
        log.warning("parser for %s failed on %s: %r", ext, name, exc)
        raise IngestError(
            said=Said("ingest.unreadable", {"name": name, "ext": ext, "error": type(exc).__name__})
        ) from exc
    sections = tuple(s for s in doc.sections if s.text.strip())
    if options.join_broken_words:
        sections = _words_joined(sections)
    if not sections:
        raise EmptyDocumentError(
            said=Said("ingest.no_text_read" if options.ocr else "ingest.no_text_ocr_off", {"name": name})
        )
    return ParsedDocument(doc.name, doc.file_type, sections, doc.pages, doc.report, doc.ocr_boxes)


# What lxml (libxml2) says when a file's XML passes its limits, rather than breaking its syntax
_FLOODS = (("excessive depth", "depth"), ("text node too long", "text"), ("huge text node", "text"))


def _flood_kind(exc: Exception) -> str | None:
    """ "depth" or "text" when ``exc`` is the XML parser refusing past one of its limits; else None."""
    said = str(exc).lower()
    if type(exc).__name__ != "XMLSyntaxError":
        return None
    return next((kind for words, kind in _FLOODS if words in said), None)


def _words_joined(sections: tuple[Section, ...]) -> tuple[Section, ...]:
    """The sections with words broken over line ends made whole (tables aside: a cell's lines are its own)."""
    hyphenated = hyphenated_words([s.text for s in sections])
    return tuple(s if s.has_table else replace(s, text=join_broken_words(s.text, hyphenated)) for s in sections)
