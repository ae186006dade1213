"""The one way synced files enter a knowledge base."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ragapp.core.types import FileOrigin, IngestResult
from ragapp.ingest.pipeline import Ingestor
from ragapp.sync.sources import Source, display_name


@dataclass(frozen=True)
class Origin:
    """Where a synced file came from: what a document's metadata records of it."""

    source: str
    path: str  # relative to the source's root (a website's page: its URL)
    modified_at_ns: int  # when it changed (a website's page: when it was fetched)
    file_type: str = ""  # what its content is, when its name does not say (a web page's, from its Content-Type)

    def as_file_origin(self) -> FileOrigin:
        """What the ingestor records: the time of change as UTC ISO 8601."""
        changed = datetime.fromtimestamp(self.modified_at_ns / 1e9, tz=UTC).isoformat(timespec="seconds")
        return FileOrigin(self.source, self.path, changed, self.file_type or None)


def ingest_synced(
    ingestor: Ingestor,
    source: Source,
    files: Sequence[tuple[Path, Origin]],
    cancel: threading.Event | None = None,
) -> list[IngestResult]:
    """Ingest ``files`` (on disk, and where each came from) into ``source``'s knowledge base, one result per
    file in order. Every synced file goes through here, so this is where its origin joins the document."""
    return ingestor.ingest_files(
        [(path, display_name(origin.path), origin.as_file_origin()) for path, origin in files],
        kb=source.kb,
        cancel=cancel,
    )
