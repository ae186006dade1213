"""Procedural memory's table on SQLite and PostgreSQL: a rating keeps or replaces an answer's verdict, a re-ask only
fills in a missing one, tallies count per mode and per agent tool, and the oldest rows go past the bound."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ragapp.core.events import Tally
from ragapp.store.procedural import Outcome, ProceduralStore


@pytest.fixture
def store(store_target: Callable[[str], Any]) -> Iterator[ProceduralStore]:
    opened = ProceduralStore(store_target("procedural"), max_outcomes=10).start()
    yield opened
    opened.close()


def test_ratings_count_per_mode_and_per_agent_tool(store: ProceduralStore) -> None:
    store.record(Outcome("t1", "comparison", "agent", "up", ("search_knowledge", "read_chunk")))
    store.record(Outcome("t2", "comparison", "agent", "down", ("search_knowledge",)))
    store.record(Outcome("t3", "comparison", "workflow", "down"))
    store.record(Outcome("t4", "single", "workflow", "up", leaf="battery"))

    modes, tools = store.tallies("comparison")
    assert modes == (Tally("agent", 1, 2), Tally("workflow", 0, 1))
    assert tools == (Tally("read_chunk", 1, 1), Tally("search_knowledge", 1, 2))
    assert store.tallies("single") == ((Tally("workflow", 1, 1),), ())
    assert store.tallies("bridge") == ((), ())
    assert [(r.kind, r.leaf, r.mode, r.kept, r.answers) for r in store.table()] == [
        ("comparison", "", "agent", 1, 2),
        ("comparison", "", "workflow", 0, 1),
        ("single", "battery", "workflow", 1, 1),
    ]


def test_a_later_rating_replaces_the_verdict_and_a_reask_never_does(store: ProceduralStore) -> None:
    store.record(Outcome("t1", "single", "workflow", "down"))
    store.record(Outcome("t1", "single", "workflow", "up"))  # the user changed their mind
    store.record(Outcome("t1", "single", "workflow", "reask"))  # asked again: the thumbs up stands
    assert store.tallies("single")[0] == (Tally("workflow", 1, 1),)

    store.record(Outcome("t2", "single", "workflow", "reask"))  # no rating: asking again is a verdict
    assert store.tallies("single")[0] == (Tally("workflow", 1, 2),)
    store.record(Outcome("t2", "single", "workflow", "up"))  # then a thumbs up on it wins
    assert store.tallies("single")[0] == (Tally("workflow", 2, 2),)


def test_the_oldest_outcomes_go_past_the_bound(store: ProceduralStore) -> None:
    for i in range(14):
        store.record(Outcome(f"t{i}", "single", "workflow", "up" if i >= 4 else "down"))
    assert store.tallies("single")[0] == (Tally("workflow", 10, 10),)  # the four thumbs down were the oldest
