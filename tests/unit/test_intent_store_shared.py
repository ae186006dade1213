"""The intent store shared by replicas: each replica caches the tree, sees the others' edits at its next read,
and edits under one lock against the tree as stored, so concurrent edits never leave a tree that fails
validation and the demo tree is seeded once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ragapp.db import Database, open_database
from ragapp.router.store import IntentStore
from ragapp.router.tree import IntentNode, IntentTree, IntentTreeError

KBS = {"kb-a", "kb-b"}
TREE = IntentTree(
    [
        IntentNode("products", "Products"),
        IntentNode("a.specs", "Specs A", "products", kind="KB", kbs=("kb-a",)),
        IntentNode("b.specs", "Specs B", "products", kind="KB", kbs=("kb-b",), position=1),
        IntentNode("hello", "Greeting", kind="SYSTEM", position=1),
    ]
)


@pytest.fixture
def replicas(postgres_url: str) -> Iterator[tuple[IntentStore, IntentStore]]:
    """Two stores on one PostgreSQL database, each through its own connection pool, as two app replicas."""
    dbs: list[Database] = [open_database(postgres_url, pool_size=2) for _ in range(2)]
    yield IntentStore(dbs[0], known_kbs=lambda: KBS).start(), IntentStore(dbs[1], known_kbs=lambda: KBS).start()
    for db in dbs:
        db.close()


def _together(*edits: Callable[[], object]) -> list[object]:
    """Run the edits at once, one thread each: what each returned, or the exception it raised."""
    results: list[object] = [None] * len(edits)
    start = threading.Barrier(len(edits))

    def run(i: int) -> None:
        start.wait()
        try:
            results[i] = edits[i]()
        except Exception as exc:  # the outcome under test
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(edits))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


def test_an_edit_through_one_store_shows_in_another_and_moves_its_version(
    store_target: Callable[[str], Any],
) -> None:
    one = IntentStore(store_target("intents"), known_kbs=lambda: KBS).start()
    other = IntentStore(store_target("intents"), known_kbs=lambda: KBS).start()
    one.replace(TREE)
    assert other.tree().nodes() == TREE.nodes() and other.cached
    seen = other.version

    one.save(IntentNode("c.specs", "Specs C", "products", kind="KB", kbs=("kb-a",), position=2))
    assert other.version > seen  # without reading the tree
    assert [n.code for n in other.tree().children("products")] == ["a.specs", "b.specs", "c.specs"]
    seen = other.version
    assert other.version == seen and other.tree() is other.tree()  # nothing changed: the cache serves

    with pytest.raises(IntentTreeError):
        one.delete("ghost")
    assert other.version == seen  # a refused edit changes nothing, and nothing says it did
    one.delete("hello")
    assert other.version > seen and "hello" not in other.tree()
    one.close()
    other.close()


def test_an_edit_is_checked_against_the_tree_as_stored_not_a_stale_cache(
    replicas: tuple[IntentStore, IntentStore],
) -> None:
    one, other = replicas
    one.replace(TREE)
    assert len(other.tree()) == 4  # cached
    one.delete("a.specs")
    with pytest.raises(IntentTreeError, match="'products' needs a kind"):  # its only child now
        other.delete("b.specs")
    with pytest.raises(IntentTreeError, match=r"no intent 'a\.specs' to edit"):
        other.save(IntentNode("a.specs", "Specs A2", "products", kind="KB", kbs=("kb-a",)), replacing="a.specs")
    tree, made_group = other.saved(IntentNode("hello.hi", "Hi", "hello", kind="SYSTEM"), new=True)
    assert made_group == TREE.get("hello") and tree.get("hello").kind is None  # type: ignore[union-attr]
    assert one.tree().nodes() == tree.nodes()


def test_conflicting_edits_from_two_replicas_at_once_end_in_a_valid_tree(
    replicas: tuple[IntentStore, IntentStore],
) -> None:
    one, other = replicas
    for _round in range(10):
        # Each deletion alone is fine; both would leave "products" a group without children (invalid).
        one.replace(TREE)
        outcomes = _together(lambda: one.delete("a.specs"), lambda: other.delete("b.specs"))
        assert sorted(type(o).__name__ for o in outcomes) == ["IntentTreeError", "int"], outcomes
        assert [n.code for n in other.tree().children("products")] in (["a.specs"], ["b.specs"])
        assert one.tree().problems(KBS) == [] and one.tree().nodes() == other.tree().nodes()

        # Two replicas adding the same new code: one wins, the other is refused (never overwritten).
        outcomes = _together(
            lambda: one.add(IntentNode("new", "New one", kind="SYSTEM")),
            lambda: other.add(IntentNode("new", "New two", kind="SYSTEM")),
        )
        refused = [o for o in outcomes if isinstance(o, IntentTreeError)]
        assert len(refused) == 1 and "already used" in str(refused[0]), outcomes
        winner = one.tree().get("new")
        assert winner is not None and winner.name in ("New one", "New two") and one.tree().problems(KBS) == []


def test_replicas_starting_together_seed_the_tree_once(replicas: tuple[IntentStore, IntentStore]) -> None:
    one, other = replicas
    assert not one.seeded and not other.seeded
    results = _together(lambda: one.seed(TREE), lambda: other.seed(TREE))
    assert sorted(results) == [False, True]  # type: ignore[type-var]
    assert one.tree().nodes() == TREE.nodes() and one.seeded and other.seeded
    seen = one.version
    assert other.seed(IntentTree([IntentNode("x", "X", kind="SYSTEM")])) is False
    other.delete("products")
    assert one.seed(TREE) is False and "products" not in one.tree()  # an emptied-out tree is not re-seeded
    assert one.version > seen
