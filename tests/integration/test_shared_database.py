"""An engine whose relational stores live in PostgreSQL (``RAGAPP_STORE__DATABASE_URL``), with the keyword index
in PostgreSQL full text too (``RAGAPP_STORE__KEYWORDS=postgres``): ingest, search through both channels, a
second engine on the same database (another replica) seeing the first one's documents and chats, and the
settings that cannot work together refused with a message."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ragapp.core.errors import ConfigError
from ragapp.db import open_database
from ragapp.engine.build import build_engine
from ragapp.store.catalog import Catalog

if TYPE_CHECKING:
    from conftest import Rig

pytestmark = pytest.mark.integration

KETTLE = "The Orion kettle gateway password is osprey. Rinse the Orion kettle filter every 14 days.\n"


def test_one_database_serves_two_engines_and_keyword_search(
    postgres_url: str, make_engine: Callable[..., Rig], tmp_path: Path
) -> None:
    shared = {"store": {"database_url": postgres_url, "keywords": "postgres"}}
    first = make_engine("first", **shared)
    path = tmp_path / "kettle.txt"
    path.write_text(KETTLE, "utf-8")
    (added,) = first.engine.library.ingest([(path, "kettle.txt")])
    assert added.status == "added", added.message
    stray = tmp_path / "stray.txt"  # a stray NUL byte: PostgreSQL's text cannot hold it, the upload still works
    stray.write_bytes(b"The Vega router reboots every 30 days.\x00 Its lamp is green.\n")
    (kept,) = first.engine.library.ingest([(stray, "stray.txt")])
    assert kept.status == "added", kept.message
    database = open_database(postgres_url, pool_size=1)
    try:
        assert all("\x00" not in c.text for c in Catalog(database).start().all_chunks())
    finally:
        database.close()
    assert not (first.state_dir / "catalog.sqlite3").exists()  # nothing relational in the state dir

    # Another replica: its own state dir and embedded vectors, the same database. Its start reconciles: it
    # embeds the catalog's chunks into its own vector store, and finds the keyword index already current.
    second = make_engine("second", **shared)
    result = second.engine.chat.retrieve("What is the Orion kettle gateway password?")
    hits = {r.channel: {h.chunk_id for h in r.hits} for r in result.channel_results}
    (chunk_id,) = {c.chunk.chunk_id for c in result.chunks}
    assert hits["keyword"] == {chunk_id} and chunk_id in hits["vector"]
    assert sorted(d.name for d in second.engine.library.documents()) == ["kettle.txt", "stray.txt"]

    # A delete through the second is gone from the first's search, keyword channel included.
    second.engine.library.delete(added.doc_id)
    again = first.engine.chat.retrieve("What is the Orion kettle gateway password?")
    assert again.chunks == () and all(not r.hits for r in again.channel_results if r.channel == "keyword")


def test_postgres_keywords_need_a_database(make_settings: Callable[..., object]) -> None:
    settings = make_settings(store={"keywords": "postgres"})
    with pytest.raises(ConfigError, match="RAGAPP_STORE__DATABASE_URL"):
        build_engine(settings)  # type: ignore[arg-type]


# Behind `slow` (make test-slow, which CI runs after make test): one of the longest tests of the default run,
# which must stay under 10 minutes on 2 cores; faster tests in the default run cover the same code paths.
@pytest.mark.slow
def test_a_database_that_does_not_answer_stops_the_start_with_the_setting_named(
    make_settings: Callable[..., object],
) -> None:
    from ragcluster.services import free_port

    url = f"postgresql://ragapp:hunter2@127.0.0.1:{free_port()}/ragapp"  # nothing listens there
    settings = make_settings(store={"database_url": url})
    with pytest.raises(ConfigError, match="RAGAPP_STORE__DATABASE_URL") as caught:
        build_engine(settings)  # type: ignore[arg-type]
    assert "hunter2" not in str(caught.value)  # the password is never shown


def test_two_replicas_demoting_the_last_two_admins_at_once_leave_one(
    postgres_url: str, make_engine: Callable[..., Rig], tmp_path: Path
) -> None:
    import threading

    from ragapp.accounts.model import AdminError
    from ragapp.accounts.store import UserStore
    from ragapp.core.access import Actor

    users = tmp_path / "users.json"  # taken into the database by the first replica
    seed = UserStore(users, 4)
    for name, role in (("boss", "admin"), ("eddie", "admin"), ("rita", "reader")):
        seed.add(name, f"{name}'s long password", role)
    auth = {"enabled": True, "users_file": users, "bcrypt_rounds": 4}
    shared = {"store": {"database_url": postgres_url}, "auth": auth}
    first, second = make_engine("first", **shared), make_engine("second", **shared)
    start = threading.Barrier(2)
    outcomes: dict[str, str] = {}

    def demote(rig: Rig, who: str, by: str) -> None:
        start.wait()
        try:
            rig.engine.admin.set_role(who, "reader", actor=Actor(by, "admin"))
            outcomes[who] = "demoted"
        except AdminError as exc:
            outcomes[who] = str(exc)

    threads = [
        threading.Thread(target=demote, args=(first, "boss", "eddie")),
        threading.Thread(target=demote, args=(second, "eddie", "boss")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    demoted = [who for who, outcome in outcomes.items() if outcome == "demoted"]
    refused = [outcome for outcome in outcomes.values() if "is the last admin" in outcome]
    assert len(demoted) == 1 and len(refused) == 1, outcomes
    admins = [u.name for u in first.engine.admin.users(actor=Actor("boss", "admin")) if u.role == "admin"]
    assert len(admins) == 1
