"""The one way synced files enter a knowledge base."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ragapp.core.types import IngestResult
from ragapp.ingest.pipeline import Ingestor
from ragapp.sync.sources import Source, display_name


@dataclass(frozen=True)
class Origin:
    """Where a synced file came from: what a document's metadata records of it."""

    source: str
    path: str  # relative to the source's root
    modified_at_ns: int


def ingest_synced(
    ingestor: Ingestor,
    source: Source,
    files: Sequence[tuple[Path, Origin]],
    cancel: threading.Event | None = None,
) -> list[IngestResult]:
    """Ingest ``files`` (on disk, and where each came from) into ``source``'s knowledge base, one result per
    file in order. Every synced file goes through here, so this is where its origin joins the document."""
    return ingestor.ingest_files(
        [(path, display_name(origin.path)) for path, origin in files], kb=source.kb, cancel=cancel
    )
