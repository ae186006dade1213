"""Chunk ids and the text the indexes see: shared by ingestion, the stores, the trace views and evaluation."""

from __future__ import annotations

from ragapp.core.types import Chunk


def chunk_id_of(doc_id: str, ordinal: int) -> str:
    """A chunk's id: ``<doc_id>-<4-digit ordinal>``, so the same file always yields the same ids."""
    return f"{doc_id}-{ordinal:04d}"


def doc_of_chunk_id(chunk_id: str) -> str:
    """The document of a chunk id as ``chunk_id_of`` writes it (``<doc_id>-<ordinal of 4 digits or more>``)."""
    head, _, tail = chunk_id.rpartition("-")
    return head if head and tail.isdigit() and len(tail) >= 4 else chunk_id


def index_text(chunk: Chunk) -> str:
    """What the indexes see: the document's name and heading give a short chunk its topic."""
    title = chunk.source.rsplit(".", 1)[0].replace("_", " ").replace("-", " ")
    context = " · ".join(part for part in (title, chunk.heading) if part)
    return f"{context}\n{chunk.text}"
