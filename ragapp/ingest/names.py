"""What documents and knowledge bases may be called: the rules every way in (upload, API, admin) applies."""

from __future__ import annotations

import re
from pathlib import Path

from ragapp.core.errors import IngestError
from ragapp.core.types import Said

# Letters of any script (so Chinese names work), digits, space, '-', '_' and '.'.
_KB_NAME = re.compile(r"[\w .\-]{1,64}")


def kb_name(name: str) -> str:
    """``name`` as a knowledge-base name, without surrounding spaces.

    Raises:
        IngestError: the name breaks the rule (the message states it).
    """
    cleaned = (name or "").strip()
    if not _KB_NAME.fullmatch(cleaned):
        raise IngestError(said=Said("ingest.kb_name", {"name": name}))  # the message states the rule
    return cleaned


_NAME_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")
MAX_NAME_CHARS = 200


def document_name(given: str, path: Path) -> str:
    """The name a document is shown under: the name given, without control characters (a NUL or a line break
    in a name breaks tables and logs) or surrounding blanks, at most ``MAX_NAME_CHARS`` characters with its
    extension kept; the file's own name when nothing is left."""
    name = _NAME_CONTROL.sub(" ", given or "").strip() or path.name
    if len(name) > MAX_NAME_CHARS:
        suffix = Path(name).suffix[:16]
        name = name[: MAX_NAME_CHARS - len(suffix) - 1].rstrip() + "…" + suffix
    return name
