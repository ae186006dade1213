"""What the background enrichment keeps per knowledge base, in the catalog's database so every replica shares
it: whether the base is paused (it survives a restart), the lease that lets one replica at a time enrich it,
and each step's last measured pace (for the progress line any replica shows).

The lease works as a sync source's does (``ragapp.sync.state``: take when free or run out, renew after every
batch, release at the end); written again here because enrich and sync are sibling layers that do not import
each other.
"""

from __future__ import annotations

import time

from ragapp.db import Database, SqliteDatabase

_TABLES = """
CREATE TABLE IF NOT EXISTS enrich_kbs (
    kb TEXT PRIMARY KEY,
    paused {int} NOT NULL DEFAULT 0,
    holder TEXT,
    held_until {real}
);
CREATE TABLE IF NOT EXISTS enrich_pace (
    kb TEXT NOT NULL,
    step TEXT NOT NULL,
    per_minute {real} NOT NULL,
    PRIMARY KEY (kb, step)
)
"""
_POSTGRES_STEPS = (_TABLES.format(real="DOUBLE PRECISION", int="BIGINT"),)
COMPONENT = "enrich"


class EnrichState:
    """The enrichment's tables in ``database`` (created on ``start``)."""

    def __init__(self, database: Database) -> None:
        self._db = database

    def start(self) -> EnrichState:
        if isinstance(self._db, SqliteDatabase):
            self._db.script(_TABLES.format(real="REAL", int="INTEGER"))
        else:
            self._db.ensure_schema(COMPONENT, _POSTGRES_STEPS)
        return self

    def _row(self, kb: str) -> None:
        self._db.execute("INSERT INTO enrich_kbs (kb) VALUES (?) ON CONFLICT (kb) DO NOTHING", (kb,))

    def set_paused(self, kb: str, paused: bool) -> None:
        self._row(kb)
        self._db.execute("UPDATE enrich_kbs SET paused = ? WHERE kb = ?", (int(paused), kb))

    def is_paused(self, kb: str) -> bool:
        row = self._db.one("SELECT paused FROM enrich_kbs WHERE kb = ?", (kb,))
        return row is not None and bool(row[0])

    def paused(self) -> set[str]:
        return {str(r[0]) for r in self._db.query("SELECT kb FROM enrich_kbs WHERE paused <> 0")}

    # -- the lease: one replica at a time enriches a base ----------------------------------------

    def take(self, kb: str, holder: str, lease_s: float) -> bool:
        """Hold ``kb``'s lease for ``lease_s`` seconds when nobody holds it (or their lease ran out). One
        statement: two replicas trying at once cannot both get it."""
        self._row(kb)
        now = time.time()
        changed = self._db.execute(
            "UPDATE enrich_kbs SET holder = ?, held_until = ? WHERE kb = ? AND (holder IS NULL OR held_until < ?)",
            (holder, now + lease_s, kb, now),
        )
        return changed == 1

    def renew(self, kb: str, holder: str, lease_s: float) -> bool:
        """Extend the lease; False when it was lost (taken over after running out)."""
        changed = self._db.execute(
            "UPDATE enrich_kbs SET held_until = ? WHERE kb = ? AND holder = ?", (time.time() + lease_s, kb, holder)
        )
        return changed == 1

    def release(self, kb: str, holder: str) -> None:
        self._db.execute(
            "UPDATE enrich_kbs SET holder = NULL, held_until = NULL WHERE kb = ? AND holder = ?", (kb, holder)
        )

    def holder(self, kb: str) -> str | None:
        row = self._db.one("SELECT holder, held_until FROM enrich_kbs WHERE kb = ?", (kb,))
        if row is None or row[0] is None or float(row[1] or 0) < time.time():
            return None
        return str(row[0])

    # -- pace ------------------------------------------------------------------------------------

    def set_pace(self, kb: str, step: str, per_minute: float) -> None:
        self._db.execute(
            "INSERT INTO enrich_pace (kb, step, per_minute) VALUES (?, ?, ?) "
            "ON CONFLICT (kb, step) DO UPDATE SET per_minute = excluded.per_minute",
            (kb, step, per_minute),
        )

    def pace(self, kb: str) -> dict[str, float]:
        rows = self._db.query("SELECT step, per_minute FROM enrich_pace WHERE kb = ?", (kb,))
        return {str(step): float(per_minute) for step, per_minute in rows}
