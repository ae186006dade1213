"""Parse files into sections of text that remember their page and heading.

One parser per file type, in a registry keyed by extension: supporting a new type is one function
plus one ``@PARSERS.register(".ext")`` line. Parsers raise ``IngestError`` kin, never library errors.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path

from ragapp.core.errors import EmptyDocumentError, IngestError, UnsupportedFileError
from ragapp.core.types import ParsedDocument, Section
from ragapp.registry import Registry

log = logging.getLogger(__name__)

Parser = Callable[[Path, str], ParsedDocument]
PARSERS: Registry[Parser] = Registry("file type")

_MD_HEADING_START = re.compile(r"(#{1,6})[ \t]+")  # anchored, no backtracking: see ``markdown_heading``
_BINARY_SHARE = 0.05  # text with more control (or undecodable) characters than this is taken for binary
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f\ufffd]")
_FENCE = re.compile(r"^\s*(```|~~~)")


def supported_extensions() -> list[str]:
    return PARSERS.names()


def parse_file(path: Path, name: str | None = None) -> ParsedDocument:
    """Parse ``path`` by its extension. ``name`` is what the user called the file (uploads arrive renamed)."""
    name = name or path.name
    ext = Path(name).suffix.lower()
    if ext not in PARSERS:
        known = ", ".join(supported_extensions())
        raise UnsupportedFileError(f"{name}: files of type '{ext or '(none)'}' are not supported. Use {known}.")
    if path.stat().st_size == 0:
        raise EmptyDocumentError(f"{name}: the file is empty.")
    try:
        doc = PARSERS.get(ext)(path, name)
    except IngestError:
        raise
    except Exception as exc:  # a library choking on a corrupt file: say so plainly
        log.warning("parser for %s failed on %s: %r", ext, name, exc)
        raise IngestError(
            f"{name}: could not read this {ext} file; it may be corrupt or password-protected ({type(exc).__name__})."
        ) from exc
    sections = tuple(s for s in doc.sections if s.text.strip())
    if not sections:
        raise EmptyDocumentError(
            f"{name}: no text found. Scanned PDFs and images need OCR, which ragapp does not do yet."
        )
    return ParsedDocument(name=doc.name, file_type=doc.file_type, sections=sections, pages=doc.pages)


def decode_text(data: bytes, name: str = "the file") -> str:
    """Decode bytes of unknown encoding: a UTF-16/UTF-8 byte-order mark decides, UTF-16 without one is known by
    its NUL bytes, else UTF-8, then GB18030 for Chinese, then Latin-1. Raises ``IngestError`` for a binary file
    named as text (it would be indexed as garbage that matches nothing)."""
    text = _decode(data)
    sample = text[:65536]
    if sample and len(_CONTROL.findall(sample)) > _BINARY_SHARE * len(sample):
        raise IngestError(f"{name}: this looks like a binary file, not text; nothing was added.")
    return text


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
        raise IngestError(f"{name}: this is not a valid {Path(name).suffix or 'Office'} file (not a zip).") from None
    unpacked = sum(m.file_size for m in members)
    if len(members) > ZIP_MAX_MEMBERS or unpacked > ZIP_MAX_UNPACKED_MB * 1024 * 1024:
        raise IngestError(
            f"{name}: it unpacks into {len(members):,} parts and {unpacked / 1e6:,.0f} MB, over the limits "
            f"({ZIP_MAX_MEMBERS:,} parts, {ZIP_MAX_UNPACKED_MB} MB); nothing was added."
        )


def markdown_heading(line: str) -> tuple[int, str] | None:
    """(level, title) of an ATX heading line ("## Title ##"), else None. Written out by hand, in linear time: the
    regular expression it replaces backtracked cubically on a heading with a long run of spaces inside."""
    match = _MD_HEADING_START.match(line)
    if match is None:
        return None
    title = line[match.end() :].strip()
    closed = title.rstrip("#")
    if closed != title and (not closed or closed[-1] in " \t"):  # a closing run of #s, after a space
        title = closed.strip()
    return (len(match.group(1)), title) if title else None


@PARSERS.register(".txt")
def parse_txt(path: Path, name: str) -> ParsedDocument:
    text = decode_text(path.read_bytes(), name)
    return ParsedDocument(name=name, file_type="txt", sections=(Section(text=text),))


@PARSERS.register(".md")
def parse_markdown(path: Path, name: str) -> ParsedDocument:
    """Split at ATX headings (not inside code fences); each section keeps its heading path."""
    text = decode_text(path.read_bytes(), name)
    sections: list[Section] = []
    trail: list[str] = []  # heading path, one entry per level
    buf: list[str] = []
    in_fence = False

    def flush() -> None:
        body = "\n".join(buf).strip()
        if body:
            sections.append(Section(text=body, heading=" > ".join(t for t in trail if t) or None))
        buf.clear()

    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else markdown_heading(line)
        if heading:
            flush()
            level, title = heading
            del trail[level - 1 :]
            trail.extend([""] * (level - 1 - len(trail)))
            trail.append(title)  # "" keeps the place of a skipped level (## with no # above)
        else:
            buf.append(line)
    flush()
    return ParsedDocument(name=name, file_type="md", sections=tuple(sections))


PARSERS.register(".markdown")(parse_markdown)


@PARSERS.register(".pdf")
def parse_pdf(path: Path, name: str) -> ParsedDocument:
    from pypdf import PdfReader

    reader = PdfReader(path)
    if reader.is_encrypted:
        raise IngestError(f"{name}: the PDF is password-protected; remove the password and upload it again.")
    sections = [
        Section(text=page.extract_text() or "", page=number) for number, page in enumerate(reader.pages, start=1)
    ]
    return ParsedDocument(name=name, file_type="pdf", sections=tuple(sections), pages=len(reader.pages))


@PARSERS.register(".docx")
def parse_docx(path: Path, name: str) -> ParsedDocument:
    """Paragraphs grouped under their Word headings; tables become ' | '-joined rows in place."""
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    check_zip(path, name)
    document = docx.Document(str(path))
    sections: list[Section] = []
    heading: str | None = None
    buf: list[str] = []

    def flush() -> None:
        if buf:
            sections.append(Section(text="\n".join(buf), heading=heading))
            buf.clear()

    for block in document.iter_inner_content():
        if isinstance(block, Paragraph):
            style = (block.style.name if block.style is not None else "") or ""
            text = block.text.strip()
            if style.lower().startswith(("heading", "title")) and text:
                flush()
                heading = text
            elif text:
                buf.append(text)
        elif isinstance(block, Table):
            for row in block.rows:
                cells = [c.text.strip() for c in row.cells]
                if any(cells):
                    buf.append(" | ".join(cells))
    flush()
    return ParsedDocument(name=name, file_type="docx", sections=tuple(sections))


@PARSERS.register(".html")
def parse_html(path: Path, name: str) -> ParsedDocument:
    """Visible text grouped under h1-h6; scripts, styles and other invisible parts are dropped."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(decode_text(path.read_bytes()), "html.parser")
    for tag in soup(["script", "style", "noscript", "template", "head", "svg"]):
        tag.decompose()
    sections: list[Section] = []
    heading: str | None = None
    buf: list[str] = []
    blocks = ["h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "td", "th", "pre", "blockquote", "dt", "dd"]
    for element in soup.find_all(blocks):
        if element.find(blocks):  # a container of other blocks: its children are visited on their own
            continue
        text = " ".join(element.get_text(" ", strip=True).split())
        if not text:
            continue
        if element.name in blocks[:6]:
            if buf:
                sections.append(Section(text="\n".join(buf), heading=heading))
                buf = []
            heading = text
        else:
            buf.append(text)
    if buf:
        sections.append(Section(text="\n".join(buf), heading=heading))
    if not sections:  # markup without block tags: fall back to all visible text
        sections.append(Section(text=soup.get_text("\n", strip=True)))
    return ParsedDocument(name=name, file_type="html", sections=tuple(sections))


PARSERS.register(".htm")(parse_html)
