"""Which documents a question may draw on, beyond its knowledge bases: ``DocumentFilter`` (tags, where a file
came from, its type, author, title and dates), and the rules for tags.

A filter is resolved once per question against the catalog into the set of documents it admits
(``Catalog.matching``); the retrieval channels then search only those, before fusion. The UI, the HTTP API,
the agent's search tool and the MCP server all take this one model, so they validate alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragapp.core.errors import RagAppError
from ragapp.core.said import Said

MAX_TAGS = 20  # per document, and per filter
MAX_TAG_CHARS = 40
# Letters (any script), digits and a few joiners; no commas (the UI splits on them) and no quotes.
_TAG = re.compile(r"^[\w][\w .:/+#&-]*$")

# The metadata keys a document may carry (``document_meta``), as the catalog stores them.
# ``modified`` is the date the file declares; ``changed`` when it last changed where it lives (a synced source's).
META_KEYS = ("title", "author", "created", "modified", "source", "path", "folder", "changed")
UPLOAD_SOURCE = "upload"  # the source of a file uploaded in the UI or through the API


class TagError(RagAppError, ValueError):
    """A tag that breaks the rules; the message (and its record) says which and how to fix it."""


def clean_tag(tag: str) -> str:
    """``tag`` as stored: trimmed, inner spaces collapsed, lower case (tags match regardless of case).

    Raises:
        TagError: empty, too long, or holding a character tags may not.
    """
    text = " ".join(str(tag).split()).casefold()
    if not text:
        raise TagError(said=Said("tag.empty"))
    if len(text) > MAX_TAG_CHARS:
        raise TagError(said=Said("tag.too_long", {"tag": text[:MAX_TAG_CHARS], "most": MAX_TAG_CHARS}))
    if not _TAG.match(text):
        raise TagError(said=Said("tag.bad_character", {"tag": text}))
    return text


def clean_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """Each tag cleaned (``clean_tag``), duplicates dropped, in the order given.

    Raises:
        TagError: a tag breaks the rules, or there are more than ``MAX_TAGS``.
    """
    cleaned = tuple(dict.fromkeys(clean_tag(t) for t in tags))
    if len(cleaned) > MAX_TAGS:
        raise TagError(said=Said("tag.too_many", {"n": len(cleaned), "most": MAX_TAGS}))
    return cleaned


def stamp(moment: datetime) -> str:
    """``moment`` as the catalog writes times: UTC, ``YYYY-MM-DD HH:MM:SS`` (text that sorts as time does)."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.strftime("%Y-%m-%d %H:%M:%S")


class DocumentFilter(BaseModel):
    """Documents a search may use; every field set must hold (all fields are optional; text matches ignore case)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tags: tuple[str, ...] = Field((), max_length=MAX_TAGS, description="Documents with any of these tags.")
    source: str | None = Field(
        None, min_length=1, max_length=200, description="Where documents came from: 'upload', or a synced source."
    )
    path_prefix: str | None = Field(
        None, min_length=1, max_length=500, description="Documents whose path starts so, e.g. 'policies/2024/'."
    )
    path_glob: str | None = Field(
        None, min_length=1, max_length=500, description="Documents whose path matches this glob ('*' crosses '/')."
    )
    file_types: tuple[str, ...] = Field((), max_length=20, description="File types, e.g. ['pdf', 'docx'].")
    author: str | None = Field(None, min_length=1, max_length=200, description="Author contains this.")
    title: str | None = Field(None, min_length=1, max_length=200, description="Title contains this.")
    modified_after: datetime | None = Field(None, description="Changed at or after (ISO date or date-time).")
    modified_before: datetime | None = Field(None, description="Changed before (ISO date or date-time).")
    added_after: datetime | None = Field(None, description="Added to ragapp at or after (ISO date or date-time).")
    added_before: datetime | None = Field(None, description="Added to ragapp before (ISO date or date-time).")

    @field_validator("tags")
    @classmethod
    def _tags(cls, tags: tuple[str, ...]) -> tuple[str, ...]:
        try:
            return clean_tags(tags)
        except TagError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("file_types")
    @classmethod
    def _types(cls, types: tuple[str, ...]) -> tuple[str, ...]:
        cleaned = tuple(dict.fromkeys(t.strip().lstrip(".").casefold() for t in types))
        bad = [t for t in cleaned if not re.fullmatch(r"[a-z0-9]{1,10}", t)]
        if bad:
            raise ValueError(f"{bad[0]!r} is not a file type: give extensions such as 'pdf' or 'docx'.")
        return cleaned

    def is_empty(self) -> bool:
        """True when no field is set: the filter admits every document (and is not applied at all)."""
        return self == DocumentFilter()

    def describe(self) -> str:
        """The set fields in one line, for notices and traces: ``tags=hr; path_prefix=policies/``."""
        return "; ".join(
            f"{k}={','.join(v) if isinstance(v, tuple) else v}"
            for k, v in self.model_dump(exclude_defaults=True).items()
        )
