"""The background enrichment as the ingestor sees it (``ragapp.enrich.runner.EnrichRunner``): told which bases
it enriches, woken when chunks are stored without vectors, and told of chunks that left the catalog. A protocol
here because ``ragapp.enrich`` sits above ``ragapp.ingest`` and the ingestor must not import it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol


class Enricher(Protocol):
    """What ``Ingestor`` calls of the background enrichment."""

    def background(self, kb: str) -> bool:
        """``kb``'s vectors follow in the background (else they are written inline, before the catalog)."""
        ...

    def wake(self, kb: str | None = None) -> None:
        """Chunks were stored into ``kb``: look for work now."""
        ...

    def forget(self, chunk_ids: Iterable[str]) -> None:
        """These chunks left the catalog: their enrichment goes too."""
        ...
