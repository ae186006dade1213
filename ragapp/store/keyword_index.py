"""What the keyword channel and the ingest pipeline need of a keyword index, and which one to open.

Two kinds: ``Bm25Index`` (bm25s in memory, one per process; the default) and ``PgKeywordIndex`` (PostgreSQL
full text in the shared database, one for every replica). docs/deployment.md, "Several replicas", has the
figures that say which suits what size.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from ragapp.core.errors import ConfigError
from ragapp.core.types import Chunk
from ragapp.db import Database


class KeywordIndex(Protocol):
    @property
    def version(self) -> int:
        """The catalog version the index holds (-1: none: rebuild from the catalog)."""
        ...

    def rebuild(self, chunks: list[Chunk], version: int, kb_of: Mapping[str, str] | None = None) -> None: ...

    def search(
        self, query: str, top_k: int, kbs: frozenset[str] | None = None, docs: frozenset[str] | None = None
    ) -> list[tuple[str, float]]:
        """The ``top_k`` best chunks among the knowledge bases ``kbs`` and the documents ``docs`` (None: all)."""
        ...


def open_keywords(kind: str, folder: Path, database: Database | None) -> KeywordIndex:
    """The keyword index ``kind`` names (``RAGAPP_STORE__KEYWORDS``): bm25s saved under ``folder``, or
    PostgreSQL full text in ``database``.

    Raises:
        ConfigError: "postgres" without a PostgreSQL database to keep it in.
    """
    if kind == "postgres":
        if database is None or database.dialect != "postgres":
            raise ConfigError(
                "RAGAPP_STORE__KEYWORDS=postgres keeps the keyword index in PostgreSQL: set "
                "RAGAPP_STORE__DATABASE_URL too, or use bm25s."
            )
        from ragapp.store.pg_keywords import PgKeywordIndex

        return PgKeywordIndex(database).start()
    from ragapp.store.bm25 import Bm25Index

    return Bm25Index(folder).start()
