"""What a file says about itself: title, author, created and modified, read from the file's own metadata
(PDF document info and XMP, DOCX/PPTX ``docProps/core.xml``, HTML ``<title>`` and ``<meta>``, EPUB's OPF).

Separate from the parsers on purpose: it reads only the few bytes that hold the properties, is bounded in
time and memory (``MAX_XML_BYTES``, ``HTML_HEAD_BYTES``), and never fails an ingest: a property that cannot
be read is simply absent. Dates come back as the catalog writes times (UTC ``YYYY-MM-DD HH:MM:SS``).
"""

from __future__ import annotations

import logging
import re
import zipfile
from collections.abc import Callable
from datetime import datetime
from html import unescape
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from ragapp.core.filters import stamp

log = logging.getLogger(__name__)

MAX_VALUE_CHARS = 300  # a title or author longer than this is cut: it is a label, not content
MAX_XML_BYTES = 256 * 1024  # core.xml and OPF files are a few KB; a bigger one is not read
HTML_HEAD_BYTES = 64 * 1024  # the <head> of a page is in its first bytes

_DC = "{http://purl.org/dc/elements/1.1/}"
_DCTERMS = "{http://purl.org/dc/terms/}"
_OPF = "{http://www.idpf.org/2007/opf}"
_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"


def file_meta(path: Path, file_type: str) -> dict[str, str]:
    """The ``title``, ``author``, ``created`` and ``modified`` that ``path`` declares (those it has), for a
    file of ``file_type`` (its extension without the dot). Never raises."""
    reader = _READERS.get(file_type.lower())
    if reader is None:
        return {}
    try:
        found = reader(path)
    except Exception as exc:  # a broken property is just absent: the document itself read fine
        log.info("no metadata read from %s: %r", path.name, exc)
        return {}
    return {k: v for k, v in ((k, _clean(v)) for k, v in found.items()) if v}


def _clean(value: object) -> str:
    text = " ".join(str(value or "").split())
    return text[:MAX_VALUE_CHARS]


def parse_date(text: str | None) -> str | None:
    """A date as files write it (ISO 8601, PDF's ``D:YYYYMMDDHHmmSS+hh'mm'``, a bare year) in the catalog's form;
    None for anything else."""
    if not text:
        return None
    raw = text.strip()
    pdf = re.fullmatch(r"D:(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(Z|[+-]\d{2}'?\d{2}'?)?.*", raw)
    if pdf:
        y, mo, d, h, mi, s, tz = pdf.groups()
        zone = "+00:00" if tz in (None, "Z") else f"{tz[:3]}:{tz[3:].strip(chr(39))[:2] or '00'}"
        raw = f"{y}-{mo or '01'}-{d or '01'}T{h or '00'}:{mi or '00'}:{s or '00'}{zone}"
    elif re.fullmatch(r"\d{4}", raw):
        raw = f"{raw}-01-01"
    elif re.fullmatch(r"\d{4}-\d{2}", raw):
        raw = f"{raw}-01"
    try:
        return stamp(datetime.fromisoformat(raw.replace("Z", "+00:00")))
    except ValueError:
        return None


def _dated(meta: dict[str, str | None]) -> dict[str, str]:
    out = {k: v for k, v in meta.items() if k not in ("created", "modified") and v}
    for key in ("created", "modified"):
        if (when := parse_date(meta.get(key))) is not None:
            out[key] = when
    return out


def _pdf(path: Path) -> dict[str, str]:
    from pypdf import PdfReader

    reader = PdfReader(str(path))  # reads the trailer and the objects asked for, not every page
    info: Any = reader.metadata or {}
    meta = {
        "title": info.get("/Title"),
        "author": info.get("/Author"),
        "created": info.get("/CreationDate"),
        "modified": info.get("/ModDate"),
    }
    if not meta["title"] or not meta["author"]:
        xmp = reader.xmp_metadata  # some producers fill only XMP
        if xmp is not None:
            meta["title"] = meta["title"] or next(iter((xmp.dc_title or {}).values()), None)
            meta["author"] = meta["author"] or ", ".join(xmp.dc_creator or []) or None
    return _dated({k: str(v) if v is not None else None for k, v in meta.items()})


def _zip_xml(archive: zipfile.ZipFile, name: str) -> ElementTree.Element | None:
    try:
        info = archive.getinfo(name)
    except KeyError:
        return None
    if info.file_size > MAX_XML_BYTES:
        return None
    return ElementTree.fromstring(archive.read(info))


def _office(path: Path) -> dict[str, str]:
    with zipfile.ZipFile(path) as archive:
        core = _zip_xml(archive, "docProps/core.xml")
    if core is None:
        return {}
    return _dated({
        "title": core.findtext(f"{_DC}title"),
        "author": core.findtext(f"{_DC}creator"),
        "created": core.findtext(f"{_DCTERMS}created"),
        "modified": core.findtext(f"{_DCTERMS}modified"),
    })  # fmt: skip


def _epub(path: Path) -> dict[str, str]:
    with zipfile.ZipFile(path) as archive:
        container = _zip_xml(archive, "META-INF/container.xml")
        rootfile = container.find(f".//{_CONTAINER}rootfile") if container is not None else None
        opf_path = rootfile.get("full-path") if rootfile is not None else None
        opf = _zip_xml(archive, opf_path) if opf_path else None
    if opf is None:
        return {}
    metadata = opf.find(f"{_OPF}metadata")
    if metadata is None:
        return {}
    modified = next(
        (m.text for m in metadata.iter(f"{_OPF}meta") if m.get("property") == "dcterms:modified" and m.text), None
    )
    dates = {d.get(f"{_OPF}event", ""): d.text for d in metadata.iter(f"{_DC}date")}
    authors = [c.text for c in metadata.iter(f"{_DC}creator") if c.text]
    return _dated({
        "title": metadata.findtext(f"{_DC}title"),
        "author": ", ".join(authors) or None,
        "created": dates.get("creation") or dates.get("publication") or dates.get(""),
        "modified": modified or dates.get("modification"),
    })  # fmt: skip


_META_TAG = re.compile(r"<meta\b[^>]*>", re.IGNORECASE)
_ATTR = re.compile(r"""([\w:.-]+)\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)""")
_HTML_KEYS = {
    "author": "author", "dc.creator": "author", "article:author": "author",
    "date": "created", "dc.date": "created", "dcterms.created": "created", "article:published_time": "created",
    "last-modified": "modified", "dcterms.modified": "modified", "article:modified_time": "modified",
    "og:title": "title", "dc.title": "title",
}  # fmt: skip


def _html(path: Path) -> dict[str, str]:
    with path.open("rb") as handle:
        head = handle.read(HTML_HEAD_BYTES).decode("utf-8", errors="replace")
    meta: dict[str, str | None] = {}
    title = re.search(r"<title[^>]*>(.*?)</title>", head, re.IGNORECASE | re.DOTALL)
    if title:
        meta["title"] = unescape(re.sub(r"<[^>]+>", "", title.group(1)))
    for tag in _META_TAG.findall(head):
        attrs = {k.lower(): unescape(v.strip("\"'")) for k, v in _ATTR.findall(tag)}
        key = _HTML_KEYS.get((attrs.get("name") or attrs.get("property") or "").lower())
        if key and attrs.get("content") and not meta.get(key):
            meta[key] = attrs["content"]
    return _dated(meta)


_READERS: dict[str, Callable[[Path], dict[str, str]]] = {
    "pdf": _pdf,
    "docx": _office,
    "pptx": _office,
    "xlsx": _office,
    "epub": _epub,
    "html": _html,
    "htm": _html,
}
