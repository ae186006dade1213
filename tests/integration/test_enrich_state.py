"""What the background enrichment keeps in the catalog's database, on SQLite and on a shared PostgreSQL: one
replica at a time holds a base's lease, a lease that ran out is taken over, a pause and the pace are read back by
whoever opens the tables next (another replica, or the same one after a restart)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.db import Database, SqliteDatabase
from ragapp.enrich.state import EnrichState

pytestmark = pytest.mark.integration


def _database(store_target: Callable[[str], Any]) -> Database:
    target = store_target("catalog")
    return SqliteDatabase(target) if isinstance(target, Path) else target


def test_one_replica_holds_a_base_and_a_pause_outlives_a_restart(store_target: Callable[[str], Any]) -> None:
    db = _database(store_target)
    one, two = EnrichState(db).start(), EnrichState(db).start()  # two replicas over one catalog

    assert one.take("manuals", "replica-1", 60.0)
    assert not two.take("manuals", "replica-2", 60.0)  # held: the other replica leaves the base alone
    assert two.holder("manuals") == "replica-1"
    assert two.take("faq", "replica-2", 60.0)  # another base is free
    assert one.renew("manuals", "replica-1", 60.0) and not two.renew("manuals", "replica-2", 60.0)
    one.release("manuals", "replica-1")
    assert two.holder("manuals") is None and two.take("manuals", "replica-2", 60.0)

    assert two.take("ran-out", "replica-2", -1.0)  # a lease already out: its replica died
    assert one.take("ran-out", "replica-1", 60.0)
    assert not two.renew("ran-out", "replica-2", 60.0)  # the dead one's renewal is refused

    one.set_paused("manuals", True)
    one.set_pace("manuals", "vectors", 14.5)
    again = EnrichState(db).start()  # a restart: the tables are read back
    assert again.is_paused("manuals") and again.paused() == {"manuals"} and not again.is_paused("faq")
    assert again.pace("manuals") == {"vectors": 14.5}
    again.set_paused("manuals", False)
    assert not one.is_paused("manuals") and one.paused() == set()
