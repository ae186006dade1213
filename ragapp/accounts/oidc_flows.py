"""Which OpenID Connect sign-ins were finished already, so that each is finished once, on any replica: the state
of every finished flow, kept until the flow would have expired anyway, in the deployment's shared PostgreSQL
database, or in a small SQLite file in the state dir (shared by replicas that share the state dir).

Sign-ins are rare next to questions, so the SQLite file is opened for each one and closed again: nothing is held
open between them, and nothing needs closing when the server stops.
"""

from __future__ import annotations

from pathlib import Path

from ragapp.db import Database, open_tables

_SCHEMA = "CREATE TABLE IF NOT EXISTS oidc_finished_flows (state TEXT PRIMARY KEY, forget_after REAL NOT NULL);"
_STEPS = ["CREATE TABLE oidc_finished_flows (state TEXT PRIMARY KEY, forget_after DOUBLE PRECISION NOT NULL)"]
FILE = "oidc_flows.sqlite3"


class FinishedFlows:
    """``target``: the shared ``Database``, or the SQLite file for these records."""

    def __init__(self, target: Path | Database) -> None:
        self._target = target
        self._shared: Database | None = None

    def first_use(self, state: str, forget_after: float, now: float) -> bool:
        """Record the flow ``state`` as finished; False when it was already (by this process or another).
        Records past their ``forget_after`` (seconds, the wall clock) are dropped on the way."""
        database, owned = self._open()
        try:
            with database.transaction() as tx:
                tx.execute("DELETE FROM oidc_finished_flows WHERE forget_after < ?", (now,))
                added = tx.execute(
                    "INSERT INTO oidc_finished_flows (state, forget_after) VALUES (?, ?) "
                    "ON CONFLICT (state) DO NOTHING",
                    (state, forget_after),
                )
            return added == 1
        finally:
            if owned:
                database.close()

    def _open(self) -> tuple[Database, bool]:
        if isinstance(self._target, Database):
            if self._shared is None:  # the table made (or migrated) once
                self._shared, _ = open_tables(self._target, "oidc_flows", _SCHEMA, _STEPS)
            return self._shared, False
        return open_tables(self._target, "oidc_flows", _SCHEMA, _STEPS)
