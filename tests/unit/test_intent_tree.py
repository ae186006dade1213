"""The intent tree: validation messages, the YAML/JSON exchange format, and the store (SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.router.store import IntentStore
from ragapp.router.tree import IntentNode, IntentTree, IntentTreeError, dump_tree, parse_tree

REPO = Path(__file__).resolve().parents[2]
SMALL = """
intents:
  - code: products
    name: Products
    children:
      - {code: a.specs, name: Specs, kind: KB, knowledge_bases: [kb-a], examples: ["How fast is A?"]}
      - {code: b.specs, name: Specs, kind: kb, knowledge_bases: [kb-b], top_k: 3}
  - {code: hello, name: Greeting, kind: SYSTEM, prompt: Say hi.}
"""


def small() -> IntentTree:
    return parse_tree(SMALL)


def test_demo_tree_is_valid_and_has_both_kinds() -> None:
    tree = parse_tree((REPO / "data" / "intents" / "demo.yaml").read_text("utf-8"))
    assert tree.problems({"demo"}) == []
    kinds = {leaf.kind for leaf in tree.leaves()}
    assert kinds == {"KB", "SYSTEM"}
    assert tree.full_path("lumen-v1.specs") == "Products · 产品 > Lumen V1 · 流明 V1 > Specs and battery · 规格与续航"


def test_parse_reads_nested_yaml_and_normalises_kind() -> None:
    tree = small()
    assert [n.code for n in tree.nodes()] == ["products", "a.specs", "b.specs", "hello"]
    assert tree.get("b.specs") == IntentNode(
        "b.specs", "Specs", "products", kind="KB", kbs=("kb-b",), top_k=3, position=1
    )
    assert [leaf.code for leaf in tree.leaves(["SYSTEM"])] == ["hello"]


@pytest.mark.parametrize(
    ("nodes", "message"),
    [
        ([IntentNode("a", "A", kind="KB", kbs=("x",)), IntentNode("a", "A2", kind="SYSTEM")], "used more than once"),
        ([IntentNode("Bad Code!", "A", kind="SYSTEM")], "is not valid"),
        ([IntentNode("a", "  ", kind="SYSTEM")], "needs a name"),
        ([IntentNode("a", "A", parent="ghost", kind="SYSTEM")], "does not exist"),
        ([IntentNode("a", "A", parent="b"), IntentNode("b", "B", parent="a")], "cycle"),
        ([IntentNode("a", "A")], "needs a kind"),
        ([IntentNode("a", "A", kind="KB")], "needs at least one knowledge base"),
        ([IntentNode("a", "A", kind="KB", kbs=("nope",))], "do not exist: nope"),
        ([IntentNode("a", "A", kind="SYSTEM", kbs=("x",))], "remove its knowledge bases"),
        ([IntentNode("a", "A", kind="KB", kbs=("x",), top_k=99)], "top-k 99"),
        ([IntentNode("g", "G", kind="KB", kbs=("x",)), IntentNode("c", "C", parent="g", kind="SYSTEM")], "is a group"),
    ],
)
def test_validation_names_each_problem(nodes: list[IntentNode], message: str) -> None:
    problems = IntentTree(nodes).problems(known_kbs={"x"})
    assert any(message in p for p in problems), problems
    with pytest.raises(IntentTreeError, match="was not changed"):
        IntentTree(nodes).validated({"x"})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("intents: [", "not valid YAML or JSON"),
        ("{}", "no 'intents' list"),
        ("intents: {a: 1}", "must be a list"),
        ("intents: [{name: A}]", "needs a 'code'"),
        ("intents: [{code: a, name: A, kind: MAYBE}]", "must be KB or SYSTEM"),
        ("intents: [{code: a, name: A, kind: KB, top_k: many}]", "whole number"),
        ("intents: [{code: a, name: A, colour: red}]", "unknown field(s): colour"),
        ("intents: [{code: a, name: A, children: 3}]", "'children' must be a list"),
    ],
)
def test_bad_files_are_refused_with_a_reason(text: str, message: str) -> None:
    with pytest.raises(IntentTreeError) as caught:
        parse_tree(text)
    assert any(message in p for p in caught.value.problems), caught.value.problems


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_export_then_import_gives_the_same_tree(fmt: str) -> None:
    tree = small()
    again = parse_tree(dump_tree(tree, fmt), fmt)  # type: ignore[arg-type]
    assert again.nodes() == tree.nodes()
    assert "中文" in dump_tree(IntentTree([IntentNode("z", "中文", kind="SYSTEM")]), fmt)  # type: ignore[arg-type]


def test_store_edits_validate_persist_and_drop_the_cache(store_target: Callable[[str], Any]) -> None:
    store = IntentStore(store_target("intents"), known_kbs=lambda: {"kb-a", "kb-b"}).start()
    store.replace(small())
    store.tree()
    assert store.cached is True
    store.save(IntentNode("c.specs", "Specs", "products", kind="KB", kbs=("kb-a",)))
    assert store.cached is False  # dropped by the edit, re-read on demand
    assert [n.code for n in store.tree().children("products")] == ["a.specs", "b.specs", "c.specs"]

    # rename keeps the position; move re-parents; delete takes the subtree
    store.save(IntentNode("a.specs2", "Specs", "products", kind="KB", kbs=("kb-a",)), replacing="a.specs")
    assert [n.code for n in store.tree().children("products")] == ["a.specs2", "b.specs", "c.specs"]
    store.move("hello", "products")
    assert store.tree().get("hello").parent == "products"  # type: ignore[union-attr]
    assert store.delete("products") == 5
    assert len(store.tree()) == 0
    store.close()

    reopened = IntentStore(store_target("intents")).start()
    assert len(reopened.tree()) == 0 and reopened.seeded  # an emptied tree stays empty: no re-seeding
    assert reopened.seed(small()) is False
    reopened.close()


def test_failed_edits_change_nothing(store_target: Callable[[str], Any]) -> None:
    store = IntentStore(store_target("intents"), known_kbs=lambda: {"kb-a", "kb-b"}).start()
    store.replace(small())
    before = store.tree().nodes()
    bad_edits = [
        lambda: store.save(IntentNode("x", "X", kind="KB", kbs=("missing-kb",))),
        lambda: store.save(IntentNode("hello", "Greeting", kind="SYSTEM"), replacing="ghost"),
        lambda: store.save(IntentNode("b.specs", "Specs", "products", kind="KB", kbs=("kb-a",)), replacing="a.specs"),
        lambda: store.move("products", "a.specs"),  # under its own child: a cycle (and a leaf with children)
        lambda: store.delete("ghost"),
        lambda: store.replace(IntentTree([IntentNode("q", "Q")])),
    ]
    for edit in bad_edits:
        with pytest.raises(IntentTreeError):
            edit()
        assert store.tree().nodes() == before
    store.close()


def test_a_leaf_that_receives_a_child_becomes_a_group_in_the_same_edit(store_target: Callable[[str], Any]) -> None:
    store = IntentStore(store_target("intents"), known_kbs=lambda: {"kb-a", "kb-b"}).start()
    store.replace(small())
    store.save(IntentNode("hello.morning", "Good morning", "hello", kind="SYSTEM"))
    tree = store.tree()
    assert tree.get("hello") == IntentNode("hello", "Greeting", position=1)  # kind and prompt cleared
    assert [n.code for n in tree.leaves(["SYSTEM"])] == ["hello.morning"]
    with pytest.raises(IntentTreeError, match="cycle"):  # but never under its own subtree
        store.move("products", "a.specs")
    store.close()
