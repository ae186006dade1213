"""The parser registry and what parsers share: decoding text of unknown encoding, and the zip check for Office
files. One parser per file type, keyed by extension: supporting a new type is one function plus one
``@PARSERS.register(".ext")`` line in a module of this package (imported by ``ragapp.ingest.parsing``). Parsers
raise ``IngestError`` kin, never library errors.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from ragapp.core.errors import IngestError
from ragapp.core.types import ParsedDocument, ParseReport, Said
from ragapp.registry import Registry

Parser = Callable[[Path, str], ParsedDocument]
PARSERS: Registry[Parser] = Registry("file type")
# The file's text read by a second, simpler route, to measure what the parser kept (ragapp.ingest.coverage); the
# report says which pages the parser read by OCR (a PDF's text layer there is no reference).
Reference = Callable[[Path, ParseReport], str]
REFERENCES: Registry[Reference] = Registry("reference text")

_BINARY_SHARE = 0.05  # text with more control (or undecodable) characters than this is taken for binary
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f\ufffd]")


def decode_text(data: bytes, name: str = "the file") -> str:
    """Decode bytes of unknown encoding: a UTF-16/UTF-8 byte-order mark decides, UTF-16 without one is known by
    its NUL bytes, else UTF-8, then GB18030 for Chinese, then Latin-1. Raises ``IngestError`` for a binary file
    named as text (it would be indexed as garbage that matches nothing)."""
    text = _decode(data)
    sample = text[:65536]
    if sample and len(_CONTROL.findall(sample)) > _BINARY_SHARE * len(sample):
        raise IngestError(said=Said("ingest.binary", {"name": name}))
    return text.replace("\x00", "")  # a stray NUL means nothing in text, and PostgreSQL's text cannot hold one


def _decode(data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    head = data[:4096]
    if len(head) >= 2 and head.count(0) > len(head) // 4:  # ASCII-range UTF-16: every other byte is NUL
        even_nuls = head[0::2].count(0)
        return data.decode("utf-16-be" if even_nuls > head[1::2].count(0) else "utf-16-le", errors="replace")
    for encoding in ("utf-8-sig", "gb18030"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")


ZIP_MAX_MEMBERS = 10_000
ZIP_MAX_UNPACKED_MB = 512


def check_zip(path: Path, name: str) -> None:
    """Refuse an Office file (a zip) that would unpack into too many parts or too many bytes: a 1 MB DOCX
    whose image inflates to 1 GiB passed the upload limit, which counts only the packed size. Reads the zip's
    directory, nothing is unpacked."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except zipfile.BadZipFile:
        raise IngestError(said=Said("ingest.not_zip", {"name": name, "kind": Path(name).suffix or "Office"})) from None
    unpacked = sum(m.file_size for m in members)
    if len(members) > ZIP_MAX_MEMBERS or unpacked > ZIP_MAX_UNPACKED_MB * 1024 * 1024:
        values = {"name": name, "parts": len(members), "mb": unpacked / 1e6, "most_parts": ZIP_MAX_MEMBERS}
        raise IngestError(said=Said("ingest.zip_limits", {**values, "most_mb": ZIP_MAX_UNPACKED_MB}))


XML_MAX_ELEMENTS = 1_000_000  # a 1,000-page Word file holds a few hundred thousand


FLOOD_CODES = {"elements": "ingest.flood_elements", "depth": "ingest.flood_depth", "text": "ingest.flood_text"}


def markup_flood(name: str, kind: str) -> IngestError:
    """The refusal of a file whose XML is a flood (``kind``: "elements", past ``XML_MAX_ELEMENTS``; "depth",
    nested past the XML parser's 256 levels; "text", one text node past its 10 MB): no document is like that,
    and neither corrupt nor password-protected says what it is."""
    return IngestError(said=Said(FLOOD_CODES[kind], {"name": name, "limit": XML_MAX_ELEMENTS}))


def check_markup(path: Path, name: str, folder: str) -> None:
    """Refuse an Office file whose XML parts under ``folder`` (word/, ppt/) hold more than ``XML_MAX_ELEMENTS``
    elements, before its XML is parsed into a tree: 3 million one-letter paragraphs pack into a 0.3 MB DOCX and
    would take gigabytes as a tree. Counts the tags as it unpacks, and stops at the limit."""
    import zipfile

    elements = 0
    with zipfile.ZipFile(path) as archive:
        for member in archive.infolist():
            if not (member.filename.startswith(folder) and member.filename.endswith(".xml")):
                continue
            with archive.open(member) as part:
                while block := part.read(1 << 20):
                    elements += block.count(b"<") - block.count(b"</")  # start tags (a tag cut by a block: rare)
                    if elements > XML_MAX_ELEMENTS:
                        raise markup_flood(name, "elements")
