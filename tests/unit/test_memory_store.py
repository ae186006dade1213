"""The memory store (on SQLite and on PostgreSQL): each owner's memories, newest first, only ever the owner's
to read, change or delete; bounded per owner; memory turned off per owner."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ragapp.store.memories import MemoryStore

Target = Callable[[str], Any]


def test_memories_belong_to_their_owner(store_target: Target) -> None:
    store = MemoryStore(store_target("memories")).start()
    first = store.add("user:ann", "I use the V2 Pro", "said", False, 10)
    second = store.add("user:ann", "Answer in Chinese", "accepted", True, 10)
    assert first is not None and second is not None
    assert [m.text for m in store.list("user:ann")] == ["Answer in Chinese", "I use the V2 Pro"]  # newest first
    assert store.list("user:ann")[0].screened and store.list("user:ann")[0].source == "accepted"
    assert store.count("user:ann") == 2 and store.list("user:bob") == [] and store.count("user:bob") == 0
    assert store.get("user:bob", first.id) is None
    assert store.edit("user:bob", first.id, "mine now", False) is False
    assert store.delete("user:bob", first.id) is False
    assert store.get("user:ann", first.id) is not None
    assert store.edit("user:ann", first.id, "I use the V1", False)
    edited = store.get("user:ann", first.id)
    assert edited is not None and edited.text == "I use the V1" and edited.source == "edited"
    assert store.delete("user:ann", first.id) and store.get("user:ann", first.id) is None
    store.close()


def test_an_owner_keeps_at_most_the_limit(store_target: Target) -> None:
    store = MemoryStore(store_target("memories")).start()
    assert store.add("user:ann", "one", "said", False, 2) is not None
    assert store.add("user:ann", "two", "said", False, 2) is not None
    assert store.add("user:ann", "three", "said", False, 2) is None
    assert store.add("user:bob", "his own", "said", False, 2) is not None  # per owner
    assert store.count("user:ann") == 2
    store.close()


def test_memory_is_on_until_the_owner_turns_it_off(store_target: Target) -> None:
    store = MemoryStore(store_target("memories")).start()
    assert store.enabled("user:ann")
    store.set_enabled("user:ann", False)
    assert not store.enabled("user:ann") and store.enabled("user:bob")
    store.set_enabled("user:ann", True)
    assert store.enabled("user:ann")
    store.close()
